/**
 * What "Show load_inline Build" shows of a `load_inline(...)` call: the files of a module (its
 * PTX, the `main.cpp` and `cuda.cu` torch writes, and after a build `build.ninja` and the build
 * log), which module a command means, and the words for nvcc's errors.
 *
 * Pure (no `vscode` import), so it is unit-tested under plain node; `inlineCommands.ts` drives
 * the UI with it.
 */
import type { InlineModule } from "../generated/wire";

/** A file of a load_inline module that opens beside the source. */
export type InlineFile = "ptx" | "cuda.cu" | "main.cpp" | "build.ninja" | "build.log";

/** The files, in the order the picker lists them. */
export const INLINE_FILES: readonly InlineFile[] = [
  "ptx",
  "cuda.cu",
  "main.cpp",
  "build.ninja",
  "build.log",
];

/** A file's text in the server's result, or null when the module has none (yet). */
export function inlineFileText(module: InlineModule, file: InlineFile): string | null {
  switch (file) {
    case "ptx":
      return module.ptx;
    case "build.log":
      return module.build_log;
    case "build.ninja":
      return module.files["build.ninja"] ?? null;
    default:
      return module.files[file] ?? null;
  }
}

/** The files of `module` that have text, in {@link INLINE_FILES} order. */
export function inlineFiles(module: InlineModule): InlineFile[] {
  return INLINE_FILES.filter((file) => inlineFileText(module, file) !== null);
}

/** The name a file's tab shows: `<module>.ptx`, `build log`, or the file's own name. */
export function inlineFileTitle(module: string, file: InlineFile): string {
  if (file === "ptx") {
    return `${module}.ptx`;
  }
  return file === "build.log" ? "build log" : file;
}

/** What each file is, for the picker and the status bar's tooltip. */
export const INLINE_FILE_DESCRIPTIONS: Readonly<Record<InlineFile, string>> = {
  ptx: "nvcc -ptx -lineinfo of cuda.cu, its lines linked with the source's",
  "cuda.cu": "torch's includes, then your cuda_sources, as load_inline writes them",
  "main.cpp": "your cpp_sources and the pybind11 bindings of functions=",
  "build.ninja": "the build file torch wrote in the build folder",
  "build.log": "load_inline's verbose build output",
};

/**
 * The module a command means, when it can tell: the one whose `load_inline(` call is on `line`
 * (a code lens's line), else the one named `name` (a view's module), else the only one.
 * Undefined when the user has to pick (several modules) or there is none.
 */
export function findModule(
  modules: readonly InlineModule[],
  wanted: { line?: number | undefined; name?: string | undefined },
): InlineModule | undefined {
  const byLine = modules.find((m) => m.call_line === wanted.line);
  if (byLine !== undefined) {
    return byLine;
  }
  const byName = modules.find((m) => m.name === wanted.name);
  if (byName !== undefined) {
    return byName;
  }
  return modules.length === 1 ? modules[0] : undefined;
}

/**
 * The module to preselect when the user picks among several: the last call at or above the
 * 1-based `cursor` line, else the first call.
 */
export function nearestModule(
  modules: readonly InlineModule[],
  cursor: number | undefined,
): InlineModule | undefined {
  const sorted = [...modules].sort((a, b) => a.call_line - b.call_line);
  const above = cursor === undefined ? [] : sorted.filter((m) => m.call_line <= cursor);
  return above.at(-1) ?? sorted[0];
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** nvcc's errors and warnings of a module, counted. */
export function problemCounts(module: InlineModule): { errors: number; warnings: number } {
  const errors = module.errors.filter((e) => e.severity === "error").length;
  return { errors, warnings: module.errors.length - errors };
}

/** `nvcc: 2 errors — see Problems` (warnings too, when there are no errors). */
export function problemsMessage(module: InlineModule): string {
  const { errors, warnings } = problemCounts(module);
  const what =
    errors > 0 ? plural(errors, "error", "errors") : plural(warnings, "warning", "warnings");
  return `nvcc: ${what} — see Problems`;
}

/** One-line description of a module for the module picker. */
export function moduleDescription(module: InlineModule): string {
  const { errors, warnings } = problemCounts(module);
  const parts = [`line ${module.call_line}`];
  if (module.ptx !== null) {
    parts.push(`PTX for ${module.arch}`);
  } else if (module.files["cuda.cu"] === null) {
    parts.push("no cuda_sources");
  }
  if (errors > 0) {
    parts.push(plural(errors, "nvcc error", "nvcc errors"));
  }
  if (warnings > 0) {
    parts.push(plural(warnings, "warning", "warnings"));
  }
  return parts.join(" · ");
}

/**
 * `next` (a compile's answer) with the build products (log, folder, build.ninja) of the modules
 * of the same name in `previous` (the last build of the same text) where `next` has none.
 */
export function keepBuild(
  previous: readonly InlineModule[],
  next: readonly InlineModule[],
): InlineModule[] {
  return next.map((module) => {
    const built = previous.find((p) => p.name === module.name && p.build_log !== null);
    if (module.build_log !== null || built === undefined) {
      return module;
    }
    const files = { ...module.files };
    if (built.files["build.ninja"] !== undefined) {
      files["build.ninja"] = built.files["build.ninja"];
    }
    return {
      ...module,
      files,
      build_log: built.build_log,
      build_directory: built.build_directory,
    };
  });
}
