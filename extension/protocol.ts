/**
 * The Kernel Lens language-server protocol, client side.
 *
 * This file mirrors `server/kernel_lens/lsp/protocol.py`: every method name, command id,
 * param and result shape here has a twin there, and a change to one is a change to both
 * (tests/ts/protocol.test.ts checks the names against the Python file).
 *
 * It holds types and method objects only. What arrives from the server is checked at run time
 * by `guards.ts` (a check for each request's result, each server notification's params and each
 * code lens's argument below), and tests/ts/guards.test.ts runs those checks on the server's
 * recorded answers in `tests/data/protocol/`.
 *
 * It imports no `vscode`, so it can be unit-tested under plain node.
 */
import {
  NotificationType,
  RequestType,
  type Position as LspPosition,
} from "vscode-languageserver-protocol";

/** A 0-based line and UTF-16 character offset, as in every LSP message. */
export type Position = LspPosition;

/**
 * How an at-cursor request names its function or kernel: by name (a code lens, a view), or by
 * the cursor's `position`, which the server resolves (the name wins when both are given). A
 * request resolved by position fails with a user-ready message when the cursor is in no
 * function (or kernel), and its result carries the name the server resolved.
 */
export interface AtCursor {
  /** The cursor in the document; used when the name is absent. */
  position?: Position;
}

/** Timing configuration, also pulled at run time from the `kernelLens.timing` settings. */
export interface TimingOptions {
  /** Warm-up time before timing, in milliseconds. */
  warmupMs: number;
  /** Time budget for the repetitions of one timing, in milliseconds. */
  budgetMs: number;
  /** Number of timed repetitions; 0 = adaptive (as many as fit in `budgetMs`). */
  reps: number;
}

/** `initializationOptions` of the `initialize` request. */
export interface InitializationOptions {
  /** argv prefix that starts the profiling agent; null = the server's own interpreter. */
  agentCommand: string[] | null;
  /** Time limit for one profiling job, in seconds. */
  timeoutSeconds: number;
  /** False in Restricted Mode: the server must not run any code until `kernelLens/setTrusted`. */
  workspaceTrusted: boolean;
  timing: TimingOptions;
}

/** What the server is doing, as shown in the status bar. */
export type ServerState = "idle" | "profiling" | "error";

/** The server states, for exhaustive checks and validation of incoming params. */
export const SERVER_STATES: readonly ServerState[] = ["idle", "profiling", "error"];

/**
 * Params of `kernelLens/status` (server -> client).
 *
 * `message` is, for `profiling`, the name of what is being profiled (e.g. `square`, the item
 * reads "profiling square"); for `error`, a one-line explanation; for `idle`, an optional
 * note (e.g. why nothing runs in Restricted Mode), possibly empty.
 */
export interface StatusParams {
  state: ServerState;
  message: string;
  /** The document the status is about, if any (the server may send null for none). */
  uri?: string | null;
}

/** Server -> client: the server's state changed. */
export const StatusNotification = new NotificationType<StatusParams>("kernelLens/status");

/** Params of `kernelLens/setTrusted` (client -> server). */
export interface SetTrustedParams {
  trusted: boolean;
}

/** Client -> server: the user granted workspace trust; profiling may now run code. */
export const SetTrustedNotification = new NotificationType<SetTrustedParams>(
  "kernelLens/setTrusted",
);

/**
 * `workspace/executeCommand` commands the server advertises (`executeCommandProvider`).
 *
 * vscode-languageclient registers these ids as VS Code commands itself, and the server's code
 * lenses carry them, so the extension must not register the same ids.
 */
export const ServerCommands = {
  /** Profile one function. Argument: one {@link ProfileArgs}. */
  profile: "kernelLens.profile",
  /** Profile every function of a document. Argument: one {@link ProfileAllArgs}. */
  profileAll: "kernelLens.profileAll",
} as const;

export type ServerCommand = (typeof ServerCommands)[keyof typeof ServerCommands];

/**
 * Argument of `kernelLens.profile`: the function by name, else the one enclosing `position`
 * (or the older 0-based `line`).
 */
