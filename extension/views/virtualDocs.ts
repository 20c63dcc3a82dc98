/**
 * The read-only documents Kernel Lens opens beside the source: a kernel's compiled stages and
 * torch.compile's generated code. What each one is, its `kernel-lens:` URI, and the text of the
 * status bar item shown while it is the active editor.
 *
 * Pure (no `vscode` import), so it is unit-tested under plain node; `documents.ts` turns the URI
 * parts into a `vscode.Uri` (`Uri.from({ scheme, path, query })`), whose `query` gives back
 * exactly the query built here.
 */
import {
  INLINE_FILES,
  INLINE_FILE_DESCRIPTIONS,
  inlineFileTitle,
  problemCounts,
  type InlineFile,
} from "./inline";
import {
  ASM_STAGES,
  type AsmStage,
  type AssemblyResult,
  type GeneratedCodeResult,
  type InlineModule,
} from "../generated/wire";
import { fileName } from "../status";

/** URI scheme of the documents. */
export const SCHEME = "kernel-lens";

/** A kernel of `source` compiled to one stage. */
export interface AssemblyView {
  kind: "assembly";
  /** The source document's URI (as `vscode.Uri.toString()` gives it). */
  source: string;
  kernel: string;
  stage: AsmStage;
}

/** torch.compile's output for a function of `source`. */
export interface GeneratedCodeView {
  kind: "generatedCode";
  source: string;
  function: string;
}

/** A file of a `load_inline(...)` module of `source`: its PTX, generated sources, build log. */
export interface InlineView {
  kind: "inline";
  source: string;
  /** The module's `name=`. */
  module: string;
  file: InlineFile;
}

export type View = AssemblyView | GeneratedCodeView | InlineView;

/** Display names of the stages, in pipeline order. */
export const STAGE_LABELS: Readonly<Record<AsmStage, string>> = {
  ttir: "TTIR",
  ttgir: "TTGIR",
  llir: "LLIR",
  ptx: "PTX",
  sass: "SASS",
};

/** One-line descriptions of the stages, for the stage picker. */
export const STAGE_DESCRIPTIONS: Readonly<Record<AsmStage, string>> = {
  ttir: "Triton IR: the kernel as Triton ops",
  ttgir: "Triton GPU IR: with layouts for the target",
  llir: "LLVM IR",
  ptx: "PTX: NVIDIA's virtual instruction set",
  sass: "SASS: the GPU's machine code",
};

/** The stage picked when the user has never picked one. */
export const DEFAULT_STAGE: AsmStage = "ptx";

/**
 * The language to give a view's document, given the one VS Code detected from its file
 * extension; undefined to keep that one.
 *
 * Generated code is Python. IR and assembly keep what VS Code picked (plain text, or the
 * language of a PTX or LLVM extension the user installed), except that `.sass` is also the
 * extension of Sass stylesheets, which would colour SASS as CSS. A load_inline module's
 * `main.cpp` is C++ and its `cuda.cu` CUDA C++ (`cuda-cpp`, where VS Code knows it, else C++);
 * its PTX, build.ninja and build log keep VS Code's pick (plain text, or `log` for the log).
 *
 * Args:
 *   available: the language ids VS Code knows (`vscode.languages.getLanguages()`).
 */
export function languageFor(
  view: View,
  detected: string,
  available: readonly string[] = [],
): string | undefined {
  if (view.kind === "generatedCode") {
    return detected === "python" ? undefined : "python";
  }
  if (view.kind === "inline") {
    const wanted =
      view.file === "main.cpp"
        ? "cpp"
        : view.file === "cuda.cu"
          ? available.includes("cuda-cpp")
            ? "cuda-cpp"
            : "cpp"
          : undefined;
    return wanted === detected ? undefined : wanted;
  }
  return detected === "sass" || detected === "scss" ? "plaintext" : undefined;
}

