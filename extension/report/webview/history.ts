/**
 * The History tab: every kept run of the function, oldest first. A chart of the medians with
 * their spread (the baseline marked), each run's verdict against the run before, and per run a
 * button that opens VS Code's diff editor between that run's text and the text now, one that
 * pins it as the baseline, and one that compares it with the latest run, per line and per
 * kernel side by side.
 */
import type {
  CompareResult,
  CompareVerdict,
  HistoryResult,
  HistoryRun,
} from "../../generated/wire";
import { noBidi } from "./format";
import {
  chartModel,
  comparisonHeading,
  formatRunMs,
  runLabel,
  unreadableText,
  type ChartModel,
} from "../historyModel";
import { button, el, table } from "./dom";
import { peakSuffix } from "./memoryModel";

const SVG = "http://www.w3.org/2000/svg";

/** What the History tab's buttons ask for. */
export interface HistoryActions {
  onDiff(run: string): void;
  onSetBaseline(run: string): void;
  onCompare(before: string, after: string): void;
}

function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number>,
  children: readonly SVGElement[] = [],
): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) {
    node.setAttribute(name, String(value));
  }
  node.append(...children);
  return node;
}

/** The chart of medians with their spread (an SVG: no script draws it, it scales itself). */
function chart(model: ChartModel): SVGSVGElement {
  const parts: SVGElement[] = [];
  const right = model.width - 12;
  for (const tick of model.ticks) {
    parts.push(svg("line", { x1: 56, x2: right, y1: tick.y, y2: tick.y, class: "grid" }));
    const label = svg("text", { x: 50, y: tick.y + 4, class: "tick", "text-anchor": "end" });
    label.textContent = tick.label;
    parts.push(label);
  }
  const line = model.points.map((p) => `${p.x},${p.y}`).join(" ");
  if (model.points.length > 1) {
    parts.push(svg("polyline", { points: line, class: "median-line" }));
  }
  for (const p of model.points) {
    parts.push(svg("line", { x1: p.x, x2: p.x, y1: p.yLow, y2: p.yHigh, class: "spread" }));
    const dot = svg("circle", {
      cx: p.x,
      cy: p.y,
      r: p.baseline ? 6 : 4,
      class: `run ${p.verdict ?? "first"}${p.baseline ? " baseline" : ""}`,
    });
    const title = document.createElementNS(SVG, "title");
    title.textContent = noBidi(
      `run ${p.id}: ${formatRunMs(p.medianMs)}${p.baseline ? " (baseline)" : ""}`,
    );
    dot.append(title);
    parts.push(dot);
    const label = svg("text", {
      x: p.x,
      y: model.height - 6,
      class: "tick",
      "text-anchor": "middle",
    });
    label.textContent = noBidi(p.id);
    parts.push(label);
  }
  return svg(
    "svg",
    {
      viewBox: `0 0 ${model.width} ${model.height}`,
      class: "history-chart",
      role: "img",
      "aria-label": "median time of each run, with its spread",
    },
    parts,
  );
}

/** The four-way verdict; runs stored before it existed are read from `significant`. */
function verdictKind(v: CompareVerdict): string {
  return v.kind ?? (!v.significant ? "same" : v.change_pct < 0 ? "faster" : "slower");
}

function verdictCell(run: HistoryRun): HTMLElement {
  const v = run.verdict ?? null;
  if (v === null) {
    return el("span", { className: "muted", text: "first run" });
  }
  const kind = verdictKind(v);
  const how =
    v.p_value === null
      ? v.method === "iqr"
        ? "judged on the interquartile ranges (no raw samples)"
        : "too few samples to test"
      : `Mann–Whitney p = ${v.p_value.toPrecision(2)}`;
  return el("span", { className: `verdict ${kind}`, text: v.text, title: how });
}

function when(run: HistoryRun): string {
  return run.time === null ? "" : run.time.replace("T", " ").replace(/\+00:00$/, " UTC");
}

/** The History tab of a function with no run yet (or whose history cannot be read). */
export function noHistory(fn: string, unreadable: boolean): HTMLElement {
  return el("section", { className: "empty" }, [
    el("p", {
      text: unreadable
        ? "The history of this function could not be read; see the output (Kernel Lens: Show Output)."
        : `No run of ${fn} is kept yet: each Profile is kept here, compared with the one before.`,
    }),
  ]);
}

/** The store's runs the server could not read, named with why (issue 26), or null. */
function unreadableNote(history: HistoryResult): HTMLElement | null {
  const text = unreadableText(history);
  return text === null
    ? null
    : el("p", { className: "history-unreadable", text, attrs: { role: "status" } });
}

/** Compare two runs, the older (lower id) as the one before. */
function compareInOrder(actions: HistoryActions, a: string, b: string): void {
  const [before, after] = Number(a) <= Number(b) ? [a, b] : [b, a];
  actions.onCompare(before, after);
}

/** The run each row's Compare is put against (`null`: the latest); kept across renders. */
let compareAgainst: string | null = null;

