/**
 * Run-time checks of what arrives from the server (request results, notification params, the
 * arguments code lenses pass to commands) before it drives the UI: one check per type of
 * `protocol.ts`, all in one style.
 *
 * A {@link Check} takes untrusted JSON and returns it typed, or an {@link Invalid} that says
 * where and why it is not of the type (`result.kernels[2].call_line: expected an integer, got
 * null`). Checks are built from small ones ({@link shape}, {@link listOf}, {@link nullable},
 * {@link optional}, …), and {@link shape} takes one check per field of the declared interface:
 * the compiler rejects a missing field and a check that lets through more than its field's type
 * (a check stricter than the type is caught by the tests on recorded answers). Fields not in the
 * type pass through unread. {@link is} turns a check into a type guard where a yes
 * or no is enough; {@link RESULT_CHECKS} is the check of every `kernelLens/*` request's result.
 *
 * Pure (no `vscode`), so it is unit-tested under node, against the server's recorded answers.
 */
import {
  SERVER_STATES,
  type AssemblyResult,
  type CommandResult,
  type CompareResult,
  type CompareVerdict,
  type HistoryResult,
  type HistoryRun,
  type KernelDelta,
  type LineDelta,
  type RunTiming,
  type SetBaselineResult,
  type FunctionEntry,
  type FunctionsResult,
  type GeneratedCodeResult,
  type GeneratedKernel,
  type InlineFiles,
  type InlineModule,
  type InlineResult,
  type LineMapEntry,
  type NcuFileResult,
  type NcuHint,
  type NcuKernel,
  type NcuResult,
  type NvccProblem,
  type Profile,
  type ProfileKernel,
  type ProfileKernelTotal,
  type ProfileLine,
  type ProfileOp,
  type ProfileTiming,
  type ReportInputs,
  type ReportResult,
  type ResultsChangedParams,
  type RevealReportParams,
  type RunSummary,
  type ShowAssemblyArgs,
  type ShowGeneratedCodeArgs,
  type ShowInlineExtensionArgs,
  type ShowReportArgs,
  type StatusParams,
  type SweepResult,
  type SweepRow,
  type Timeline,
  type TimelineEvent,
  type TimelineLane,
  type TimelineTop,
  type TraceFileResult,
} from "./protocol";

/** Why a value is not of the type a {@link Check} expects. */
export class Invalid {
  constructor(
    /** `path: expected …, got …`. */
    readonly reason: string,
  ) {}
}

/**
 * A check of untrusted JSON: `value` typed as a T, or why it is not one.
 *
 * Args:
 *   value: the JSON value.
 *   path: where `value` is, for the reason (`result`, `result.lines[3]`).
 */
export type Check<T> = (value: unknown, path: string) => T | Invalid;

/** The value as a T, or an {@link Invalid} whose reason starts with `what`. */
export function check<T>(c: Check<T>, value: unknown, what = "value"): T | Invalid {
  return c(value, what);
}

/** A type guard from a check, where a yes or no is enough. */
export function is<T>(c: Check<T>): (value: unknown) => value is T {
  return (value: unknown): value is T => !(c(value, "value") instanceof Invalid);
}

