/**
 * The maths of the Report's memory (no DOM, so it is unit-tested): the peak's words, a live
 * group's words, and the memory lane's SVG path.
 */
import type { HistoryRun, LiveGroup, MemoryDevice } from "../../generated/wire";
import { formatBytes } from "./format";

/** `peak 123 MiB at line 47 (backward of line 44)`. */
export function peakText(dev: MemoryDevice): string {
  const line = dev.peak_line;
  const host = dev.peak_host_line;
  let where = "off the function's lines";
  if (line !== null) {
    where =
      dev.peak_in_backward && host !== null && host !== line
        ? `at line ${host} (backward of line ${line})`
        : `at line ${line}`;
  }
  return `peak ${formatBytes(dev.peak_bytes)} ${where}`;
}

/** `18 MiB from line 44 · saved for backward`. */
export function liveText(group: LiveGroup): string {
  const kind =
    group.kind === undefined
      ? ""
      : group.kind === "backward"
        ? " · allocated by its backward"
        : ` · ${group.kind}`;
  return `${formatBytes(group.bytes)} from line ${group.line}${kind}`;
}

/**
 * The lane's SVG path over `width` × `height`: a step line of `[t_us, bytes]` points, 0 bytes at
 * the bottom and `max` (the peak) at the top; empty without points.
 */
export function lanePath(points: readonly number[][], width: number, height: number): string {
  if (points.length === 0) {
    return "";
  }
  const last = points[points.length - 1]?.[0] ?? 0;
  const span = Math.max(last, 1e-9);
  const max = Math.max(1, ...points.map((p) => p[1] ?? 0));
  const x = (t: number): number => Math.round((width * t * 10) / span) / 10;
  const y = (b: number): number => Math.round((height - (height * b) / max) * 10) / 10;
  let path = "";
  let previous: number | undefined;
  for (const point of points) {
    const t = point[0] ?? 0;
    const b = point[1] ?? 0;
    path += previous === undefined ? `M${x(t)},${y(b)}` : ` H${x(t)} V${y(b)}`;
    previous = b;
  }
  return path;
}

/** ` · peak 48 MiB` for a run profiled with memory (each device's peak), else nothing. */
export function peakSuffix(run: Pick<HistoryRun, "peak_bytes">): string {
  const peaks = Object.entries(run.peak_bytes ?? {});
  return peaks
    .map(([device, bytes]) =>
      peaks.length > 1
        ? ` · ${device} peak ${formatBytes(bytes)}`
        : ` · peak ${formatBytes(bytes)}`,
    )
    .join("");
}

/**
 * The memory lane under the timeline's zoom: `[x, y]` corners of the step line of `points`
 * (`[t_us, bytes]` from the first memory event, put on the timeline's clock by `offsetUs`)
 * across a canvas `width` × `height` showing `view` (µs), 0 bytes at the bottom and `max` at the
 * top. The step holding at the view's left edge starts the line; points past its right edge
 * end it.
 */
export function laneCorners(
  points: readonly number[][],
  offsetUs: number,
  view: { start: number; end: number },
  width: number,
  height: number,
  max: number,
): [number, number][] {
  const span = Math.max(view.end - view.start, 1e-9);
  const top = Math.max(max, 1);
  const x = (t: number): number => ((t - view.start) / span) * width;
  const y = (b: number): number => height - (height * b) / top;
  const out: [number, number][] = [];
  let held: number | undefined;
  for (const point of points) {
    const t = (point[0] ?? 0) + offsetUs;
    const b = point[1] ?? 0;
    if (t < view.start) {
      held = b;
      continue;
    }
    if (out.length === 0 && held !== undefined) {
      out.push([0, y(held)]);
    }
    if (t > view.end) {
      if (out.length > 0) {
        out.push([width, out[out.length - 1]?.[1] ?? y(b)]);
      }
      return out;
    }
    const last = out[out.length - 1];
    if (last !== undefined) {
      out.push([x(t), last[1]]);
    }
    out.push([x(t), y(b)]);
  }
  if (out.length === 0 && held !== undefined) {
    return [
      [0, y(held)],
      [width, y(held)],
    ];
  }
  const last = out[out.length - 1];
  if (last !== undefined) {
    out.push([width, last[1]]);
  }
  return out;
}
