/**
 * The Kernel Lens language-server protocol, client side: one method object per `kernelLens/*`
 * request and notification, each carrying the check of what the server sends.
 *
 * The types, method names, command ids and checks are generated from the one definition,
 * `server/kernel_lens/wire/lsp.py` (`generated/wire.ts`, by `scripts/gen_wire.py`; a test fails
 * when it is stale): this file only pairs each method with them (rust-analyzer's `lsp_ext.ts`).
 * tests/ts/guards.test.ts runs the checks on the server's recorded answers in
 * `tests/data/protocol/`.
 *
 * It imports no `vscode`, so it can be unit-tested under plain node.
 */
import { NotificationType, RequestType } from "vscode-languageserver-protocol";
import { Invalid, is, record, type Check } from "./guards";
import {
  CLIENT_COMMAND_CHECKS,
  CMD_APPLY_PARAMETER,
  CMD_CHECK_MEMORY,
  CMD_CHOOSE_INTERPRETER,
  CMD_SET_BASELINE_AT_CURSOR,
  CMD_SHOW_OUTPUT,
  CMD_COMPARE_ASSEMBLY,
  CMD_PROFILE,
  CMD_PROFILE_ALL,
  CMD_PROFILE_LIGHT,
  CMD_PROFILE_SCRIPT_LIGHT,
  CMD_PROFILE_SCRIPT_WINDOW,
  CMD_RUN_NCU,
  CMD_DEBUG_KERNEL,
  CMD_SCRIPT_ARGUMENTS,
  CMD_CHOOSE_DRIVER,
  CMD_SHOW_ASSEMBLY,
  CMD_SHOW_GENERATED_CODE,
  CMD_SHOW_INLINE,
  CMD_SHOW_ERROR,
  CMD_REVEAL_LINE,
  CMD_ATTRIBUTE_INSIDE,
  CMD_SHOW_REPORT,
  CMD_SHOW_VALUES,
  CMD_PROFILE_KERNEL_LINES,
  CMD_SWEEP,
  NOTIFICATION_CHECKS,
  NOTIFY_RESULTS_CHANGED,
  NOTIFY_REVEAL,
  NOTIFY_SET_TRUSTED,
  NOTIFY_STATUS,
  NOTIFY_TRACE_PROGRESS,
  NOTIFY_TRACE_READY,
  REQ_ASM_DIFF,
  REQ_ASSEMBLY,
  REQ_COMPARE,
  REQ_FUNCTIONS,
  REQ_GENERATED_CODE,
  REQ_HISTORY,
  REQ_INLINE,
  REQ_NCU_FILE,
  REQ_REPORT,
  REQ_SET_BASELINE,
  REQ_TIMELINE_WINDOW,
  REQ_TRACE_FILE,
  REQ_VALUES,
  REQ_KERNEL_LINES,
  RESULT_CHECKS,
  checkCommandResult,
  checkProfile,
  checkSweepResult,
  checkTimeline,
  type NotificationTypes,
  type RequestTypes,
} from "./generated/wire";

/** A request with the check of its result (see `requests.ts`'s `sendChecked`). */
export interface CheckedRequest<P, R> extends RequestType<P, R, void> {
  readonly check: Check<R>;
}

/** A `kernelLens/*` request: its params and result types, and its result's check. */
export class Request<M extends keyof RequestTypes>
  extends RequestType<RequestTypes[M]["params"], RequestTypes[M]["result"], void>
  implements CheckedRequest<RequestTypes[M]["params"], RequestTypes[M]["result"]>
{
  readonly check: Check<RequestTypes[M]["result"]>;

  constructor(method: M) {
    super(method);
    this.check = RESULT_CHECKS[method];
  }
}

/** A `kernelLens/*` notification: its params type and their check. */
export class Notification<M extends keyof NotificationTypes> extends NotificationType<
  NotificationTypes[M]
> {
  readonly check: Check<NotificationTypes[M]>;

  constructor(method: M) {
    super(method);
    this.check = NOTIFICATION_CHECKS[method];
  }
}

/** Server -> client: the server's state changed. */
export const StatusNotification = new Notification(NOTIFY_STATUS);

/** Client -> server: the user granted workspace trust; profiling may now run code. */
export const SetTrustedNotification = new Notification(NOTIFY_SET_TRUSTED);

/** Client -> server: compile a `@triton.jit` kernel and return one stage with its line map. */
export const AssemblyRequest = new Request(REQ_ASSEMBLY);

/**
 * Client -> server: two kernels' PTX or SASS (Triton, load_inline CUDA, another BLOCK_SIZE, an
 * earlier text), normalised and summarised, for the diff editor.
 */
export const AsmDiffRequest = new Request(REQ_ASM_DIFF);

/** Client -> server: torch.compile a function, return its generated code and eager vs compiled. */
export const GeneratedCodeRequest = new Request(REQ_GENERATED_CODE);

/**
 * Client -> server: the generated sources, PTX (with a line map) and nvcc errors of every
 * `load_inline(...)` call of a document; nvcc's errors are also published as diagnostics.
 */
