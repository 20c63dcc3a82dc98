/**
 * Names the extension registers with VS Code. Pure, so the manifest test can check them
 * against package.json.
 */
import { ClientCommands } from "./protocol";

/** Commands the extension itself registers (the server's own `kernelLens.profile` and
 * `kernelLens.profileAll` are registered by vscode-languageclient; see `protocol.ts`). */
export const Commands = {
  profileAtCursor: "kernelLens.profileAtCursor",
  /** The function at the cursor, each call followed by the backward of its output. */
  profileWithBackward: "kernelLens.profileWithBackward",
  /** The function at the cursor with memory: each line's allocations, the peak, what is alive. */
  profileMemory: "kernelLens.profileMemory",
  profileFile: "kernelLens.profileFile",
  /** The whole file, run once as `__main__` (also the server's `Profile Script` lens). */
  profileScript: "kernelLens.profileScript",
  /** A window of the script's run: N steps unprofiled, the next M profiled, then stopped. */
  profileScriptWindow: ClientCommands.profileScriptWindow,
  /** The whole file, run once under Triton's Proton: every line's kernel time, light. */
  profileScriptLight: ClientCommands.profileScriptLight,
  showOutput: ClientCommands.showOutput,
  restartServer: "kernelLens.restartServer",
  runNcuAtCursor: "kernelLens.runNcuAtCursor",
  /** Check Memory (compute-sanitizer, a GPU) of the function at the cursor. */
  checkMemoryAtCursor: "kernelLens.checkMemoryAtCursor",
  /** Also the command of the server's lens above each function (`protocol.ts`). */
  showGeneratedCode: ClientCommands.showGeneratedCode,
  /** Also the command of the server's lens above each `@triton.jit` kernel. */
  showAssembly: ClientCommands.showAssembly,
  /** Pick a kernel's argument types in its assembly view's title bar (compiles it again). */
  assemblyArgumentTypes: "kernelLens.assemblyArgumentTypes",
  /** A kernel's assembly beside another's in the diff editor, normalised and summarised. */
  compareAssembly: ClientCommands.compareAssembly,
  /** The Compare Assembly diff's title bar: normalised ↔ original texts. */
  toggleAsmDiffText: "kernelLens.toggleAsmDiffText",
  /** Also the command of the server's "Report" lens above each profiled function. */
  showReport: ClientCommands.showReport,
  /** Also the command of the server's lens above each `load_inline(...)` call. */
  showInlineExtension: ClientCommands.showInlineExtension,
  /** A failed profile's lens: the whole error, with the actions that can fix it. */
  showError: ClientCommands.showError,
  /** An error's *Go to Line* (a 1-based line of a document). */
  revealLine: ClientCommands.revealLine,
  /** A line mostly inside an installed package: run again attributed inside it (issue 48). */
  attributeInside: ClientCommands.attributeInside,
  /** Above a kernel: its values per line under Triton's interpreter, for a program. */
  showValues: ClientCommands.showValues,
  /** Above a kernel: a debugpy session of its launch under the interpreter. */
  debugKernel: ClientCommands.debugKernel,
  /** Also in the kernel's `…`: Nsight Compute's source counters on the kernel's lines. */
  profileKernelLines: ClientCommands.profileKernelLines,
  /** Hide the kernel-line figures Profile Kernel Lines put on the editor. */
  clearKernelLines: "kernelLens.clearKernelLines",
  /** A recorded `.ncu-rep` (source counters) on the active editor's kernel lines. */
  kernelLinesFromReport: "kernelLens.kernelLinesFromReport",
  /** The sampled SASS of the kernel whose lines are shown, each instruction's samples marked. */
  showSampledSass: "kernelLens.showSampledSass",
  /** A load_inline module's files and build, from its views' title bar and status bar item. */
  openInlineFile: "kernelLens.openInlineFile",
  /** A script's arguments, kept for every run of it (the `args:` lens, the palette). */
  scriptArguments: ClientCommands.scriptArguments,
  /** Pick, change or clear the driver a function takes its inputs from. */
  chooseDriver: ClientCommands.chooseDriver,
  /** Pin the latest run of the function at the cursor as its baseline (issue 11). */
  setBaselineAtCursor: ClientCommands.setBaselineAtCursor,
  /** The Python extension's interpreter picker where it is installed, else the setting. */
  chooseInterpreter: ClientCommands.chooseInterpreter,
} as const;

export type Command = (typeof Commands)[keyof typeof Commands];

/** Language client id (also the prefix vscode-languageclient uses for its own settings). */
export const CLIENT_ID = "kernelLens";

/** Name of the output channel, the language client and the status bar item. */
export const DISPLAY_NAME = "Kernel Lens";

/** The language the server serves. */
export const LANGUAGE = "python";

/** The Python extension, used for the interpreter when installed (never required). */
export const PYTHON_EXTENSION_ID = "ms-python.python";

/** Theme colour of the lines linked to the selection in the other editor (package.json). */
export const LINKED_LINE_COLOR = "kernelLens.linkedLineBackground";

/** Global state key of the stage last picked in Show Assembly. */
export const LAST_STAGE_KEY = "kernelLens.lastAssemblyStage";