function describe(value: unknown): string {
  if (value === undefined) {
    return "nothing";
  }
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

function fail(path: string, expected: string, value: unknown): Invalid {
  return new Invalid(`${path}: expected ${expected}, got ${describe(value)}`);
}

/** A check of one JSON type by a test of it. */
function primitive<T>(expected: string, test: (value: unknown) => boolean): Check<T> {
  return (value, path) => (test(value) ? (value as T) : fail(path, expected, value));
}

export const string: Check<string> = primitive("a string", (v) => typeof v === "string");
/** A finite number. */
export const number: Check<number> = primitive(
  "a number",
  (v) => typeof v === "number" && Number.isFinite(v),
);
/** A safe integer. */
export const int: Check<number> = primitive("an integer", (v) => Number.isSafeInteger(v));
export const boolean: Check<boolean> = primitive("true or false", (v) => typeof v === "boolean");

/** Any JSON value at all (a field typed `unknown`). */
export const anything: Check<unknown> = (value) => value;

/** A JSON object (not null, not an array), read as a record. */
export const record: Check<Record<string, unknown>> = primitive(
  "an object",
  (v) => typeof v === "object" && v !== null && !Array.isArray(v),
);

/** One of the given strings. */
export function oneOf<const T extends string>(...values: readonly T[]): Check<T> {
  return primitive(values.map((v) => JSON.stringify(v)).join(" or "), (v) =>
    (values as readonly unknown[]).includes(v),
  );
}

/** null or a `c`. */
export function nullable<T>(c: Check<T>): Check<T | null> {
  return (value, path) => (value === null ? null : c(value, path));
}

/** Absent or a `c` (an optional field). */
export function optional<T>(c: Check<T>): Check<T | undefined> {
  return (value, path) => (value === undefined ? undefined : c(value, path));
}

/** An array of `c`s. */
export function listOf<T>(c: Check<T>): Check<T[]> {
  return (value, path) => {
    if (!Array.isArray(value)) {
      return fail(path, "an array", value);
    }
    for (const [index, item] of value.entries()) {
      const checked = c(item, `${path}[${index}]`);
      if (checked instanceof Invalid) {
        return checked;
      }
    }
    return value as T[];
  };
}

/** An object whose every value is a `c`. */
export function recordOf<T>(c: Check<T>): Check<Record<string, T>> {
  return (value, path) => {
    const checked = record(value, path);
    if (checked instanceof Invalid) {
      return checked;
    }
    for (const [key, item] of Object.entries(checked)) {
      const result = c(item, `${path}.${key}`);
      if (result instanceof Invalid) {
        return result;
      }
    }
    return checked as Record<string, T>;
  };
}

/**
 * One check per field of T, each accepting no more than the field's type (an optional field's
 * check is `optional(…)`, so that absence passes).
 */
export type Fields<T> = { readonly [K in keyof T]-?: Check<T[K]> };

/**
 * An object whose fields pass their checks; it is returned as is, with the fields the checks
 * do not name (not in T) passing through unread.
 */
export function shape<T>(fields: Fields<T>): Check<T> {
  const entries = Object.entries<Check<unknown>>(fields);
  return (value, path) => {
    const checked = record(value, path);
    if (checked instanceof Invalid) {
      return checked;
    }
    for (const [key, c] of entries) {
      const result = c(checked[key], `${path}.${key}`);
      if (result instanceof Invalid) {
        return result;
      }
    }
    return checked as T;
  };
}

/** An array of exactly one value per check, in order (a fixed-length tuple). */
export function tupleOf<T extends unknown[]>(
  ...checks: { readonly [K in keyof T]: Check<T[K]> }
): Check<T> {
  const expected = `an array of ${checks.length}`;
  return (value, path) => {
    if (!Array.isArray(value) || value.length !== checks.length) {
      return fail(path, expected, value);
    }
    for (const [index, c] of checks.entries()) {
      const checked = c(value[index], `${path}[${index}]`);
      if (checked instanceof Invalid) {
        return checked;
      }
    }
    return value as unknown as T;
  };
}

/** A pair of numbers. */
const numberPair: Check<[number, number]> = (value, path) =>
  Array.isArray(value) && value.length === 2 && value.every((v) => number(v, path) === v)
    ? (value as [number, number])
    : fail(path, "[number, number]", value);

const lineList = listOf(int);

// Status bar and trust.

export const checkStatusParams: Check<StatusParams> = shape<StatusParams>({
  state: oneOf(...SERVER_STATES),
  message: string,
  uri: optional(nullable(string)),
});

// Assembly and generated code.

const checkLineMapEntry: Check<LineMapEntry> = shape<LineMapEntry>({
  source_line: int,
  asm_lines: lineList,
});

export const checkAssemblyResult: Check<AssemblyResult> = shape<AssemblyResult>({
  kernel: string,
  stage: string,
  arch: string,
  asm: string,
  line_map: listOf(checkLineMapEntry),
  registers: nullable(number),
  spills: number,
  launcher: nullable(string),
  warnings: listOf(string),
});

const checkRunSummary: Check<RunSummary> = shape<RunSummary>({
  median_ms: number,
  kernels: number,
});

const checkGeneratedKernel: Check<GeneratedKernel> = shape<GeneratedKernel>({
  name: string,
  kind: oneOf("triton", "cpp", "extern"),
  lines: lineList,
  def_line: optional(nullable(int)),
  call_line: int,
});

export const checkGeneratedCodeResult: Check<GeneratedCodeResult> = shape<GeneratedCodeResult>({
  function: string,
  language: oneOf("triton", "cpp"),
  code: string,
  code_path: string,
  kernels: listOf(checkGeneratedKernel),
  summary: string,
  eager: checkRunSummary,
  compiled: checkRunSummary,
  speedup: nullable(number),
});

// load_inline.

const checkNvccProblem: Check<NvccProblem> = shape<NvccProblem>({
  severity: string,
  message: string,
  cuda_line: nullable(int),
  line: nullable(int),
});

const checkInlineFiles: Check<InlineFiles> = shape<InlineFiles>({
  "main.cpp": string,
  "cuda.cu": nullable(string),
  "build.ninja": optional(nullable(string)),
});

const checkInlineModule: Check<InlineModule> = shape<InlineModule>({
  name: string,
  call_line: int,
  arch: string,
  nvcc: string,
  files: checkInlineFiles,
  ptx: nullable(string),
  line_map: listOf(checkLineMapEntry),
  errors: listOf(checkNvccProblem),
  build_log: nullable(string),
  build_directory: nullable(string),
  ptx_seconds: optional(number),
});

export const checkInlineResult: Check<InlineResult> = shape<InlineResult>({
  path: string,
  modules: listOf(checkInlineModule),
});

// The report: profile, timeline, Nsight Compute, sweep.

const checkProfileKernel: Check<ProfileKernel> = shape<ProfileKernel>({
  name: string,
  short_name: string,
  device_us: number,
  calls: number,
});

const checkProfileKernelTotal: Check<ProfileKernelTotal> = shape<ProfileKernelTotal>({
  name: string,
  short_name: string,
  device_us: number,
  calls: number,
  lines: optional(lineList),
});

const checkProfileOp: Check<ProfileOp> = shape<ProfileOp>({
  name: string,
  dispatch: optional(listOf(string)),
  device_us: number,
  cpu_us: number,
  calls: number,
  kernels: listOf(checkProfileKernel),
});

const checkProfileLine: Check<ProfileLine> = shape<ProfileLine>({
  line: int,
  source: string,
  ops: listOf(checkProfileOp),
});

const checkTiming: Check<ProfileTiming> = shape<ProfileTiming>({
  median_ms: number,
  spread_pct: number,
  reps: number,
  method: optional(string),
});

/** A profile (`kernel-lens profile --json`). */
export const checkProfile: Check<Profile> = shape<Profile>({
  function: string,
  device: string,
  device_kind: optional(string),
  timing: nullable(checkTiming),
  lines: listOf(checkProfileLine),
  kernels: listOf(checkProfileKernelTotal),
  trace_path: optional(nullable(string)),
});

const checkTimelineEvent: Check<TimelineEvent> = shape<TimelineEvent>({
  start: number,
  dur: number,
  depth: int,
  name: string,
  short: string,
  cat: string,
  line: nullable(int),
  count: optional(int),
  merged: optional(boolean),
});

const checkTimelineTop: Check<TimelineTop> = shape<TimelineTop>({
  name: string,
  us: number,
  share: number,
});

const checkTimelineLane: Check<TimelineLane> = shape<TimelineLane>({
  id: string,
  title: string,
  kind: oneOf("cpu", "runtime", "gpu"),
  events: listOf(checkTimelineEvent),
  top: optional(listOf(checkTimelineTop)),
});

/** A timeline (`server/kernel_lens/analysis/timeline.py`); the result of `kernelLens/timelineWindow`. */
export const checkTimeline: Check<Timeline> = shape<Timeline>({
  span_us: number,
  window: optional(nullable(numberPair)),
  path: optional(string),
  event_count: int,
  kept: int,
  lanes: listOf(checkTimelineLane),
});

const checkNcuHint: Check<NcuHint> = shape<NcuHint>({
  rule: string,
  section: string,
  kind: oneOf("OPT", "WRN", "ERR"),
  title: string,
  message: string,
  speedup_pct: nullable(number),
  speedup_type: nullable(string),
});

const metric = nullable(number);

const checkNcuKernel: Check<NcuKernel> = shape<NcuKernel>({
  id: int,
  name: string,
  demangled: string,
  device: nullable(string),
  duration_us: metric,
  compute_throughput_pct: metric,
  memory_throughput_pct: metric,
  dram_throughput_pct: metric,
  dram_bandwidth_gbs: metric,
  achieved_occupancy_pct: metric,
  theoretical_occupancy_pct: metric,
  registers: metric,
  grid_size: metric,
  block_size: metric,
  waves: metric,
  grid: nullable(string),
  block: nullable(string),
  line: optional(nullable(int)),
  hints: listOf(checkNcuHint),
});

/** An Nsight Compute run on a function. */
export const checkNcuResult: Check<NcuResult> = shape<NcuResult>({
  report_path: string,
  set: optional(string),
  reader: string,
  kernels: listOf(checkNcuKernel),
});

const checkSweepRow: Check<SweepRow> = shape<SweepRow>({
  value: int,
  median_ms: optional(nullable(number)),
  spread_pct: optional(nullable(number)),
  reps: optional(nullable(number)),
  bytes: optional(nullable(number)),
  gb_per_s: optional(nullable(number)),
  error: nullable(string),
});

/** A sweep of an int parameter. */
export const checkSweepResult: Check<SweepResult> = shape<SweepResult>({
  param: string,
  current: nullable(number),
  rows: listOf(checkSweepRow),
  best: shape({ value: int, median_ms: number }),
  method: string,
  device: string,
  ties: optional(listOf(int)),
  verdict: optional(nullable(string)),
});

export const checkReportInputs: Check<ReportInputs> = shape<ReportInputs>({
  source: string,
  args: listOf(string),
});

export const checkReportResult: Check<ReportResult> = shape<ReportResult>({
  function: string,
  uri: string,
  int_parameters: optional(recordOf(int)),
  profile: nullable(checkProfile),
  timeline: nullable(checkTimeline),
  ncu: nullable(checkNcuResult),
  sweep: nullable(checkSweepResult),
  inputs: optional(nullable(checkReportInputs)),
});

export const checkTraceFileResult: Check<TraceFileResult> = shape<TraceFileResult>({
  path: string,
  timeline: checkTimeline,
  summary: record,
});

export const checkNcuFileResult: Check<NcuFileResult> = shape<NcuFileResult>({
  report_path: string,
  reader: string,
  kernels: listOf(checkNcuKernel),
});

export const checkRevealReportParams: Check<RevealReportParams> = shape<RevealReportParams>({
  uri: string,
  function: string,
  tab: oneOf("timeline", "ncu", "sweep"),
});

export const checkResultsChangedParams: Check<ResultsChangedParams> = shape<ResultsChangedParams>({
  uri: string,
  function: string,
});

// The functions of a document.

const checkFunctionEntry: Check<FunctionEntry> = shape<FunctionEntry>({
  name: string,
  line: int,
  kind: oneOf("function", "method", "triton_kernel"),
});

export const checkFunctionsResult: Check<FunctionsResult> = shape<FunctionsResult>({
  functions: listOf(checkFunctionEntry),
});

// Server commands.

export const checkCommandResult: Check<CommandResult> = shape<CommandResult>({
  ok: boolean,
  function: optional(string),
  error: optional(
    shape<{ kind?: string; message: string }>({ kind: optional(string), message: string }),
  ),
  message: optional(string),
});

/**
 * The message of a server command's failure result (`{ok: false, error: {message}}` or
 * `{ok: false, message}`), or undefined when the result is not a failure. The server has shown
 * the failure as a notification already; the report panel shows it too, where the user looks.
 */
export function commandFailure(result: unknown): string | undefined {
  if (record(result, "result") instanceof Invalid || (result as { ok?: unknown }).ok !== false) {
    return undefined;
  }
  const checked = checkCommandResult(result, "result");
  const message =
    checked instanceof Invalid ? undefined : (checked.error?.message ?? checked.message);
  return message ?? "the command failed; see the output";
}

// The arguments the server's code lenses pass to the client's commands.

export const checkShowAssemblyArgs: Check<ShowAssemblyArgs> = shape<ShowAssemblyArgs>({
  uri: string,
  kernel: string,
});

export const checkShowGeneratedCodeArgs: Check<ShowGeneratedCodeArgs> =
  shape<ShowGeneratedCodeArgs>({ uri: string, function: string });

export const checkShowInlineExtensionArgs: Check<ShowInlineExtensionArgs> =
  shape<ShowInlineExtensionArgs>({ uri: string, line: optional(int) });

export const checkShowReportArgs: Check<ShowReportArgs> = shape<ShowReportArgs>({
  uri: string,
  function: string,
});

const checkCompareVerdict: Check<CompareVerdict> = shape<CompareVerdict>({
  before_ms: number,
  after_ms: number,
  change_pct: number,
  interval_pct: number,
  p_value: nullable(number),
  significant: boolean,
  method: oneOf("mann-whitney", "iqr", "none"),
  reference: string,
  text: string,
});

const checkRunTiming: Check<RunTiming> = shape<RunTiming>({
  median_ms: number,
  spread_pct: optional(number),
  reps: optional(int),
  method: optional(string),
  q1_ms: optional(number),
  q3_ms: optional(number),
  min_ms: optional(number),
  max_ms: optional(number),
});

const checkHistoryRun: Check<HistoryRun> = shape<HistoryRun>({
  id: string,
  time: nullable(string),
  function: nullable(string),
  path: nullable(string),
  device: nullable(string),
  device_kind: nullable(string),
  git: nullable(shape({ commit: string, dirty: boolean })),
  file_hash: nullable(string),
  versions: recordOf((value: unknown) => value),
  inputs: nullable(string),
  timing: checkRunTiming,
  kernel_count: number,
  text: optional(listOf(string)),
  verdict: optional(nullable(checkCompareVerdict)),
});

/** Result of `kernelLens/history`. */
export const checkHistoryResult: Check<HistoryResult> = shape<HistoryResult>({
  function: string,
  uri: string,
  path: string,
  baseline: nullable(string),
  current_text: nullable(listOf(string)),
  runs: listOf(checkHistoryRun),
});

/** Result of `kernelLens/setBaseline`. */
export const checkSetBaselineResult: Check<SetBaselineResult> = shape<SetBaselineResult>({
  function: string,
  baseline: nullable(checkHistoryRun),
});

const checkLineDelta: Check<LineDelta> = shape<LineDelta>({
  status: oneOf("same", "changed", "added", "removed"),
  line: nullable(int),
  before_lines: listOf(int),
  source: string,
  kernels_before: number,
  kernels_after: number,
  time_before_us: number,
  time_after_us: number,
  unit: optional(oneOf("kernels", "ops")),
  text: nullable(string),
});

const checkKernelDelta: Check<KernelDelta> = shape<KernelDelta>({
  name: string,
  short_name: string,
  status: oneOf("same", "added", "removed"),
  calls_before: number,
  calls_after: number,
  device_us_before: number,
  device_us_after: number,
});

/** Result of `kernelLens/compare`. */
export const checkCompareResult: Check<CompareResult> = shape<CompareResult>({
  function: string,
  before: checkHistoryRun,
  after: checkHistoryRun,
  reference: string,
  reference_id: nullable(string),
  verdict: checkCompareVerdict,
  lines: listOf(checkLineDelta),
  kernels: listOf(checkKernelDelta),
  kernel_count: listOf(number),
});

/** The check of each `kernelLens/*` request's result, by method (see tests/data/protocol/). */
export const RESULT_CHECKS: Readonly<Record<string, Check<unknown>>> = {
  "kernelLens/assembly": checkAssemblyResult,
  "kernelLens/generatedCode": checkGeneratedCodeResult,
  "kernelLens/inlineExtension": checkInlineResult,
  "kernelLens/report": checkReportResult,
  "kernelLens/traceFile": checkTraceFileResult,
  "kernelLens/ncuFile": checkNcuFileResult,
  "kernelLens/timelineWindow": checkTimeline,
  "kernelLens/functions": checkFunctionsResult,
  "kernelLens/history": checkHistoryResult,
  "kernelLens/setBaseline": checkSetBaselineResult,
  "kernelLens/compare": checkCompareResult,
};

// Type guards, where a yes or no is enough.

export const isStatusParams = is(checkStatusParams);
export const isAssemblyResult = is(checkAssemblyResult);
export const isGeneratedCodeResult = is(checkGeneratedCodeResult);
export const isInlineResult = is(checkInlineResult);
export const isProfile = is(checkProfile);
export const isTimeline = is(checkTimeline);
export const isSweepResult = is(checkSweepResult);
export const isReportResult = is(checkReportResult);
export const isTraceFileResult = is(checkTraceFileResult);
export const isNcuFileResult = is(checkNcuFileResult);
export const isRevealReportParams = is(checkRevealReportParams);
export const isResultsChangedParams = is(checkResultsChangedParams);
export const isShowAssemblyArgs = is(checkShowAssemblyArgs);
export const isShowGeneratedCodeArgs = is(checkShowGeneratedCodeArgs);
export const isShowInlineExtensionArgs = is(checkShowInlineExtensionArgs);
export const isShowReportArgs = is(checkShowReportArgs);