export interface ProfileArgs extends AtCursor {
  uri: string;
  function?: string;
  /** 0-based line. */
  line?: number;
  /** The whole file, run once as `__main__` (`function`, `line` and `position` ignored). */
  script?: boolean;
}

/** Argument of `kernelLens.profileAll`. */
export interface ProfileAllArgs {
  uri: string;
}

/** Compilation stages of a `@triton.jit` kernel, in pipeline order. */
export type AsmStage = "ttir" | "ttgir" | "llir" | "ptx" | "sass";

/** The stages, in pipeline order, for pickers and validation. */
export const ASM_STAGES: readonly AsmStage[] = ["ttir", "ttgir", "llir", "ptx", "sass"];

/**
 * Params of `kernelLens/assembly`: one kernel of a document (by name, else the `@triton.jit`
 * kernel enclosing `position`), compiled to one stage.
 */
export interface AssemblyParams extends AtCursor {
  uri: string;
  /** The kernel's qualified name (`square_kernel`; a method would be `Class.name`). */
  kernel?: string;
  stage: AsmStage;
  /** Compute capability to compile for (`90` = sm_90); absent = the server's choice. */
  arch?: number;
}

/** Source line -> the lines of `asm` generated from it. */
export interface LineMapEntry {
  /** 1-based line of the user's .py file. */
  source_line: number;
  /** 1-based lines of {@link AssemblyResult.asm}. */
  asm_lines: number[];
}

/** Result of `kernelLens/assembly`. */
export interface AssemblyResult {
  kernel: string;
  stage: string;
  /** Target architecture, e.g. `sm_90`. */
  arch: string;
  /** The stage's text; shown unchanged, so that `line_map` applies to it. */
  asm: string;
  line_map: LineMapEntry[];
  /** Registers per thread (from `ptxas -v`), when known. */
  registers: number | null;
  /** Spill stores + spill loads, in bytes. */
  spills: number;
  /** The function whose launch gave the kernel's signature, if any. */
  launcher: string | null;
  warnings: string[];
}

/** Client -> server: compile a `@triton.jit` kernel and return one stage with its line map. */
export const AssemblyRequest = new RequestType<AssemblyParams, AssemblyResult, void>(
  "kernelLens/assembly",
);

/**
 * Params of `kernelLens/generatedCode`: torch.compile one function of a document (by name, else
 * the function enclosing `position`).
 */
export interface GeneratedCodeParams extends AtCursor {
  uri: string;
  /** The function's qualified name (`square`, `Class.method`). */
  function?: string;
}

/** One kernel call in inductor's output. */
export interface GeneratedKernel {
  name: string;
  kind: "triton" | "cpp" | "extern";
  /** 1-based lines of the user's source fused into this kernel. */
  lines: number[];
  /** 1-based line of the kernel's definition in the code (absent or null for extern kernels). */
  def_line?: number | null;
  /** 1-based line of the call in the code. */
  call_line: number;
}

/** Time and device work of one way of running the function. */
export interface RunSummary {
  median_ms: number;
  /** Kernel launches per call (CUDA), or top-level ATen ops per call (CPU). */
  kernels: number;
}

/** Result of `kernelLens/generatedCode`. */
export interface GeneratedCodeResult {
  function: string;
  language: "triton" | "cpp";
  /** Inductor's output module (Python), shown unchanged so that the kernels' lines apply. */
  code: string;
  /** Where the server saved `code`. */
  code_path: string;
  /** The kernels in call order (a kernel called twice appears twice). */
  kernels: GeneratedKernel[];
  summary: string;
  eager: RunSummary;
  compiled: RunSummary;
  /** Eager over compiled median time; null when not measured. */
  speedup: number | null;
}

/** Client -> server: torch.compile a function, return its generated code and eager vs compiled. */
export const GeneratedCodeRequest = new RequestType<GeneratedCodeParams, GeneratedCodeResult, void>(
  "kernelLens/generatedCode",
);

/** Params of `kernelLens/inlineExtension`: the `load_inline(...)` calls of a document. */
export interface InlineParams {
  uri: string;
  /** Compute capability to compile the PTX for (`90` = sm_90); the server's default is 90. */
  arch?: number;
  /** Also build the module with load_inline (ninja, nvcc, c++) and return its log. */
  build?: boolean;
}

