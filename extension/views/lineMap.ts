/**
 * Two-way line maps between a user's source file and a view generated from it: a kernel's
 * TTIR/TTGIR/LLIR/PTX/SASS (from the server's `line_map`) or torch.compile's generated code (from
 * the lines each kernel fused).
 *
 * Pure (no `vscode` import), so it is unit-tested under plain node. Lines are 1-based here, as the
 * server sends them; `documents.ts` converts to and from the editor's 0-based lines.
 */
import type { GeneratedKernel, LineMapEntry } from "../generated/wire";

/** A kernel definition in inductor's output: `name = async_compile.triton(...)` (or `.cpp…`). */
const KERNEL_DEF = /^[A-Za-z_]\w*\s*=\s*async_compile\.\w+\(/;
/** Where inductor's output stops defining kernels. */
const WAIT = /^async_compile\.wait\(/;

function add(map: Map<number, Set<number>>, from: number, to: number): void {
  if (!Number.isInteger(from) || !Number.isInteger(to) || from < 1 || to < 1) {
    return;
  }
  let targets = map.get(from);
  if (targets === undefined) {
    targets = new Set();
    map.set(from, targets);
  }
  targets.add(to);
}

function lookUp(map: ReadonlyMap<number, ReadonlySet<number>>, lines: Iterable<number>): number[] {
  const found = new Set<number>();
  for (const line of lines) {
    map.get(line)?.forEach((target) => found.add(target));
  }
  return [...found].sort((a, b) => a - b);
}

/** Which lines of a view come from which source lines, and back; all lines 1-based. */
export class LineLink {
  private readonly toView = new Map<number, Set<number>>();
  private readonly toSource = new Map<number, Set<number>>();

  /** Links source line `source` with view line `view` (both ways). Ignores lines below 1. */
  link(source: number, view: number): void {
    add(this.toView, source, view);
    add(this.toSource, view, source);
  }

  /** Links view line `view` back to source line `source` only (not source to view). */
  linkBack(view: number, source: number): void {
    add(this.toSource, view, source);
  }

  /** The view lines generated from any of the source lines, sorted, without repeats. */
  viewLines(sourceLines: Iterable<number>): number[] {
    return lookUp(this.toView, sourceLines);
  }

  /** The source lines any of the view lines came from, sorted, without repeats. */
  sourceLines(viewLines: Iterable<number>): number[] {
    return lookUp(this.toSource, viewLines);
  }

  /** True when no line is linked. */
  get empty(): boolean {
    return this.toView.size === 0;
  }
}

/** The link of a kernel's source with one compiled stage, from the server's `line_map`. */
export function assemblyLink(lineMap: readonly LineMapEntry[]): LineLink {
  const link = new LineLink();
  for (const entry of lineMap) {
    for (const asmLine of entry.asm_lines) {
      link.link(entry.source_line, asmLine);
    }
  }
  return link;
}

/**
 * The 1-based line ranges of the kernel definitions in inductor's output: from a kernel's
 * `def_line` to the line before the next kernel definition or `async_compile.wait(...)`, or to
 * the end of the code.
 *
 * Args:
 *   code: the generated module.
 *   defLines: the kernels' `def_line`s (any order, repeats allowed).
 *
 * Returns: `def_line` -> last line of its definition block.
 */
export function definitionBlocks(code: string, defLines: Iterable<number>): Map<number, number> {
  const lines = code.split(/\r?\n/);
  const valid = [...defLines].filter((l) => Number.isInteger(l) && l >= 1 && l <= lines.length);
  const starts = new Set(valid);
  // Kernels that are defined but never called end a block too.
  lines.forEach((text, i) => {
    if (KERNEL_DEF.test(text)) {
      starts.add(i + 1);
    }
  });
  const boundaries = [...starts].sort((a, b) => a - b);
  lines.forEach((text, i) => {
    if (WAIT.test(text)) {
      boundaries.push(i + 1);
    }
  });
  boundaries.sort((a, b) => a - b);
  const blocks = new Map<number, number>();
  for (const start of new Set(valid)) {
    const next = boundaries.find((b) => b > start);
    blocks.set(start, next === undefined ? lines.length : next - 1);
  }
  return blocks;
}

/**
 * The link of a function's source with torch.compile's generated code.
 *
 * A source line goes to the definition line and the call line of every kernel that fused it;
 * any line of a kernel's definition block, and its call line, go back to the lines it fused.
 *
 * Args:
 *   code: inductor's output module.
 *   kernels: the server's kernels, in call order.
 */
export function generatedCodeLink(code: string, kernels: readonly GeneratedKernel[]): LineLink {
  const link = new LineLink();
  const defLines = kernels
    .map((k) => k.def_line)
    .filter((line): line is number => typeof line === "number");
  const blocks = definitionBlocks(code, defLines);
  for (const kernel of kernels) {
    for (const source of kernel.lines) {
      link.link(source, kernel.call_line);
      if (typeof kernel.def_line === "number") {
        link.link(source, kernel.def_line);
      }
    }
  }
  // The rest of each definition block maps back only (a source line shows the def line alone).
  const back = new Map<number, number[]>();
  for (const kernel of kernels) {
    if (typeof kernel.def_line === "number") {
      back.set(kernel.def_line, [...(back.get(kernel.def_line) ?? []), ...kernel.lines]);
    }
  }
  for (const [start, end] of blocks) {
    for (let line = start + 1; line <= end; line++) {
      for (const source of back.get(start) ?? []) {
        link.linkBack(line, source);
      }
    }
  }
  return link;
}

/**
 * The 1-based lines a selection covers. A selection that ends at the start of a line (after a
 * whole-line selection) does not cover that line.
 *
 * Args:
 *   startLine, endLine: 0-based lines of the selection's start and end.
 *   endCharacter: 0-based character of the end.
 */
export function selectedLines(startLine: number, endLine: number, endCharacter: number): number[] {
  const last = endLine > startLine && endCharacter === 0 ? endLine - 1 : endLine;
  const lines: number[] = [];
  for (let line = startLine; line <= last; line++) {
    lines.push(line + 1);
  }
  return lines;
}