/** The History tab. */
export function historyView(
  history: HistoryResult,
  comparison: CompareResult | undefined,
  actions: HistoryActions,
): HTMLElement {
  const unreadable = unreadableNote(history);
  if (history.runs.length === 0) {
    const empty = noHistory(history.function, false);
    if (unreadable !== null) {
      empty.append(unreadable);
    }
    return empty;
  }
  const latest = history.runs[history.runs.length - 1]?.id ?? "-1";
  // Any two runs: each row's Compare puts that run against the one chosen here (the latest by
  // default), per line and per kernel.
  const reference = history.runs.some((r) => r.id === compareAgainst) ? compareAgainst : latest;
  const picker = el(
    "select",
    { attrs: { "aria-label": "Compare against run" } },
    [...history.runs].reverse().map((run) =>
      el("option", {
        text: `run ${run.id}${run.id === latest ? " (latest)" : ""} · ${formatRunMs(run.timing.median_ms)}`,
        attrs: { value: run.id },
      }),
    ),
  );
  picker.value = reference ?? latest;
  picker.addEventListener("change", () => {
    compareAgainst = picker.value;
  });
  const rows = [...history.runs].reverse().map((run) => {
    const pinned = run.id === history.baseline;
    return [
      el("span", { text: run.id + (pinned ? " 📌" : ""), title: runLabel(run) }),
      when(run),
      `${formatRunMs(run.timing.median_ms)} ±${(run.timing.spread_pct ?? 0).toFixed(1)}%` +
        peakSuffix(run),
      verdictCell(run),
      run.device_kind === "cuda" ? String(run.kernel_count) : "–",
      el("span", {
        className: "muted",
        text:
          run.git === null
            ? "no git"
            : `${run.git.commit.slice(0, 8)}${run.git.dirty ? " +dirty" : ""}`,
      }),
      el("span", { className: "buttons" }, [
        button("Diff", () => actions.onDiff(run.id), {
          title: `open run ${run.id}'s text of ${history.function} beside its text now`,
        }),
        pinned
          ? null
          : button("Set as Baseline", () => actions.onSetBaseline(run.id), {
              title: "later runs are compared with this one; the lenses say so",
            }),
        button("Compare", () => compareInOrder(actions, run.id, compareAgainst ?? latest), {
          title: `run ${run.id} against the run chosen in "Compare against", per line and per kernel`,
        }),
      ]),
    ];
  });
  const baseline = history.runs.find((r) => r.id === history.baseline);
  return el("section", { className: "history" }, [
    unreadable,
    el("p", {
      className: "muted",
      text:
        `${history.runs.length} run${history.runs.length === 1 ? "" : "s"} kept` +
        (baseline === undefined
          ? "; the lenses compare each profile with the one before"
          : `; the lenses compare with the baseline, run ${baseline.id} (${formatRunMs(baseline.timing.median_ms)})`) +
        ". A change is called at p < 0.01 (Mann–Whitney) and ≥ 1%, then faster or slower; ≈ same only when a change past ±5% is ruled out; else too noisy to tell (the interval is too wide, a run drifted or split in two while timed, or a busy machine could explain it: collect more with Re-profile longer).",
    }),
    el("div", { className: "history-chart-box" }, [chart(chartModel(history))]),
    el("div", { className: "toolbar" }, [el("label", { text: "Compare against " }), picker]),
    table(
      ["run", "when", "median", "vs the run before", "kernels", "commit", ""],
      rows,
      "history-table",
    ),
    comparison === undefined ? null : comparisonView(comparison),
  ]);
}

function us(value: number): string {
  return value === 0 ? "–" : formatRunMs(value / 1000);
}

/** Two runs side by side: the verdict, then per line and per kernel. */
export function comparisonView(c: CompareResult): HTMLElement {
  const unit = c.lines.find((l) => l.unit !== undefined)?.unit ?? "kernels";
  const lines = c.lines.map((d) => [
    d.before_lines.join(", ") || "–",
    d.line === null ? "–" : String(d.line),
    el("code", { text: d.source.trim() }),
    `${d.kernels_before} → ${d.kernels_after}`,
    `${us(d.time_before_us)} → ${us(d.time_after_us)}`,
    el("span", { className: `status-${d.status}`, text: d.text ?? d.status }),
  ]);
  const kernels = c.kernels.map((k) => [
    el("code", { text: k.short_name, title: k.name }),
    k.status,
    `${k.calls_before} → ${k.calls_after}`,
    `${us(k.device_us_before)} → ${us(k.device_us_after)}`,
  ]);
  return el("section", { className: "comparison" }, [
    el("h3", { text: comparisonHeading(c) }),
    el("p", {}, [
      el("span", {
        className: `verdict ${verdictKind(c.verdict)}`,
        text: `${formatRunMs(c.verdict.before_ms)} → ${formatRunMs(c.verdict.after_ms)} · ${c.verdict.text}`,
      }),
      // A peak that changed (both runs profiled with memory): exact figures, no test.
      ...(c.memory ?? []).map((m) =>
        el("span", { className: "memory-delta", text: ` · ${m.text}` }),
      ),
    ]),
    table(
      ["before line", "after line", "source", unit, unit === "ops" ? "CPU" : "device", "change"],
      lines,
      "compare-lines",
    ),
    kernels.length === 0
      ? null
      : table(["kernel", "status", "calls", "device"], kernels, "compare-kernels"),
  ]);
}