/** The files load_inline writes into its build folder, as the server rebuilt them. */
export interface InlineFiles {
  /** `#include <torch/extension.h>`, the cpp_sources, and the pybind11 bindings of functions=. */
  "main.cpp": string;
  /** torch's includes, then the cuda_sources; null when the call has no cuda_sources. */
  "cuda.cu": string | null;
  /** The build file torch wrote; present only after a build (null if it wrote none). */
  "build.ninja"?: string | null;
}

/** One nvcc error or warning located in cuda.cu. */
export interface NvccProblem {
  /** `error` or `warning`. */
  severity: string;
  message: string;
  /** 1-based line of cuda.cu, when nvcc gave one. */
  cuda_line: number | null;
  /** 1-based line of the .py file it maps to, when known. */
  line: number | null;
}

/** One `load_inline(...)` call of the document and what nvcc made of it. */
export interface InlineModule {
  /** The extension's `name=`. */
  name: string;
  /** 1-based line of the `load_inline(` call. */
  call_line: number;
  /** Target architecture, e.g. `sm_90`. */
  arch: string;
  /** The nvcc that compiled it. */
  nvcc: string;
  files: InlineFiles;
  /** `nvcc -ptx -lineinfo` of cuda.cu; null when it failed or there are no cuda_sources. */
  ptx: string | null;
  /** Lines of the .py file -> lines of {@link ptx}. */
  line_map: LineMapEntry[];
  errors: NvccProblem[];
  /** load_inline's verbose build output; null unless built. */
  build_log: string | null;
  /** Where load_inline built the module; null unless built. */
  build_directory: string | null;
  /** Time nvcc took for the PTX, in seconds (absent without cuda_sources). */
  ptx_seconds?: number;
}

/** Result of `kernelLens/inlineExtension`. */
export interface InlineResult {
  /** The document's file system path. */
  path: string;
  /** In the order of the calls in the document's syntax tree. */
  modules: InlineModule[];
}

/**
 * Client -> server: the generated sources, PTX (with a line map) and nvcc errors of every
 * `load_inline(...)` call of a document; nvcc's errors are also published as diagnostics.
 */
export const InlineExtensionRequest = new RequestType<InlineParams, InlineResult, void>(
  "kernelLens/inlineExtension",
);

/**
 * Commands the server's code lenses carry that the extension registers itself (the server must
 * not advertise them in `executeCommandProvider`): they open views on the client side.
 */
export const ClientCommands = {
  /** Above each `@triton.jit` kernel. Argument: one {@link ShowAssemblyArgs}. */
  showAssembly: "kernelLens.showAssembly",
  /** Above each function. Argument: one {@link ShowGeneratedCodeArgs}. */
  showGeneratedCode: "kernelLens.showGeneratedCode",
  /** Above each profiled function. Argument: one {@link ShowReportArgs}. */
  showReport: "kernelLens.showReport",
  /** Above each `load_inline(...)` call. Argument: one {@link ShowInlineExtensionArgs}. */
  showInlineExtension: "kernelLens.showInlineExtension",
} as const;

/** Argument of `kernelLens.showAssembly` from a code lens. */
export interface ShowAssemblyArgs {
  uri: string;
  kernel: string;
}

/** Argument of `kernelLens.showGeneratedCode` from a code lens. */
export interface ShowGeneratedCodeArgs {
  uri: string;
  function: string;
}

/** Argument of `kernelLens.showInlineExtension` from a code lens. */
export interface ShowInlineExtensionArgs {
  uri: string;
  /** 1-based line of the lens's `load_inline(` call; absent = ask when there are several. */
  line?: number;
}

/** Params of `kernelLens/report`: one function of a document (by name, else at `position`). */
export interface ReportParams extends AtCursor {
  uri: string;
  /** The function's qualified name. */
  function?: string;
}

/** One kernel launched by an op of a profiled line. */
export interface ProfileKernel {
  /** The demangled name (full of `<`, `>`, `&`). */
  name: string;
  short_name: string;
  /** Device time, in microseconds, per call of the function. */
  device_us: number;
  calls: number;
}