/** A path segment that names without nesting: no `/`, `\`, `?` or `#`. */
function segment(name: string): string {
  const safe = name.replace(/[/\\?#]/g, "_").trim();
  return safe === "" ? "_" : safe;
}

/** The parts of a view's `kernel-lens:` URI. */
export interface UriParts {
  scheme: typeof SCHEME;
  /**
   * `/<source file>/<kernel>.<stage>` or `/<source file>/<function>.compiled.py`: the last
   * segment is the editor tab's title and its extension the stage (and the language). A
   * load_inline module's files are one level deeper, under `load_inline/` (package.json's menus
   * tell them apart by that): `/<source file>/load_inline/<module>.ptx` and
   * `/<source file>/load_inline/<module>/<file>` (`main.cpp`, `cuda.cu`, `build.ninja`,
   * `build.log`).
   */
  path: string;
  /** What the view is, in full (the path is for people and may be ambiguous). */
  query: string;
}

/** The URI parts of a view; one view, one URI, so showing it again refreshes the same tab. */
export function viewUri(view: View): UriParts {
  const dir = segment(fileName(view.source));
  if (view.kind === "assembly") {
    return {
      scheme: SCHEME,
      path: `/${dir}/${segment(view.kernel)}.${view.stage}`,
      query: new URLSearchParams({
        view: view.kind,
        source: view.source,
        kernel: view.kernel,
        stage: view.stage,
      }).toString(),
    };
  }
  if (view.kind === "inline") {
    const module = segment(view.module);
    return {
      scheme: SCHEME,
      path:
        view.file === "ptx"
          ? `/${dir}/load_inline/${module}.ptx`
          : `/${dir}/load_inline/${module}/${view.file}`,
      query: new URLSearchParams({
        view: view.kind,
        source: view.source,
        module: view.module,
        file: view.file,
      }).toString(),
    };
  }
  return {
    scheme: SCHEME,
    path: `/${dir}/${segment(view.function)}.compiled.py`,
    query: new URLSearchParams({
      view: view.kind,
      source: view.source,
      function: view.function,
    }).toString(),
  };
}

/** The view a `kernel-lens:` URI's query names, or undefined if it names none. */
export function parseViewQuery(query: string): View | undefined {
  const params = new URLSearchParams(query);
  const source = params.get("source");
  if (source === null || source === "") {
    return undefined;
  }
  switch (params.get("view")) {
    case "assembly": {
      const kernel = params.get("kernel");
      const stage = params.get("stage");
      const known = ASM_STAGES.find((s) => s === stage);
      return kernel === null || kernel === "" || known === undefined
        ? undefined
        : { kind: "assembly", source, kernel, stage: known };
    }
    case "generatedCode": {
      const fn = params.get("function");
      return fn === null || fn === "" ? undefined : { kind: "generatedCode", source, function: fn };
    }
    case "inline": {
      const module = params.get("module");
      const file = INLINE_FILES.find((f) => f === params.get("file"));
      return module === null || module === "" || file === undefined
        ? undefined
        : { kind: "inline", source, module, file };
    }
    default:
      return undefined;
  }
}

/** Text shown for a view whose content is gone (e.g. a tab restored after a window reload). */
export function placeholderText(view: View | undefined): string {
  const what =
    view === undefined
      ? "this view"
      : view.kind === "assembly"
        ? `the ${STAGE_LABELS[view.stage]} of ${view.kernel}`
        : view.kind === "inline"
          ? `the ${inlineFileTitle(view.module, view.file)} of load_inline module ${view.module}`
          : `the generated code of ${view.function}`;
  const command =
    view?.kind === "generatedCode"
      ? "Show Generated Code"
      : view?.kind === "inline"
        ? "Show load_inline Build"
        : "Show Assembly";
  return `Kernel Lens no longer has ${what}: run "Kernel Lens: ${command}" again.\n`;
}

/** The status bar item's content while a view is the active editor. */
export interface ViewInfo {
  /** Status bar text, with codicons. */
  text: string;
  /** Hover text (plain). */
  tooltip: string;
  /** True when something deserves attention (spilled registers, warnings). */
  warning: boolean;
  /** A command the item runs on a click, with the view's `vscode.Uri` as its argument. */
  command?: string;
}

const LINKING =
  "Select a source line to highlight what it became here; select a line here to highlight its source.";

/** A duration in milliseconds: `12.3 µs` below 0.1 ms, `1.23 ms` to 100 ms, `1234 ms` above. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) {
    return "–";
  }
  if (ms < 0.1) {
    return `${Number((ms * 1000).toPrecision(3))} µs`;
  }
  return ms < 100 ? `${Number(ms.toPrecision(3))} ms` : `${ms.toFixed(0)} ms`;
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Tooltip lines: where the assembly came from, the launch's options, an autotuner's choice. */
function originLines(result: AssemblyResult): string[] {
  const lines: string[] = [];
  if (result.compiled_from === "launch") {
    lines.push("From the launch: the compiled kernel that ran (Triton's JIT cache)");
  } else if (result.compiled_from === "ahead_of_time") {
    lines.push(result.compiled_note ?? `Compiled ahead of time for ${result.arch}, not the launch`);
  }
  const options = [
    result.num_warps === undefined || result.num_warps === null
      ? null
      : `${result.num_warps} warps`,
    result.num_stages === undefined || result.num_stages === null
      ? null
      : `${result.num_stages} stages`,
    result.shared_bytes === undefined || result.shared_bytes === null
      ? null
      : `${result.shared_bytes} B shared memory`,
  ].filter((x): x is string => x !== null);
  if (options.length > 0) {
    lines.push(options.join(" · "));
  }
  const tuned = result.autotune;
  if (tuned !== undefined && tuned !== null) {
    lines.push(`Autotuned: chose ${tuned.chosen}`);
    for (const row of tuned.configs) {
      const ms = row.ms === null ? "not timed" : formatMs(row.ms);
      lines.push(`${row.chosen ? "★" : "  "} ${row.config}: ${ms}`);
    }
  }
  return lines;
}

/**
 * The registers line of the tooltip. Nsight Compute's "Registers Per Thread" never reads under 16
 * (on the H200 a kernel using 10 read 16 there, one using 28 read 28), so both are said when
 * they differ.
 */
export function registersLine(registers: number): string {
  const reported = Math.max(registers, 16);
  return reported === registers
    ? `Registers per thread: ${registers}`
    : `Registers per thread: ${registers} used (Nsight Compute reports ${reported}: its floor)`;
}

/** Status bar content for a kernel's compiled stage: arch, registers, spills, its origin. */
export function assemblyInfo(result: AssemblyResult, stage: AsmStage): ViewInfo {
  const parts = [`$(chip) ${STAGE_LABELS[stage]}`, result.arch];
  if (result.registers !== null) {
    parts.push(plural(result.registers, "register", "registers"));
  }
  parts.push(result.spills === 0 ? "no spills" : `${result.spills} B spilled`);
  // The kernel that ran, or one compiled again here: a count off by 2× sends the user after
  // the wrong limiter, so where the numbers come from is in sight.
  if (result.compiled_from === "launch") {
    parts.push("from the launch");
  } else if (result.compiled_from === "ahead_of_time") {
    parts.push("ahead of time");
  }
  // Types not from a real launch are said where the numbers are: they may not be the real ones.
  if (result.types_from === "text") {
    parts.push("types read from the source");
  } else if (result.types_from === "suggested") {
    parts.push("types from suggested inputs");
  } else if (result.types_from === "user") {
    parts.push("types picked");
  }
  const launchedBy =
    result.types_from === "launch"
      ? result.launcher === null
        ? ""
        : `, as ${result.launcher} launches it`
      : ` (${result.types_note ?? "types not from a launch"})`;
  const tooltip = [
    `${result.kernel} compiled to ${STAGE_LABELS[stage]} for ${result.arch}${launchedBy}`,
    result.registers === null ? "Registers per thread: unknown" : registersLine(result.registers),
    `Register spills: ${result.spills} bytes (stores + loads)`,
    ...originLines(result),
    ...result.warnings.filter((w) => w !== result.types_note).map((w) => `Warning: ${w}`),
    result.line_map.length === 0 ? "No line information in this stage." : LINKING,
  ];
  return {
    text: parts.join(" · "),
    tooltip: tooltip.join("\n"),
    warning: result.spills > 0 || result.warnings.length > 0,
  };
}

/** Status bar content for generated code: eager vs compiled time and kernel counts. */
export function generatedCodeInfo(result: GeneratedCodeResult): ViewInfo {
  const where = result.language === "cpp" ? " (CPU)" : "";
  // On the CPU the server counts top-level ATen ops (eager) and generated kernels (compiled):
  // each one loop over memory, so both are "kernels", as in its summary.
  const speedup =
    result.speedup === null || !Number.isFinite(result.speedup)
      ? ""
      : ` (${Number(result.speedup.toPrecision(3))}×)`;
  const kernels = result.kernels.map((k) => {
    const lines = k.lines.length === 0 ? "no source line known" : `lines ${k.lines.join(", ")}`;
    return `  ${k.name} (${k.kind}): ${lines}`;
  });
  return {
    text:
      `$(zap) ${result.function}: ${formatMs(result.eager.median_ms)} eager → ` +
      `${formatMs(result.compiled.median_ms)} compiled${speedup}${where}`,
    tooltip: [
      result.summary,
      `Eager: ${formatMs(result.eager.median_ms)} median, ${plural(result.eager.kernels, "kernel", "kernels")} per call`,
      `Compiled: ${formatMs(result.compiled.median_ms)} median, ${plural(result.compiled.kernels, "kernel", "kernels")} per call`,
      ...(kernels.length > 0 ? ["Kernels:", ...kernels] : []),
      `Saved as ${result.code_path}`,
      LINKING,
    ].join("\n"),
    warning: false,
  };
}

/**
 * Status bar content for a file of a load_inline module: what it is, the arch and nvcc's
 * problems; a click runs `command` (the module's file picker).
 */
export function inlineInfo(module: InlineModule, file: InlineFile, command: string): ViewInfo {
  const { errors, warnings } = problemCounts(module);
  const parts = [`$(tools) ${inlineFileTitle(module.name, file)}`];
  if (file === "ptx") {
    parts.push(module.arch);
  } else {
    parts.push(module.name);
  }
  if (errors > 0) {
    parts.push(plural(errors, "nvcc error", "nvcc errors"));
  }
  if (warnings > 0) {
    parts.push(plural(warnings, "warning", "warnings"));
  }
  const seconds =
    module.ptx_seconds === undefined ? "" : ` in ${Number(module.ptx_seconds.toPrecision(3))} s`;
  const about =
    file === "ptx"
      ? `cuda.cu of load_inline module ${module.name} (line ${module.call_line}) compiled to PTX ` +
        `for ${module.arch} by ${module.nvcc}${seconds}`
      : `${inlineFileTitle(module.name, file)} of load_inline module ${module.name} ` +
        `(line ${module.call_line}): ${INLINE_FILE_DESCRIPTIONS[file]}`;
  const linking =
    file !== "ptx"
      ? "Not linked to the source's lines."
      : module.line_map.length === 0
        ? "No line information in this PTX."
        : LINKING;
  const tooltip = [
    about,
    ...(module.build_directory === null ? [] : [`Built in ${module.build_directory}`]),
    ...module.errors.map(
      (e) => `nvcc ${e.severity}${e.line === null ? "" : ` (line ${e.line})`}: ${e.message}`,
    ),
    linking,
    "Click for the module's other files, or to build it with load_inline.",
  ];
  return {
    text: parts.join(" · "),
    tooltip: tooltip.join("\n"),
    warning: module.errors.length > 0,
    command,
  };
}
