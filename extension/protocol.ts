/**
 * The Kernel Lens language-server protocol, client side.
 *
 * This file mirrors `server/kernel_lens/lsp/protocol.py`: every method name, command id and
 * param shape here has a twin there, and a change to one is a change to both
 * (tests/ts/protocol.test.ts checks the names against the Python file when it exists).
 *
 * It imports no `vscode`, so it can be unit-tested under plain node.
 */
import { NotificationType, RequestType } from "vscode-languageserver-protocol";

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

/** Argument of `kernelLens.profile`: the function by name, or the one enclosing `line`. */
export interface ProfileArgs {
  uri: string;
  function?: string;
  /** 0-based line. */
  line?: number;
}

/** Argument of `kernelLens.profileAll`. */
export interface ProfileAllArgs {
  uri: string;
}

/** Checks untrusted JSON from the wire before it drives the UI. */
export function isStatusParams(value: unknown): value is StatusParams {
  if (typeof value !== "object" || value === null) {
    return false;
  }
  const v = value as Record<string, unknown>;
  return (
    typeof v["state"] === "string" &&
    (SERVER_STATES as readonly string[]).includes(v["state"]) &&
    typeof v["message"] === "string" &&
    (v["uri"] === undefined || v["uri"] === null || typeof v["uri"] === "string")
  );
}

/** Compilation stages of a `@triton.jit` kernel, in pipeline order. */
export type AsmStage = "ttir" | "ttgir" | "llir" | "ptx" | "sass";

/** The stages, in pipeline order, for pickers and validation. */
export const ASM_STAGES: readonly AsmStage[] = ["ttir", "ttgir", "llir", "ptx", "sass"];

/** Params of `kernelLens/assembly`: one kernel of a document, compiled to one stage. */
export interface AssemblyParams {
  uri: string;
  /** The kernel's qualified name (`square_kernel`; a method would be `Class.name`). */
  kernel: string;
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

/** Params of `kernelLens/generatedCode`: torch.compile one function of a document. */
export interface GeneratedCodeParams {
  uri: string;
  /** The function's qualified name (`square`, `Class.method`). */
  function: string;
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

/**
 * Commands the server's code lenses carry that the extension registers itself (the server must
 * not advertise them in `executeCommandProvider`): they open views on the client side.
 */
export const ClientCommands = {
  /** Above each `@triton.jit` kernel. Argument: one {@link ShowAssemblyArgs}. */
  showAssembly: "kernelLens.showAssembly",
  /** Above each function. Argument: one {@link ShowGeneratedCodeArgs}. */
  showGeneratedCode: "kernelLens.showGeneratedCode",
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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isLineList(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((n) => Number.isInteger(n));
}

/** Checks a code lens's argument to `kernelLens.showAssembly`. */
export function isShowAssemblyArgs(value: unknown): value is ShowAssemblyArgs {
  return isRecord(value) && typeof value["uri"] === "string" && typeof value["kernel"] === "string";
}

/** Checks a code lens's argument to `kernelLens.showGeneratedCode`. */
export function isShowGeneratedCodeArgs(value: unknown): value is ShowGeneratedCodeArgs {
  return (
    isRecord(value) && typeof value["uri"] === "string" && typeof value["function"] === "string"
  );
}

/** Checks a `kernelLens/assembly` result before it drives the UI. */
export function isAssemblyResult(value: unknown): value is AssemblyResult {
  return (
    isRecord(value) &&
    typeof value["kernel"] === "string" &&
    typeof value["stage"] === "string" &&
    typeof value["arch"] === "string" &&
    typeof value["asm"] === "string" &&
    Array.isArray(value["line_map"]) &&
    value["line_map"].every(
      (e: unknown) =>
        isRecord(e) && Number.isInteger(e["source_line"]) && isLineList(e["asm_lines"]),
    ) &&
    (value["registers"] === null || typeof value["registers"] === "number") &&
    typeof value["spills"] === "number" &&
    (value["launcher"] === null || typeof value["launcher"] === "string") &&
    Array.isArray(value["warnings"]) &&
    value["warnings"].every((w) => typeof w === "string")
  );
}

function isRunSummary(value: unknown): value is RunSummary {
  return (
    isRecord(value) &&
    typeof value["median_ms"] === "number" &&
    typeof value["kernels"] === "number"
  );
}

function isGeneratedKernel(value: unknown): value is GeneratedKernel {
  return (
    isRecord(value) &&
    typeof value["name"] === "string" &&
    (value["kind"] === "triton" || value["kind"] === "cpp" || value["kind"] === "extern") &&
    isLineList(value["lines"]) &&
    (value["def_line"] === undefined ||
      value["def_line"] === null ||
      Number.isInteger(value["def_line"])) &&
    Number.isInteger(value["call_line"])
  );
}

/** Checks a `kernelLens/generatedCode` result before it drives the UI. */
export function isGeneratedCodeResult(value: unknown): value is GeneratedCodeResult {
  return (
    isRecord(value) &&
    typeof value["function"] === "string" &&
    (value["language"] === "triton" || value["language"] === "cpp") &&
    typeof value["code"] === "string" &&
    typeof value["code_path"] === "string" &&
    Array.isArray(value["kernels"]) &&
    value["kernels"].every(isGeneratedKernel) &&
    typeof value["summary"] === "string" &&
    isRunSummary(value["eager"]) &&
    isRunSummary(value["compiled"]) &&
    (value["speedup"] === null || typeof value["speedup"] === "number")
  );
}