/** One ATen op dispatched by a profiled line. */
export interface ProfileOp {
  name: string;
  /** The ops it dispatched to (e.g. `aten::square` -> `aten::pow`). */
  dispatch?: string[];
  device_us: number;
  cpu_us: number;
  calls: number;
  kernels: ProfileKernel[];
}

/** One source line of a profiled function. */
export interface ProfileLine {
  /** 1-based line of the document. */
  line: number;
  source: string;
  ops: ProfileOp[];
}

/** A kernel's totals over the whole function. */
export interface ProfileKernelTotal extends ProfileKernel {
  /** 1-based lines that launched it. */
  lines?: number[];
}

/** The timing stage's result. */
export interface ProfileTiming {
  median_ms: number;
  /** Spread of the repetitions around the median, in percent of it. */
  spread_pct: number;
  reps: number;
  /** `cuda-events` or `perf-counter`. */
  method?: string;
}

/**
 * The profile of one function, as `kernel-lens profile --json` prints it (only the fields the
 * report shows; the rest passes through unread).
 */
export interface Profile {
  function: string;
  /** The device's name (`NVIDIA H200`, `CPU`). */
  device: string;
  /** `cuda` or `cpu`. */
  device_kind?: string;
  timing: ProfileTiming | null;
  lines: ProfileLine[];
  kernels: ProfileKernelTotal[];
  trace_path?: string | null;
}

/** Where a timeline lane's events ran. */
export type LaneKind = "cpu" | "runtime" | "gpu";

/** One event (or a block of merged short events) of a timeline lane. */
export interface TimelineEvent {
  /** Start, in microseconds from the trace's first event. */
  start: number;
  /** Duration, in microseconds. */
  dur: number;
  /** Nesting depth within the lane (0 = outermost). */
  depth: number;
  name: string;
  /** A short display name (kernels: without template arguments). */
  short: string;
  /** The trace category (`cpu_op`, `kernel`, `memcpy`, `cuda_runtime`, …). */
  cat: string;
  /** 1-based source line it comes from, when known. */
  line: number | null;
  /** For a merged block: how many events it stands for. */
  count?: number;
  merged?: boolean;
}

/** A name with much of a lane's own time in view. */
export interface TimelineTop {
  name: string;
  /** Its own time in view (an event's time less its children's), microseconds. */
  us: number;
  /** Its share of the lane's own time in view, 0–1. */
  share: number;
}

/** A CPU thread, the CUDA runtime, or a GPU stream. */
export interface TimelineLane {
  id: string;
  title: string;
  kind: LaneKind;
  /** Sorted by depth, then start. */
  events: TimelineEvent[];
  /** Where the lane's time goes in view: the names with the most own time, most first. */
  top?: TimelineTop[];
}

/** A trace reduced to lanes (`server/kernel_lens/analysis/timeline.py`). */
export interface Timeline {
  /** Time from the first event's start to the last event's end, in microseconds. */
  span_us: number;
  /**
   * `[start_us, end_us]` for the detail of a window (`kernelLens/timelineWindow`): only events
   * overlapping it, merged at its scale; null or absent for the whole trace.
   */
  window?: [number, number] | null;
  /** The trace file it was read from (for `kernelLens/timelineWindow`). */
  path?: string;
  /** Complete events in the trace. */
  event_count: number;
  /** Items left after merging short neighbours. */
  kept: number;
  lanes: TimelineLane[];
}

/** Severity of an Nsight Compute rule result. */
export type NcuHintKind = "OPT" | "WRN" | "ERR";

/** One rule result of Nsight Compute. */
export interface NcuHint {
  rule: string;
  section: string;
  kind: NcuHintKind;
  title: string;
  message: string;
  /** Estimated speedup in percent, if the rule gives one. */
  speedup_pct: number | null;
  /** `local` or `global`. */
  speedup_type: string | null;
}

/** One profiled kernel launch of an Nsight Compute report; metrics are null when not collected. */
export interface NcuKernel {
  id: number;
  name: string;
  demangled: string;
  device: string | null;
  duration_us: number | null;
  compute_throughput_pct: number | null;
  memory_throughput_pct: number | null;
  dram_throughput_pct: number | null;
  dram_bandwidth_gbs: number | null;
  achieved_occupancy_pct: number | null;
  theoretical_occupancy_pct: number | null;
  registers: number | null;
  grid_size: number | null;
  block_size: number | null;
  waves: number | null;
  /** `(x, y, z)` as text, when known. */
  grid: string | null;
  block: string | null;
  /** 1-based source line that launched it (absent in a report opened from a file). */
  line?: number | null;
  /** Ranked by the server: errors, then optimisations by estimated speedup, then warnings. */
  hints: NcuHint[];
}

