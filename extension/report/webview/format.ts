/**
 * Number formatting for the report views. Pure (no DOM), unit-tested under node.
 */
import type { Profile } from "../../generated/wire";

/** A duration given in microseconds, in the unit that suits it: `812 ns`, `189 µs`, `1.23 ms`. */
export function formatUs(us: number): string {
  const abs = Math.abs(us);
  if (abs === 0) {
    return "0 µs";
  }
  if (abs < 1) {
    return `${significant(us * 1e3)} ns`;
  }
  if (abs < 1e3) {
    return `${significant(us)} µs`;
  }
  if (abs < 1e6) {
    return `${significant(us / 1e3)} ms`;
  }
  return `${significant(us / 1e6)} s`;
}

/** A duration given in milliseconds (`0.577 ms`, `12.4 ms`, `189 µs` below 0.1 ms). */
export function formatMs(ms: number): string {
  return Math.abs(ms) < 0.1 ? formatUs(ms * 1e3) : `${significant(ms)} ms`;
}

/**
 * `value` with three significant digits, at most: 189.44 -> `189`, 1.2345 -> `1.23`,
 * 0.5766 -> `0.577`; integers of four digits or more stay whole (`1234`).
 */
export function significant(value: number): string {
  const abs = Math.abs(value);
  if (abs >= 100 || abs === 0) {
    return Math.round(value).toString();
  }
  const decimals = abs >= 10 ? 1 : abs >= 1 ? 2 : Math.min(6, 2 - Math.floor(Math.log10(abs)));
  return trimZeros(value.toFixed(decimals));
}

function trimZeros(text: string): string {
  return text.includes(".") ? text.replace(/\.?0+$/, "") : text;
}

/** A percentage: `66.9 %`; null as an en dash. */
export function formatPct(pct: number | null | undefined): string {
  return pct === null || pct === undefined ? "–" : `${pct.toFixed(1)} %`;
}

/** A count with thin thousands separators: `2048`, `1 048 576`; null as an en dash. */
export function formatCount(n: number | null | undefined): string {
  if (n === null || n === undefined) {
    return "–";
  }
  const whole = Math.round(n).toString();
  return whole.length <= 4 ? whole : whole.replace(/\B(?=(\d{3})+(?!\d))/g, "\u2009");
}

/** A bandwidth in GB/s: `4160 GB/s`, `12.3 GB/s`, `0.5 GB/s`; null as an en dash. */
export function formatGbs(gbs: number | null | undefined): string {
  if (gbs === null || gbs === undefined) {
    return "–";
  }
  return `${gbs >= 100 ? Math.round(gbs).toString() : significant(gbs)} GB/s`;
}

/** A byte count in binary units: `4 MiB`, `1.5 KiB`, `512 B`. */
export function formatBytes(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? Math.round(value).toString() : significant(value)} ${units[unit] ?? "B"}`;
}

/** A CPU row's cell: `38% of 44.4 µs` (or `38%` without a median), the raw time as tooltip. */
export function cpuCell(
  cpuUs: number,
  totalUs: number,
  medianMs: number | null,
): { text: string; title: string } {
  if (cpuUs <= 0 || totalUs <= 0) {
    return { text: "–", title: "" };
  }
  const share = cpuUs / totalUs;
  const pct = share >= 0.995 ? "100%" : share < 0.01 ? "<1%" : `${Math.round(share * 100)}%`;
  const text = medianMs !== null && medianMs > 0 ? `${pct} of ${formatMs(medianMs)}` : pct;
  return { text, title: `${formatUs(cpuUs)} CPU under the profiler (attribution only)` };
}

/** The lines a backward pass spread over: `44–45`, or `44, 47`. */
export function linesSpan(lines: readonly number[]): string {
  if (lines.length === 0) {
    return "";
  }
  const first = lines[0] ?? 0;
  const last = lines[lines.length - 1] ?? 0;
  const consecutive = lines.every((n, i) => n === first + i);
  return consecutive && lines.length > 1 ? `${first}–${last}` : lines.join(", ");
}

/** ` · 100% on lines`, or ` · 97.8% on lines · 81.7 µs launched outside the function's lines`. */
/**
 * The figure "ops" wherever it is shown (the Report's box, as the summary lens: `op_calls` in
 * `analysis/lens_text.py`): top-level op calls per call of the function on its lines, forward
 * and backward.
 */
export function opCalls(profile: Pick<Profile, "lines">): number {
  let calls = 0;
  for (const line of profile.lines) {
    for (const op of [...line.ops, ...(line.backward?.ops ?? [])]) {
      calls += op.calls;
    }
  }
  return calls;
}

/** `20`, or `2.5` for an op not called on every call (as `ops_count_text` in Python). */
export function formatOps(calls: number): string {
  return Math.abs(calls - Math.round(calls)) < 1e-9
    ? String(Math.round(calls))
    : (Math.floor(calls * 10 + 0.5) / 10).toFixed(1);
}

export function accountingText(profile: Pick<Profile, "accounting">): string {
  const acc = profile.accounting;
  if (acc === undefined || acc.device_us <= 0) {
    return "";
  }
  const head =
    acc.on_lines_pct >= 99.995 ? "100% on lines" : `${acc.on_lines_pct.toFixed(1)}% on lines`;
  const rest = acc.remainder.map((r) => `${formatUs(r.device_us)} ${r.text}`);
  return ` · ${[head, ...rest].join(" · ")}`;
}

/**
 * Bidirectional embedding, override and isolate controls (U+202A–U+202E, U+2066–U+2069): one
 * in a device or kernel name would reorder the rest of the line it is shown on.
 */
const BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` with every bidi control shown as its code (`<U+202E>`) instead of obeyed, so a stored
 * string reorders nothing around it. Every string the views show goes through it (`dom.ts`).
 */
export function noBidi(text: string): string {
  return text.replace(
    BIDI_CONTROLS,
    (ch) => `<U+${ch.codePointAt(0)?.toString(16).toUpperCase() ?? "?"}>`,
  );
}
