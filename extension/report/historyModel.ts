/**
 * The History tab's model: what its chart draws for each run (the median and the spread
 * around it, scaled to the chart), the run references the webview may send, and the names of
 * the diff editor's documents. Pure (no `vscode`, no DOM), so node:test checks it.
 */
import type { CompareResult, HistoryResult, HistoryRun } from "../generated/wire";

/** A run reference the webview may send: an id, `-1`, `-2`…, or `baseline`. */
export function isRunRef(value: unknown): value is string {
  return typeof value === "string" && /^(-?[1-9][0-9]{0,8}|baseline)$/.test(value);
}

/** One run on the chart, in the chart's pixels (y grows downwards). */
export interface ChartPoint {
  id: string;
  x: number;
  /** The median's y. */
  y: number;
  /** The spread's ends (first and third quartiles, else median ± spread). */
  yLow: number;
  yHigh: number;
  medianMs: number;
  baseline: boolean;
  /** The verdict against the run before: `faster`, `slower`, `same`, or none for the first. */
  verdict: "faster" | "slower" | "same" | null;
}

/** The chart: one point per run, and the y axis's ticks (ms). */
export interface ChartModel {
  points: ChartPoint[];
  ticks: { y: number; label: string }[];
  width: number;
  height: number;
}

/** The spread of a run as [low, high] milliseconds: its quartiles, else median ± spread. */
export function spreadMs(run: HistoryRun): [number, number] {
  const t = run.timing;
  if (t.q1_ms !== undefined && t.q3_ms !== undefined) {
    return [t.q1_ms, t.q3_ms];
  }
  const half = (t.median_ms * (t.spread_pct ?? 0)) / 100;
  return [t.median_ms - half, t.median_ms + half];
}

function niceStep(range: number): number {
  const raw = range / 4;
  const power = 10 ** Math.floor(Math.log10(raw));
  const unit = raw / power;
  return (unit <= 1 ? 1 : unit <= 2 ? 2 : unit <= 5 ? 5 : 10) * power;
}

/** `0.383 ms`, `12.4 µs`, `1.25 s`: three significant digits. */
export function formatRunMs(ms: number): string {
  if (ms >= 1000) {
    return `${(ms / 1000).toPrecision(3)} s`;
  }
  if (ms >= 0.1) {
    return `${ms.toPrecision(3)} ms`;
  }
  return `${(ms * 1000).toPrecision(3)} µs`;
}

/**
 * The chart of the medians with their spread: runs left to right, oldest first; the y axis
 * from 0 to a little above the highest spread (a time chart that does not start at 0 makes a
 * 2% change look like a halving).
 */
export function chartModel(history: HistoryResult, width = 560, height = 180): ChartModel {
  const pad = { left: 56, right: 12, top: 10, bottom: 22 };
  const runs = history.runs;
  const top = Math.max(1e-9, ...runs.map((r) => spreadMs(r)[1]));
  const step = niceStep(top);
  const max = Math.ceil((top * 1.05) / step) * step;
  const plotW = width - pad.left - pad.right;
  const plotH = height - pad.top - pad.bottom;
  const y = (ms: number): number => pad.top + plotH * (1 - Math.max(0, ms) / max);
  const x = (i: number): number =>
    runs.length === 1 ? pad.left + plotW / 2 : pad.left + (plotW * i) / (runs.length - 1);
  const points = runs.map((run, i): ChartPoint => {
    const [low, high] = spreadMs(run);
    const v = run.verdict ?? null;
    return {
      id: run.id,
      x: x(i),
      y: y(run.timing.median_ms),
      yLow: y(low),
      yHigh: y(high),
      medianMs: run.timing.median_ms,
      baseline: run.id === history.baseline,
      verdict: v === null ? null : !v.significant ? "same" : v.change_pct < 0 ? "faster" : "slower",
    };
  });
  const ticks = [];
  for (let ms = 0; ms <= max + step / 2; ms += step) {
    ticks.push({ y: y(ms), label: ms === 0 ? "0" : formatRunMs(ms) });
  }
  return { points, ticks, width, height };
}

/** A run's one-line description: `run 3 · 0.192 ms ±0.3% · 1 kernel · NVIDIA H200 · a1b2c3d4+dirty`. */
export function runLabel(run: HistoryRun): string {
  const t = run.timing;
  const parts = [
    `run ${run.id}`,
    `${formatRunMs(t.median_ms)} ±${(t.spread_pct ?? 0).toFixed(1)}%`,
  ];
  if (run.device_kind === "cuda") {
    parts.push(`${run.kernel_count} kernel${run.kernel_count === 1 ? "" : "s"}`);
  }
  parts.push(run.device ?? "?");
  if (run.git !== null) {
    parts.push(`${run.git.commit.slice(0, 8)}${run.git.dirty ? "+dirty" : ""}`);
  }
  return parts.join(" · ");
}

/** URI scheme of the diff editor's documents (a run's function text, the current text). */
export const HISTORY_SCHEME = "kernel-lens-history";

/**
 * The path of the document holding one side of a diff: `/<function> run 3.py` or
 * `/<function> (now).py` (the `.py` gives it Python's colouring); `key` keeps documents of
 * different files apart.
 */
export function historyDocPath(fn: string, run: string | null, key: string): string {
  const safe = fn.replace(/[^A-Za-z0-9_.]/g, "_");
  return `/${key}/${safe} ${run === null ? "(now)" : `run ${run}`}.py`;
}

/** The diff editor's title: `square: run 3 ↔ now`. */
export function diffTitle(fn: string, run: string): string {
  return `${fn}: run ${run} ↔ now`;
}

/** `2 runs could not be read: run 7: not a run (no timing.median_ms); …` for the store's runs
 * that the server could not read (issue 26), or null when every run was read. */
export function unreadableText(history: Pick<HistoryResult, "unreadable">): string | null {
  const unreadable = (history.unreadable ?? []).filter((why) => why.trim() !== "");
  if (unreadable.length === 0) {
    return null;
  }
  const n = unreadable.length;
  return `${n} run${n === 1 ? "" : "s"} could not be read: ${unreadable.join("; ")}`;
}

/** `Run 3 against run 1`, `Run 3 against baseline (run 1)`: the reference run named once. */
export function comparisonHeading(
  c: Pick<CompareResult, "after" | "before" | "reference">,
): string {
  const named = c.reference === `run ${c.before.id}`;
  return `Run ${c.after.id} against ${c.reference}${named ? "" : ` (run ${c.before.id})`}`;
}