/** An Nsight Compute run on a function. */
export interface NcuResult {
  report_path: string;
  /** ncu's section set (`basic`, `full`). */
  set?: string;
  /** `ncu_report` or `csv`. */
  reader: string;
  kernels: NcuKernel[];
}

/** One value of a sweep: timed, or failed with `error`. */
export interface SweepRow {
  value: number;
  median_ms?: number | null;
  spread_pct?: number | null;
  reps?: number | null;
  /** Bytes read and written per call (tensor arguments and results). */
  bytes?: number | null;
  gb_per_s?: number | null;
  /** Why this value failed; null when it was timed. */
  error: string | null;
}

/** The sweep of an int parameter of a function. */
export interface SweepResult {
  param: string;
  /** The value the function is called with now, if known. */
  current: number | null;
  rows: SweepRow[];
  best: { value: number; median_ms: number };
  method: string;
  device: string;
  /** Values equal to the fastest within noise (empty: `best` is significantly faster). */
  ties?: number[];
  /** `BLOCK_SIZE 512–1024 equal within noise` / `BLOCK_SIZE 512 fastest (significantly)`. */
  verdict?: string | null;
}

/** Where the profiled run's inputs came from, in the hover's words (the server writes them). */
export interface ReportInputs {
  /** `captured at square.py:31 (time_fn → square_2) after 0.42 s of the script`, `directive, line 11`… */
  source: string;
  /** One entry per argument: `a: Tensor float32[64, 32] cpu`. */
  args: string[];
}

/** Result of `kernelLens/report`: everything known of one function (null = not run yet). */
export interface ReportResult {
  /** The function's qualified name (resolved by the server from a position). */
  function: string;
  uri: string;
  /** The function's parameters whose default is an int literal, with that default. */
  int_parameters?: Record<string, number>;
  profile: Profile | null;
  timeline: Timeline | null;
  ncu: NcuResult | null;
  sweep: SweepResult | null;
  /** The profiled run's inputs (null or absent before a run). */
  inputs?: ReportInputs | null;
}

/** Client -> server: the report panel's data for one function. */
export const ReportRequest = new RequestType<ReportParams, ReportResult, void>("kernelLens/report");

/** Params of `kernelLens/traceFile` and `kernelLens/ncuFile`: a file on disk. */
export interface FileParams {
  /** A file system path (not a URI). */
  path: string;
}

/** Result of `kernelLens/traceFile`. */
export interface TraceFileResult {
  path: string;
  timeline: Timeline;
  /** The trace summary (top kernels, ops, GPU busy time); shown in part. */
  summary: Record<string, unknown>;
}

/** Client -> server: a Chrome trace file (`.json`, `.json.gz`) reduced to a timeline. */
export const TraceFileRequest = new RequestType<FileParams, TraceFileResult, void>(
  "kernelLens/traceFile",
);

/** Result of `kernelLens/ncuFile`. */
export interface NcuFileResult {
  report_path: string;
  reader: string;
  kernels: NcuKernel[];
}

/** Client -> server: the kernels of a `.ncu-rep` file. */
export const NcuFileRequest = new RequestType<FileParams, NcuFileResult, void>(
  "kernelLens/ncuFile",
);

/** Params of `kernelLens/timelineWindow`: a window of a trace file, in microseconds from its start. */
export interface TimelineWindowParams {
  path: string;
  start_us: number;
  end_us: number;
}

/** Client -> server: a trace's events in a window, merged at the window's scale (zoomed in). */
export const TimelineWindowRequest = new RequestType<TimelineWindowParams, Timeline, void>(
  "kernelLens/timelineWindow",
);

/** The report panel's tabs a server notification may ask for. */
export type RevealTab = "timeline" | "ncu" | "sweep";

