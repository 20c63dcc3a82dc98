/**
 * Compare Assembly: which kernels a file offers to compare against (Triton kernels, the CUDA
 * kernels and host functions of a `load_inline` source), the picker's items, and the diff
 * editor's read-only documents (`kernel-lens-asmdiff:` URIs, one per side and mode).
 *
 * Pure (no `vscode` import): tests/ts/asmDiff.test.ts.
 */
import type { AsmDiffResult, AsmDiffSide, AsmDiffStage } from "../generated/wire";

/** URI scheme of the diff editor's documents. */
export const ASM_DIFF_SCHEME = "kernel-lens-asmdiff";

/** Which text each side shows: canonicalised (the default) or as compiled. */
export type DiffMode = "normalised" | "original";

/** The kernels a Python file offers. */
export interface FileKernels {
  /** `@triton.jit` functions (also under `@triton.autotune`/`@triton.heuristics`). */
  triton: string[];
  /** `__global__` kernels of a CUDA source held in a file that calls `load_inline`. */
  cuda: string[];
}

const TRITON_DEF = /@(?:triton\.)?jit\b[^\n]*\n(?:\s*@[^\n]*\n)*\s*def\s+([A-Za-z_]\w*)/g;
const GLOBAL_FN = /__global__\s+(?:[\w:<>,\s*&]+?\s+)?([A-Za-z_]\w*)\s*\(/g;

/** The Triton and load_inline CUDA kernels in a Python file's text, in order, without repeats. */
export function scanKernels(text: string): FileKernels {
  const triton = new Set<string>();
  for (const m of text.matchAll(TRITON_DEF)) {
    if (m[1] !== undefined) {
      triton.add(m[1]);
    }
  }
  const cuda = new Set<string>();
  if (/\bload_inline\s*\(/.test(text)) {
    for (const m of text.matchAll(GLOBAL_FN)) {
      if (m[1] !== undefined && m[1] !== "void") {
        cuda.add(m[1]);
      }
    }
  }
  return { triton: [...triton], cuda: [...cuda] };
}

/** The Triton kernel whose `def` is at or above the 0-based `line` of `text`, if any. */
export function tritonKernelAt(text: string, line: number): string | undefined {
  const lines = text.split("\n");
  let found: string | undefined;
  for (let i = 0; i <= Math.min(line, lines.length - 1); i++) {
    const def = /^def\s+([A-Za-z_]\w*)/.exec(lines[i] ?? "");
    if (def?.[1] !== undefined) {
      const above = lines.slice(Math.max(0, i - 4), i).join("\n");
      found = /@(?:triton\.)?jit\b|@triton\.(?:autotune|heuristics)\b/.test(above)
        ? def[1]
        : undefined;
    }
  }
  return found;
}

/**
 * The `__global__` CUDA kernel whose definition is at or above the 0-based `line` of a file that
 * calls `load_inline` (the cursor in the CUDA source string), if any.
 */
export function cudaKernelAt(text: string, line: number): string | undefined {
  if (!/\bload_inline\s*\(/.test(text)) {
    return undefined;
  }
  const lines = text.split("\n");
  let found: string | undefined;
  for (let i = 0; i <= Math.min(line, lines.length - 1); i++) {
    const l = lines[i] ?? "";
    const m = GLOBAL_LINE.exec(l);
    if (m?.[1] !== undefined) {
      found = m[1];
    } else if (PYTHON_STATEMENT.test(l)) {
      // Python again (`def`, `class`, `NAME = …` at the margin): out of the CUDA string.
      found = undefined;
    }
  }
  return found;
}

const GLOBAL_LINE = /__global__\s+(?:[\w:<>,\s*&]+?\s+)?([A-Za-z_]\w*)\s*\(/;
const PYTHON_STATEMENT = /^(?:def |class |@|[A-Za-z_]\w*\s*=(?!=))/;

/** One side to compare, as the request names it. */
export interface DiffTarget {
  uri: string;
  kernel: string;
  overrides?: Record<string, string>;
  text?: string;
  label?: string;
}

/** What a picker item stands for. */
export type OtherChoice =
  { kind: "target"; target: DiffTarget } | { kind: "picks" } | { kind: "head" };

export interface OtherItem {
  label: string;
  description?: string;
  detail?: string;
  choice: OtherChoice;
}

/**
 * The file name of a URI (for descriptions), with any `$(` broken by a zero-width space: a file
 * named `$(alert).py` reads as named, not as an icon.
 */
export function baseName(uri: string): string {
  const path = uri.split(/[?#]/)[0] ?? uri;
  let name = path.slice(path.lastIndexOf("/") + 1);
  try {
    name = decodeURIComponent(name);
  } catch {
    // A malformed escape: the name as it is.
  }
  return name.replace(/\$\(/g, "$\u200b(");
}

/**
 * The items of "compare with…": the same kernel with other constexprs and at the last commit
 * first, then every other kernel of the workspace's files (`files`: URI → its kernels).
 */
export function otherItems(
  a: DiffTarget,
  files: ReadonlyMap<string, FileKernels>,
  hasGit: boolean,
): OtherItem[] {
  const items: OtherItem[] = [];
  // Constexprs are a Triton kernel's (A, a CUDA kernel, is compiled as its source says).
  if (files.get(a.uri)?.cuda.includes(a.kernel) !== true) {
    items.push({
      label: `$(symbol-constant) ${a.kernel} with other constexprs…`,
      description: "BLOCK_SIZE=64, num_warps…",
      detail: "the same kernel compiled with the values you type (as Argument Types…)",
      choice: { kind: "picks" },
    });
  }
  if (hasGit) {
    items.push({
      label: `$(git-commit) ${a.kernel} as of the last commit`,
      description: "git HEAD",
      detail: "this file's text in the last commit against the text now",
      choice: { kind: "head" },
    });
  }
  for (const [uri, kernels] of files) {
    for (const kernel of kernels.cuda) {
      if (uri === a.uri && kernel === a.kernel) {
        continue;
      }
      items.push({
        label: `$(chip) ${kernel}`,
        description: `CUDA · load_inline · ${baseName(uri)}`,
        choice: { kind: "target", target: { uri, kernel } },
      });
    }
    for (const kernel of kernels.triton) {
      if (uri === a.uri && kernel === a.kernel) {
        continue;
      }
      items.push({
        label: `$(file-binary) ${kernel}`,
        description: `Triton · ${baseName(uri)}`,
        choice: { kind: "target", target: { uri, kernel } },
      });
    }
  }
  return items;
}

/**
 * `NAME=VALUE, NAME=VALUE` as a record, or an error to show under the input box. Values stay
 * text (the server reads them as Triton types or Python literals).
 */
export function parsePicks(text: string): Record<string, string> | { error: string } {
  const picks: Record<string, string> = {};
  for (const part of text.split(",")) {
    if (part.trim() === "") {
      continue;
    }
    const eq = part.indexOf("=");
    const name = eq < 0 ? "" : part.slice(0, eq).trim();
    const value = eq < 0 ? "" : part.slice(eq + 1).trim();
    if (!/^[A-Za-z_]\w*$/.test(name) || value === "") {
      return { error: `NAME=VALUE, comma-separated (BLOCK_SIZE=64), not "${part.trim()}"` };
    }
    picks[name] = value;
  }
  return Object.keys(picks).length > 0 ? picks : { error: "give at least one NAME=VALUE" };
}

/** A path segment: no `/`, `\`, `?` or `#`. */
function segment(name: string): string {
  const safe = name.replace(/[/\\?#]/g, "_").trim();
  return safe === "" ? "_" : safe;
}

/**
 * The path of one side's document: `/<n>/A · <kernel>.<stage>` — `n` tells comparisons apart, the
 * last segment names the diff's side, its extension the stage.
 */
export function diffDocPath(
  n: number,
  side: "a" | "b",
  result: AsmDiffResult,
  mode: DiffMode,
): string {
  const s = result[side];
  const kernel = s.kind === "inline" ? (s.title.split(" · ")[0] ?? s.kernel) : s.kernel;
  return `/${n}/${mode}/${side.toUpperCase()} · ${segment(kernel)}.${result.stage}`;
}

/** The short name of a side: its title up to the stage. */
export function sideName(side: AsmDiffSide): string {
  const parts = side.title.split(" · ");
  // kernel · kind · file · [constexprs · label ·] STAGE arch: keep the kernel and what tells it apart.
  const kept = parts.filter((_, i) => i === 0 || (i >= 3 && i < parts.length - 1));
  return kept.join(" · ");
}

/** The diff editor's title: `A ↔ B · PTX (normalised)`. */
export function diffTitle(result: AsmDiffResult, mode: DiffMode): string {
  const stage = result.stage.toUpperCase() as Uppercase<AsmDiffStage>;
  return `${sideName(result.a)} ↔ ${sideName(result.b)} · ${stage} (${mode})`;
}

/** The other mode. */
export function otherMode(mode: DiffMode): DiffMode {
  return mode === "normalised" ? "original" : "normalised";
}
