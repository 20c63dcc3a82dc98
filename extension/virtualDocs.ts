/**
 * The read-only documents Kernel Lens opens beside the source: a kernel's compiled stages and
 * torch.compile's generated code. What each one is, its `kernel-lens:` URI, and the text of the
 * status bar item shown while it is the active editor.
 *
 * Pure (no `vscode` import), so it is unit-tested under plain node; `views.ts` turns the URI
 * parts into a `vscode.Uri` (`Uri.from({ scheme, path, query })`), whose `query` gives back
 * exactly the query built here.
 */
import {
  ASM_STAGES,
  type AsmStage,
  type AssemblyResult,
  type GeneratedCodeResult,
} from "./protocol";
import { fileName } from "./status";

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

export type View = AssemblyView | GeneratedCodeView;

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
 * extension of Sass stylesheets, which would colour SASS as CSS.
 */
export function languageFor(view: View, detected: string): string | undefined {
  if (view.kind === "generatedCode") {
    return detected === "python" ? undefined : "python";
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
   * segment is the editor tab's title and its extension the stage (and the language).
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
        : `the generated code of ${view.function}`;
  const command = view?.kind === "generatedCode" ? "Show Generated Code" : "Show Assembly";
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

/** Status bar content for a kernel's compiled stage: arch, registers, spills. */
export function assemblyInfo(result: AssemblyResult, stage: AsmStage): ViewInfo {
  const parts = [`$(chip) ${STAGE_LABELS[stage]}`, result.arch];
  if (result.registers !== null) {
    parts.push(plural(result.registers, "register", "registers"));
  }
  parts.push(result.spills === 0 ? "no spills" : `${result.spills} B spilled`);
  const tooltip = [
    `${result.kernel} compiled to ${STAGE_LABELS[stage]} for ${result.arch}` +
      (result.launcher === null ? "" : `, as ${result.launcher} launches it`),
    result.registers === null
      ? "Registers per thread: unknown"
      : `Registers per thread: ${result.registers}`,
    `Register spills: ${result.spills} bytes (stores + loads)`,
    ...result.warnings.map((w) => `Warning: ${w}`),
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