export const InlineExtensionRequest = new Request(REQ_INLINE);

/** Client -> server: the report panel's data for one function. */
export const ReportRequest = new Request(REQ_REPORT);

/** Client -> server: a Chrome trace file (`.json`, `.json.gz`) reduced to a timeline. */
export const TraceFileRequest = new Request(REQ_TRACE_FILE);

/** Client -> server: the kernels of a `.ncu-rep` file. */
export const NcuFileRequest = new Request(REQ_NCU_FILE);

/** Client -> server: a trace's events in a window, merged at the window's scale (zoomed in). */
export const TimelineWindowRequest = new Request(REQ_TIMELINE_WINDOW);

/** Client -> server: the functions and `@triton.jit` kernels of a document (for pickers). */
export const FunctionsRequest = new Request(REQ_FUNCTIONS);

/** Client -> server: the runs of a function, each against the one before. */
export const HistoryRequest = new Request(REQ_HISTORY);

/** Client -> server: pin (or unpin) a function's baseline; its lenses then name it. */
export const SetBaselineRequest = new Request(REQ_SET_BASELINE);

/** Client -> server: two runs of a function compared (time verdict, lines, kernels). */
export const CompareRequest = new Request(REQ_COMPARE);

/**
 * Client -> server: a kernel's launch run under Triton's interpreter, each line's values for a
 * program; its out-of-bounds loads and stores are also published as diagnostics.
 */
export const ValuesRequest = new Request(REQ_VALUES);

/**
 * Client -> server: Profile Kernel Lines, a kernel's Nsight Compute source counters (warp-stall
 * samples, executed instructions) per line of the kernel.
 */
export const KernelLinesRequest = new Request(REQ_KERNEL_LINES);

/** Server -> client: open (or reveal) the report panel of a function on a tab. */
export const RevealReportNotification = new Notification(NOTIFY_REVEAL);

/** Server -> client: a function's results changed (profile, ncu, sweep, applied edit). */
export const ResultsChangedNotification = new Notification(NOTIFY_RESULTS_CHANGED);

/**
 * Server -> client: how far reading a trace file has got (the trace viewer shows it; the
 * cancellable `$/progress` notification of the same reading is VS Code's).
 */
export const TraceProgressNotification = new Notification(NOTIFY_TRACE_PROGRESS);

/** Server -> client: a trace answered with a first view (`partial`) is now read whole. */
export const TraceReadyNotification = new Notification(NOTIFY_TRACE_READY);

/** Every request's method object, for the tests that every generated request has one. */
export const REQUESTS: readonly Request<keyof RequestTypes>[] = [
  AssemblyRequest,
  AsmDiffRequest,
  GeneratedCodeRequest,
  InlineExtensionRequest,
  ReportRequest,
  TraceFileRequest,
  NcuFileRequest,
  TimelineWindowRequest,
  FunctionsRequest,
  HistoryRequest,
  SetBaselineRequest,
  CompareRequest,
  ValuesRequest,
  KernelLinesRequest,
];

/**
 * `workspace/executeCommand` commands the server advertises (`executeCommandProvider`).
 *
 * vscode-languageclient registers these ids as VS Code commands itself, and the server's code
 * lenses carry them, so the extension must not register the same ids.
 */
export const ServerCommands = {
  /** Profile one function. Argument: one `ProfileArgs`. */
  profile: CMD_PROFILE,
  /** Profile every function of a document. Argument: one `ProfileAllArgs`. */
  profileAll: CMD_PROFILE_ALL,
  /** The light whole-run profile of a script (Proton). Argument: one `ProfileLightArgs`. */
  profileLight: CMD_PROFILE_LIGHT,
} as const;

/** Server commands of the report (registered as VS Code commands by vscode-languageclient). */
export const ReportServerCommands = {
  /** Nsight Compute on a function. Argument: one `RunNcuArgs`. */
  runNcu: CMD_RUN_NCU,
  /** Time a function over values of an int parameter. Argument: one `SweepArgs`. */
  sweep: CMD_SWEEP,
  /** Write a parameter's new default as an edit. Argument: one `ApplyParameterArgs`. */
  applyParameter: CMD_APPLY_PARAMETER,
  /** Check Memory: a function's call under compute-sanitizer. Argument: one `CheckMemoryArgs`. */
  checkMemory: CMD_CHECK_MEMORY,
} as const;

/**
 * Commands the server's code lenses carry that the extension registers itself (the server must
 * not advertise them in `executeCommandProvider`): they open views on the client side.
 */
