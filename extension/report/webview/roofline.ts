/**
 * The roofline's data (issue 25), pure so it is unit-tested without a webview
 * (tests/ts/roofline.test.ts): each kernel whose bytes and FLOPs are both known is a point at
 * its arithmetic intensity (FLOP/byte) and achieved TFLOP/s; the bandwidth roof (peak TB/s ×
 * intensity) rises to each compute roof (peak TFLOP/s); kernels with only bytes (or only FLOPs)
 * known cannot be placed and are listed in a table instead. Nothing when no kernel has either.
 */
import type { KernelRoofline } from "../../generated/wire";

/** A point of the chart: x in FLOP/byte, y in TFLOP/s. */
export interface XY {
  x: number;
  y: number;
}

/** One kernel placed on the roofline. */
export interface RooflinePoint extends XY {
  /** The kernel's full name (the tooltip's title). */
  name: string;
  label: string;
  /** The lens text: `square_kernel 0.192 ms · 4.16 TB/s · 97% of peak bandwidth`. */
  text: string;
  source: KernelRoofline["source"];
}

/** A kernel that cannot be placed (bytes without FLOPs, or FLOPs without bytes). */
export interface UnplacedRow {
  name: string;
  label: string;
  /** Achieved TB/s, or null (FLOPs only). */
  tbs: number | null;
  /** Of the peak bandwidth, or null without a peak for this GPU. */
  bandwidthPct: number | null;
  tflops: number | null;
  flopPct: number | null;
  source: KernelRoofline["source"];
}

/** A compute roof: flat at `tflops` from the ridge point on. */
export interface ComputeRoof {
  tflops: number;
  label: string;
  data: XY[];
}

export interface RooflineData {
  points: RooflinePoint[];
  unplaced: UnplacedRow[];
  /** The bandwidth roof, `peak_tbs × x`, up to the highest ridge; empty without peaks. */
  bandwidthRoof: XY[];
  peakTbs: number | null;
  computeRoofs: ComputeRoof[];
  /** The x axis (FLOP/byte): powers of ten around the points and the ridges. */
  xMin: number;
  xMax: number;
  /** Which peaks, and whether datasheet or measured (the first kernel's note). */
  peakNote: string | null;
}

/** `source` in words, for the tooltip and the table. */
export const SOURCE_LABELS: Readonly<Record<KernelRoofline["source"], string>> = {
  inductor: "Inductor's launch metadata",
  tensors: "the tensors' sizes",
  ncu: "Nsight Compute",
};

function positive(value: number | null | undefined): value is number {
  return typeof value === "number" && Number.isFinite(value) && value > 0;
}

function decadeBelow(value: number): number {
  return 10 ** Math.floor(Math.log10(value));
}

function decadeAbove(value: number): number {
  return 10 ** Math.ceil(Math.log10(value));
}

/** The roofline of a profile's `roofline` entries, or null when there is nothing to show. */
export function rooflineData(
  roofs: readonly KernelRoofline[] | undefined | null,
): RooflineData | null {
  const known = (roofs ?? []).filter((r) => positive(r.tb_per_s) || positive(r.tflop_per_s));
  if (known.length === 0) {
    return null;
  }
  const points: RooflinePoint[] = [];
  const unplaced: UnplacedRow[] = [];
  for (const r of known) {
    if (positive(r.intensity) && positive(r.tflop_per_s)) {
      points.push({
        x: r.intensity,
        y: r.tflop_per_s,
        name: r.name,
        label: r.short_name,
        text: r.text,
        source: r.source,
      });
    } else {
      unplaced.push({
        name: r.name,
        label: r.short_name,
        tbs: positive(r.tb_per_s) ? r.tb_per_s : null,
        bandwidthPct: r.bandwidth_pct,
        tflops: positive(r.tflop_per_s) ? r.tflop_per_s : null,
        flopPct: r.flop_pct,
        source: r.source,
      });
    }
  }
  const peakTbs = known.map((r) => r.peak_tbs).find(positive) ?? null;
  const peaks = [...new Set(known.map((r) => r.peak_tflops).filter(positive))].sort(
    (a, b) => a - b,
  );
  // Each compute roof named by its math (FP32, BF16 tensor…), so a GEMM's roof is not FP32's.
  const mathOf = new Map<number, string>();
  for (const r of known) {
    if (positive(r.peak_tflops) && typeof r.math === "string" && !mathOf.has(r.peak_tflops)) {
      mathOf.set(r.peak_tflops, r.math);
    }
  }
  const ridges = peakTbs === null ? [] : peaks.map((p) => p / peakTbs);
  const xs = [...points.map((p) => p.x), ...ridges];
  const xMin = xs.length === 0 ? 0.01 : decadeBelow(Math.min(...xs) / 2);
  const xMax = xs.length === 0 ? 100 : decadeAbove(Math.max(...xs) * 2);
  // Up to the highest ridge, where the last compute roof takes over (the axis' end without one).
  const bandwidthEnd = ridges.length === 0 ? xMax : Math.max(...ridges);
  const bandwidthRoof =
    peakTbs === null
      ? []
      : [
          { x: xMin, y: peakTbs * xMin },
          { x: bandwidthEnd, y: peakTbs * bandwidthEnd },
        ];
  const computeRoofs =
    peakTbs === null
      ? []
      : peaks.map((tflops) => ({
          tflops,
          label: `${mathOf.get(tflops) ?? "compute"} roof ${tflops} TFLOP/s`,
          data: [
            { x: tflops / peakTbs, y: tflops },
            { x: xMax, y: tflops },
          ],
        }));
  return {
    points,
    unplaced,
    bandwidthRoof,
    peakTbs,
    computeRoofs,
    xMin,
    xMax,
    peakNote: known.map((r) => r.peak_note).find((n) => typeof n === "string" && n !== "") ?? null,
  };
}
