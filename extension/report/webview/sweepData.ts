/**
 * The sweep chart's data: the timed values as points sorted by value, the failed ones apart,
 * the best point, the x ticks of a log2 axis; and the parsing of the "values" box of the form.
 * Pure (no DOM, no Chart.js), unit-tested under node.
 */
import type { SweepResult } from "../../generated/wire";
import { MAX_SWEEP_VALUES, isParameterValue } from "../messages";

/** One timed value. */
export interface SweepPoint {
  value: number;
  ms: number;
  spreadPct: number | null;
  gbs: number | null;
}

export interface SweepSeries {
  /** Timed values, by increasing value (a value timed twice keeps its first row). */
  points: SweepPoint[];
  /** Values that failed, with the error. */
  failed: { value: number; error: string }[];
  /** Index in `points` of the best (fastest) value; -1 when nothing was timed. */
  best: number;
  /** Where the log2 x axis puts its ticks. */
  ticks: number[];
  /** True when the best value is the one the function uses now (nothing to apply). */
  bestIsCurrent: boolean;
}

/** The chart's series of a sweep. */
export function sweepSeries(sweep: SweepResult): SweepSeries {
  const points: SweepPoint[] = [];
  const failed: { value: number; error: string }[] = [];
  const seen = new Set<number>();
  for (const row of sweep.rows) {
    if (seen.has(row.value)) {
      continue;
    }
    seen.add(row.value);
    if (typeof row.error === "string" && row.error !== "") {
      failed.push({ value: row.value, error: row.error });
    } else if (typeof row.median_ms === "number" && row.value > 0) {
      points.push({
        value: row.value,
        ms: row.median_ms,
        spreadPct: row.spread_pct ?? null,
        gbs: row.gb_per_s ?? null,
      });
    }
  }
  points.sort((a, b) => a.value - b.value);
  let best = -1;
  points.forEach((p, i) => {
    const current = points[best];
    if (current === undefined || p.ms < current.ms) {
      best = i;
    }
  });
  // The server's choice wins where it names a timed value (ties, rounding).
  const named = points.findIndex((p) => p.value === sweep.best.value);
  if (named >= 0) {
    best = named;
  }
  return {
    points,
    failed,
    best,
    ticks: log2Ticks(points.map((p) => p.value)),
    bestIsCurrent: best >= 0 && points[best]?.value === sweep.current,
  };
}

/**
 * Ticks of a log2 axis over `values`: every value when they are few, else the powers of two
 * from the smallest to the largest, thinned to at most `max`.
 */
export function log2Ticks(values: readonly number[], max = 12): number[] {
  const positive = [...new Set(values.filter((v) => v > 0))].sort((a, b) => a - b);
  if (positive.length === 0) {
    return [];
  }
  if (positive.length <= max) {
    return positive;
  }
  const lo = Math.floor(Math.log2(positive[0] ?? 1));
  const hi = Math.ceil(Math.log2(positive[positive.length - 1] ?? 1));
  const every = Math.ceil((hi - lo + 1) / max);
  const out: number[] = [];
  for (let e = lo; e <= hi; e += every) {
    out.push(2 ** e);
  }
  return out;
}

/** Result of {@link parseValues}. */
export type ParsedValues = { ok: true; values: number[] | null } | { ok: false; error: string };

/**
 * The "values" box: integers separated by commas or spaces; empty means the server's default
 * (powers of two around the current value). Duplicates are dropped, order is kept.
 */
export function parseValues(text: string): ParsedValues {
  const words = text.split(/[\s,;]+/).filter((w) => w !== "");
  if (words.length === 0) {
    return { ok: true, values: null };
  }
  const values: number[] = [];
  for (const word of words) {
    const value = /^\d+$/.test(word) ? Number(word) : NaN;
    if (!isParameterValue(value)) {
      return { ok: false, error: `"${word}" is not a positive integer` };
    }
    if (!values.includes(value)) {
      values.push(value);
    }
  }
  if (values.length > MAX_SWEEP_VALUES) {
    return { ok: false, error: `at most ${MAX_SWEEP_VALUES} values` };
  }
  return { ok: true, values };
}