/** Params of `kernelLens/revealReport` (server -> client). */
export interface RevealReportParams {
  uri: string;
  function: string;
  tab: RevealTab;
}

/** Server -> client: open (or reveal) the report panel of a function on a tab. */
export const RevealReportNotification = new NotificationType<RevealReportParams>(
  "kernelLens/revealReport",
);

/** Params of `kernelLens/resultsChanged` (server -> client). */
export interface ResultsChangedParams {
  uri: string;
  function: string;
}

/** Server -> client: a function's results changed (profile, ncu, sweep, applied edit). */
export const ResultsChangedNotification = new NotificationType<ResultsChangedParams>(
  "kernelLens/resultsChanged",
);

/** Params of `kernelLens/traceProgress` (server -> client). */
export interface TraceProgress {
  path: string;
  /** 0 to 100. */
  percentage: number;
  message: string;
}

/**
 * Server -> client: how far reading a trace file has got (the trace viewer shows it; the
 * cancellable `$/progress` notification of the same reading is VS Code's).
 */
export const TraceProgressNotification = new NotificationType<TraceProgress>(
  "kernelLens/traceProgress",
);

/** Server commands of the report (registered as VS Code commands by vscode-languageclient). */
export const ReportServerCommands = {
  /** Nsight Compute on a function. Argument: one {@link RunNcuArgs}. */
  runNcu: "kernelLens.runNcu",
  /** Time a function over values of an int parameter. Argument: one {@link SweepArgs}. */
  sweep: "kernelLens.sweep",
  /** Write a parameter's new default as an edit. Argument: one {@link ApplyParameterArgs}. */
  applyParameter: "kernelLens.applyParameter",
} as const;

/** Argument of `kernelLens.runNcu`: the function by name, else the one enclosing `position`. */
export interface RunNcuArgs extends AtCursor {
  uri: string;
  function?: string;
  /** ncu's section set; the server's default is `basic`. */
  set?: "basic" | "full";
}

/** Argument of `kernelLens.sweep`: the function by name, else the one enclosing `position`. */
export interface SweepArgs extends AtCursor {
  uri: string;
  function?: string;
  param: string;
  /** The values to time; absent = powers of two around the current value. */
  values?: number[];
}

/** Argument of `kernelLens.applyParameter`. */
export interface ApplyParameterArgs {
  uri: string;
  function: string;
  param: string;
  value: number;
}

/** Argument of `kernelLens.showReport` from a code lens. */
export interface ShowReportArgs {
  uri: string;
  function: string;
}

/**
 * What the server commands (`kernelLens.profile`, `runNcu`, `sweep`, `applyParameter`) return:
 * `ok`, with the function they ran on (resolved from `position` when the argument had no name),
 * or the failure the server has already shown. Other fields depend on the command.
 */
export interface CommandResult {
  ok: boolean;
  /** The function's qualified name (the profile, Nsight Compute and sweep commands). */
  function?: string;
  /** Why it failed (`ok: false`), as the agent's error object. */
  error?: { kind?: string; message: string };
  /** Why it failed, for commands that give only a message. */
  message?: string;
}

/** Params of `kernelLens/functions`: the functions of a document. */
export interface FunctionsParams {
  uri: string;
}

/** What a function of the document is. */
export type FunctionKind = "function" | "method" | "triton_kernel";

/** One function of a document, as the server's lenses name it. */
export interface FunctionEntry {
  /** The qualified name (`square`, `Class.method`). */
  name: string;
  /** 0-based line of its `def` keyword. */
  line: number;
  kind: FunctionKind;
}

/** Result of `kernelLens/functions`. */
export interface FunctionsResult {
  /** In source order. */
  functions: FunctionEntry[];
}

/** Client -> server: the functions and `@triton.jit` kernels of a document (for pickers). */
export const FunctionsRequest = new RequestType<FunctionsParams, FunctionsResult, void>(
  "kernelLens/functions",
);

// The optimisation loop (issue 11): history of runs, baselines, comparisons. Mirrors the
// section of the same name in protocol.py.

/** A run of the history: an id (`"7"`), `-1` (the latest), `-2`…, or `baseline`. */
export type RunRef = string;

