/**
 * Checks of the server's report data before it reaches a webview: the shapes of
 * `kernelLens/report`, `kernelLens/traceFile` and `kernelLens/ncuFile` (`protocol.ts`).
 *
 * A malformed answer is reported as such instead of breaking the view half-way. Fields the
 * views do not read pass through unchecked. Pure (no `vscode`), unit-tested under node.
 */
import type {
  NcuFileResult,
  NcuHint,
  NcuKernel,
  NcuResult,
  Profile,
  ProfileLine,
  ReportResult,
  RevealReportParams,
  ShowReportArgs,
  SweepResult,
  SweepRow,
  Timeline,
  TimelineEvent,
  TimelineLane,
  TraceFileResult,
} from "../protocol";

type Guard<T> = (value: unknown) => value is T;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const isString = (v: unknown): v is string => typeof v === "string";
const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const isInt = (v: unknown): v is number => Number.isSafeInteger(v);

function nullable<T>(guard: Guard<T>): Guard<T | null> {
  return (v: unknown): v is T | null => v === null || guard(v);
}

/** Absent, null or `guard`. */
function optional<T>(guard: Guard<T>): Guard<T | null | undefined> {
  return (v: unknown): v is T | null | undefined => v === undefined || v === null || guard(v);
}

function listOf<T>(guard: Guard<T>): Guard<T[]> {
  return (v: unknown): v is T[] => Array.isArray(v) && v.every((item) => guard(item));
}

/** A record whose listed fields pass their guards. */
function shape<T>(fields: Record<string, Guard<unknown>>): Guard<T> {
  return (v: unknown): v is T =>
    isRecord(v) && Object.entries(fields).every(([key, guard]) => guard(v[key]));
}

const isKernel = shape({
  name: isString,
  short_name: isString,
  device_us: isNumber,
  calls: isNumber,
});

const isOp = shape({
  name: isString,
  device_us: isNumber,
  cpu_us: isNumber,
  calls: isNumber,
  kernels: listOf(isKernel),
  dispatch: optional(listOf(isString)),
});

const isLine: Guard<ProfileLine> = shape({ line: isInt, source: isString, ops: listOf(isOp) });

const isTiming = shape({ median_ms: isNumber, spread_pct: isNumber, reps: isNumber });

/** Checks a profile (`kernel-lens profile --json`). */
export const isProfile: Guard<Profile> = shape({
  function: isString,
  device: isString,
  timing: nullable(isTiming),
  lines: listOf(isLine),
  kernels: listOf(isKernel),
});

const isEvent: Guard<TimelineEvent> = shape({
  start: isNumber,
  dur: isNumber,
  depth: isInt,
  name: isString,
  short: isString,
  cat: isString,
  line: nullable(isInt),
  count: optional(isInt),
});

const isLane: Guard<TimelineLane> = shape({
  id: isString,
  title: isString,
  kind: (v: unknown) => v === "cpu" || v === "runtime" || v === "gpu",
  events: listOf(isEvent),
});

/** Checks a timeline (`server/kernel_lens/analysis/timeline.py`). */
export const isTimeline: Guard<Timeline> = shape({
  span_us: isNumber,
  window: optional(
    (v: unknown): v is [number, number] => Array.isArray(v) && v.length === 2 && v.every(isNumber),
  ),
  path: optional(isString),
  event_count: isInt,
  kept: isInt,
  lanes: listOf(isLane),
});

const isHint: Guard<NcuHint> = shape({
  rule: isString,
  section: isString,
  kind: (v: unknown) => v === "OPT" || v === "WRN" || v === "ERR",
  title: isString,
  message: isString,
  speedup_pct: nullable(isNumber),
  speedup_type: nullable(isString),
});

const METRICS = [
  "duration_us",
  "compute_throughput_pct",
  "memory_throughput_pct",
  "dram_throughput_pct",
  "dram_bandwidth_gbs",
  "achieved_occupancy_pct",
  "theoretical_occupancy_pct",
  "registers",
  "grid_size",
  "block_size",
  "waves",
] as const;

const isNcuKernel: Guard<NcuKernel> = shape({
  id: isInt,
  name: isString,
  demangled: isString,
  device: nullable(isString),
  ...Object.fromEntries(METRICS.map((m) => [m, nullable(isNumber)])),
  grid: nullable(isString),
  block: nullable(isString),
  line: optional(isInt),
  hints: listOf(isHint),
});

/** Checks an Nsight Compute run on a function. */
export const isNcuResult: Guard<NcuResult> = shape({
  report_path: isString,
  reader: isString,
  kernels: listOf(isNcuKernel),
});

const isSweepRow: Guard<SweepRow> = shape({
  value: isInt,
  median_ms: optional(isNumber),
  spread_pct: optional(isNumber),
  reps: optional(isNumber),
  bytes: optional(isNumber),
  gb_per_s: optional(isNumber),
  error: optional(isString),
});

/** Checks a sweep of an int parameter. */
export const isSweepResult: Guard<SweepResult> = shape({
  param: isString,
  current: nullable(isNumber),
  rows: listOf(isSweepRow),
  best: shape({ value: isInt, median_ms: isNumber }),
  method: isString,
  device: isString,
});

/** Checks a `kernelLens/report` result. */
export const isReportResult: Guard<ReportResult> = shape({
  function: isString,
  uri: isString,
  profile: nullable(isProfile),
  timeline: nullable(isTimeline),
  ncu: nullable(isNcuResult),
  sweep: nullable(isSweepResult),
});

/** Checks a `kernelLens/traceFile` result. */
export const isTraceFileResult: Guard<TraceFileResult> = shape({
  path: isString,
  timeline: isTimeline,
  summary: isRecord,
});

/** Checks a `kernelLens/ncuFile` result. */
export const isNcuFileResult: Guard<NcuFileResult> = shape({
  report_path: isString,
  reader: isString,
  kernels: listOf(isNcuKernel),
});

/** Checks a code lens's (or a caller's) argument to `kernelLens.showReport`. */
export const isShowReportArgs: Guard<ShowReportArgs> = shape({ uri: isString, function: isString });

/** Checks the params of `kernelLens/revealReport`. */
export const isRevealReportParams: Guard<RevealReportParams> = shape({
  uri: isString,
  function: isString,
  tab: (v: unknown) => v === "timeline" || v === "ncu" || v === "sweep",
});

/**
 * The message of a server command's failure result (`{ok: false, error: {message}}` or
 * `{ok: false, message}`), or undefined when the result is not a failure. The server has shown
 * the failure as a notification already; the panel shows it too, where the user looks.
 */
export function commandFailure(result: unknown): string | undefined {
  if (!isRecord(result) || result["ok"] !== false) {
    return undefined;
  }
  const error = result["error"];
  if (isRecord(error) && isString(error["message"])) {
    return error["message"];
  }
  return isString(result["message"]) ? result["message"] : "the command failed; see the output";
}