export const ClientCommands = {
  /** Above each `@triton.jit` kernel. Argument: one `ShowAssemblyArgs`. */
  showAssembly: CMD_SHOW_ASSEMBLY,
  /** In a kernel's `…` (and its assembly view, the palette). Argument: `ShowAssemblyArgs`. */
  compareAssembly: CMD_COMPARE_ASSEMBLY,
  /** Above each function. Argument: one `ShowGeneratedCodeArgs`. */
  showGeneratedCode: CMD_SHOW_GENERATED_CODE,
  /** Above each profiled function. Argument: one `ShowReportArgs`. */
  showReport: CMD_SHOW_REPORT,
  /** Above each `load_inline(...)` call. Argument: one `ShowInlineExtensionArgs`. */
  showInlineExtension: CMD_SHOW_INLINE,
  /** A failed profile's lens: the whole error and its actions. Argument: one `ShowErrorArgs`. */
  showError: CMD_SHOW_ERROR,
  /** An error's *Go to Line*. Argument: one `RevealLineArgs`. */
  revealLine: CMD_REVEAL_LINE,
  /**
   * A line mostly inside an installed package: the run again with it attributed inside, and
   * the offer to add it to `kernelLens.attributeInPackages`. Argument: one `AttributeInsideArgs`.
   */
  attributeInside: CMD_ATTRIBUTE_INSIDE,
  /** Above each `@triton.jit` kernel: values per line. Argument: one `ShowValuesArgs`. */
  showValues: CMD_SHOW_VALUES,
  /** Above each `@triton.jit` kernel: a debug session. Argument: one `DebugKernelArgs`. */
  debugKernel: CMD_DEBUG_KERNEL,
  /** The `args:` lens, a failure's *Arguments…*. Argument: one `ScriptArgumentsArgs`. */
  scriptArguments: CMD_SCRIPT_ARGUMENTS,
  /** The driver lens, a failure's *Change the Driver…*. Argument: one `DriverQuery`. */
  chooseDriver: CMD_CHOOSE_DRIVER,
  /** In a kernel's `…`: its source counters per line. Argument: `ProfileKernelLinesArgs`. */
  profileKernelLines: CMD_PROFILE_KERNEL_LINES,
  /** In a function's More…, the palette. Argument: `SetBaselineAtCursorArgs`, or none. */
  setBaselineAtCursor: CMD_SET_BASELINE_AT_CURSOR,
  /** An error's *Choose Interpreter*, the palette. No argument. */
  chooseInterpreter: CMD_CHOOSE_INTERPRETER,
  /** An error's *Show Output*, the status item, the palette. No argument. */
  showOutput: CMD_SHOW_OUTPUT,
  /** The script's `Light` lens and More…, the palette. Argument: `ProfileScriptArgs`, or none. */
  profileScriptLight: CMD_PROFILE_SCRIPT_LIGHT,
  /** A light result's *Deep Trace of a Window…*, the palette. `ProfileScriptArgs`, or none. */
  profileScriptWindow: CMD_PROFILE_SCRIPT_WINDOW,
} as const;

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

// Type guards, where a yes or no is enough.

export const isStatusParams = is(StatusNotification.check);
export const isRevealReportParams = is(RevealReportNotification.check);
export const isResultsChangedParams = is(ResultsChangedNotification.check);
export const isAssemblyResult = is(AssemblyRequest.check);
export const isGeneratedCodeResult = is(GeneratedCodeRequest.check);
export const isInlineResult = is(InlineExtensionRequest.check);
export const isReportResult = is(ReportRequest.check);
export const isTraceFileResult = is(TraceFileRequest.check);
export const isNcuFileResult = is(NcuFileRequest.check);
export const isProfile = is(checkProfile);
export const isTimeline = is(checkTimeline);
export const isSweepResult = is(checkSweepResult);
export const isShowAssemblyArgs = is(CLIENT_COMMAND_CHECKS[CMD_SHOW_ASSEMBLY]);
export const isShowGeneratedCodeArgs = is(CLIENT_COMMAND_CHECKS[CMD_SHOW_GENERATED_CODE]);
export const isShowInlineExtensionArgs = is(CLIENT_COMMAND_CHECKS[CMD_SHOW_INLINE]);
export const isShowReportArgs = is(CLIENT_COMMAND_CHECKS[CMD_SHOW_REPORT]);
export const isShowErrorArgs = is(CLIENT_COMMAND_CHECKS[CMD_SHOW_ERROR]);
export const isRevealLineArgs = is(CLIENT_COMMAND_CHECKS[CMD_REVEAL_LINE]);
export const isAttributeInsideArgs = is(CLIENT_COMMAND_CHECKS[CMD_ATTRIBUTE_INSIDE]);
export const isShowValuesArgs = is(CLIENT_COMMAND_CHECKS[CMD_SHOW_VALUES]);
export const isDebugKernelArgs = is(CLIENT_COMMAND_CHECKS[CMD_DEBUG_KERNEL]);
export const isProfileKernelLinesArgs = is(CLIENT_COMMAND_CHECKS[CMD_PROFILE_KERNEL_LINES]);
export const isSetBaselineAtCursorArgs = is(CLIENT_COMMAND_CHECKS[CMD_SET_BASELINE_AT_CURSOR]);
export const isProfileScriptArgs = is(CLIENT_COMMAND_CHECKS[CMD_PROFILE_SCRIPT_LIGHT]);