/** Params of `kernelLens/history`: a function by name, else the one around `position`. */
export interface HistoryParams {
  uri: string;
  function?: string;
  position?: Position;
}

/** Params of `kernelLens/setBaseline` (and of the `kernelLens.setBaseline` server command). */
export interface SetBaselineParams extends HistoryParams {
  /** The run to pin (default: the latest). */
  run?: RunRef;
  /** Unpin instead. */
  clear?: boolean;
}

/** Params of `kernelLens/compare`. */
export interface CompareParams extends HistoryParams {
  before?: RunRef;
  after?: RunRef;
}

/** How a run's time compares with a reference run (`text`: `−49.8% vs 0.383 ms`). */
export interface CompareVerdict {
  before_ms: number;
  after_ms: number;
  change_pct: number;
  /** Half-width of the ~95% interval of the ratio of medians, percent. */
  interval_pct: number;
  /** The Mann–Whitney p-value (null without raw samples). */
  p_value: number | null;
  significant: boolean;
  method: "mann-whitney" | "iqr" | "none";
  reference: string;
  text: string;
}

/** A run's timing, milliseconds (`spread_pct`: half the IQR, % of the median). */
export interface RunTiming {
  median_ms: number;
  spread_pct?: number;
  reps?: number;
  method?: string;
  q1_ms?: number;
  q3_ms?: number;
  min_ms?: number;
  max_ms?: number;
}

/** One run of a function in its history. */
export interface HistoryRun {
  id: string;
  time: string | null;
  function: string | null;
  path: string | null;
  device: string | null;
  device_kind: string | null;
  git: { commit: string; dirty: boolean } | null;
  file_hash: string | null;
  versions: Record<string, unknown>;
  inputs: string | null;
  timing: RunTiming;
  kernel_count: number;
  /** The function's lines when it ran (in the history's list). */
  text?: string[];
  /** Against the run before it (in the history's list; null for the first). */
  verdict?: CompareVerdict | null;
}

/** Result of `kernelLens/history`: the runs, oldest first, and the pinned baseline's id. */
export interface HistoryResult {
  function: string;
  uri: string;
  path: string;
  baseline: string | null;
  /** The function's lines in the document now (null: it no longer parses or exists). */
  current_text: string[] | null;
  runs: HistoryRun[];
}

/** Result of `kernelLens/setBaseline` (`baseline`: null once unpinned). */
export interface SetBaselineResult {
  function: string;
  baseline: HistoryRun | null;
}

/** One line of the later run (or a removed line): kernels (or ops) and µs on both sides. */
export interface LineDelta {
  status: "same" | "changed" | "added" | "removed";
  line: number | null;
  before_lines: number[];
  source: string;
  kernels_before: number;
  kernels_after: number;
  time_before_us: number;
  time_after_us: number;
  /** What the kernel counts count: launches (CUDA) or ATen ops (CPU). */
  unit?: "kernels" | "ops";
  /** `2 → 1 kernels: fused · device −48%`; null when nothing changed past noise. */
  text: string | null;
}

/** One kernel in two runs: launches and device µs per call. */
export interface KernelDelta {
  name: string;
  short_name: string;
  status: "same" | "added" | "removed";
  calls_before: number;
  calls_after: number;
  device_us_before: number;
  device_us_after: number;
}

/** Result of `kernelLens/compare`. */
export interface CompareResult {
  function: string;
  before: HistoryRun;
  after: HistoryRun;
  reference: string;
  reference_id: string | null;
  verdict: CompareVerdict;
  lines: LineDelta[];
  kernels: KernelDelta[];
  /** Kernel launches (ops on the CPU) per call: [before, after]. */
  kernel_count: number[];
}

/** Client -> server: the runs of a function, each against the one before. */
export const HistoryRequest = new RequestType<HistoryParams, HistoryResult, void>(
  "kernelLens/history",
);

/** Client -> server: pin (or unpin) a function's baseline; its lenses then name it. */
export const SetBaselineRequest = new RequestType<SetBaselineParams, SetBaselineResult, void>(
  "kernelLens/setBaseline",
);

/** Client -> server: two runs of a function compared (time verdict, lines, kernels). */
export const CompareRequest = new RequestType<CompareParams, CompareResult, void>(
  "kernelLens/compare",
);
