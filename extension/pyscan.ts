/**
 * Finds the function, or the `@triton.jit` kernel, that encloses a line of Python source, for
 * the commands run from the cursor (the server's lenses name theirs in their arguments).
 *
 * A small indentation-based scan, not a parser: it splits the text into logical lines (brackets,
 * backslashes and triple-quoted strings continue a statement over several physical lines, and
 * comments and blank lines take no part), then walks back from the cursor through the statements
 * that open enclosing blocks. It agrees with the server's `kernel_lens/analysis/functions.py` on
 * what a function is called: `name` at module level, `Class.name` for a method; a function nested
 * in another is not listed there, so the outermost enclosing `def` is the one reported.
 *
 * Pure (no `vscode` import), so it is unit-tested under plain node. Lines are 0-based here, as in
 * the editor.
 */

/** A statement's first line, its extent and its indentation (tabs to multiples of 8). */
export interface LogicalLine {
  /** 0-based first physical line. */
  first: number;
  /** 0-based last physical line (continuation lines included). */
  last: number;
  /** Indentation of the first line, in columns. */
  indent: number;
  /** The first physical line, without its indentation. */
  text: string;
}

/** A function (or method) definition found around a line. */
export interface FunctionAt {
  /** The bare name. */
  name: string;
  /** `name` for a module-level function, `Class.name` for a method (as the server names it). */
  qualname: string;
  /** 0-based line of the `def`. */
  defLine: number;
  /** The decorators' first lines without the `@`, in source order. */
  decorators: string[];
  /** Decorated with `@triton.jit`, `@triton.jit(...)` or `@jit`, as the server decides. */
  isTritonKernel: boolean;
}

const DEF = /^(?:async\s+)?def\s+([^\W\d]\w*)/u;
const CLASS = /^class\s+([^\W\d]\w*)/u;
/** The server's test (`FunctionInfo.is_triton_kernel`): a decorator naming `jit`. */
const JIT = /(^|\.)jit\b/;

/** Width of a tab, as Python's tokenizer counts it. */
const TAB = 8;

function indentOf(text: string): number {
  let columns = 0;
  for (const ch of text) {
    if (ch === " ") {
      columns += 1;
    } else if (ch === "\t") {
      columns = (Math.floor(columns / TAB) + 1) * TAB;
    } else if (ch === "\f") {
      columns = 0;
    } else {
      break;
    }
  }
  return columns;
}

/** Tokenizer state carried from one physical line to the next. */
interface ScanState {
  /** The open triple quote, if inside a triple-quoted string. */
  triple: string | null;
  /** Open brackets. */
  depth: number;
  /** The previous line ended with a backslash outside a string. */
  continued: boolean;
}

/** Advances `state` over one physical line. */
function scanLine(text: string, state: ScanState): void {
  let i = 0;
  let lastCode = "";
  while (i < text.length) {
    const ch = text.charAt(i);
    if (state.triple !== null) {
      if (ch === "\\") {
        i += 2;
      } else if (text.startsWith(state.triple, i)) {
        i += 3;
        state.triple = null;
        lastCode = "";
      } else {
        i += 1;
      }
      continue;
    }
    if (ch === "#") {
      break;
    }
    if (ch === '"' || ch === "'") {
      const triple = ch.repeat(3);
      if (text.startsWith(triple, i)) {
        state.triple = triple;
        i += 3;
        continue;
      }
      // A one-line string: skip to its closing quote (or the end of the line).
      i += 1;
      while (i < text.length && text.charAt(i) !== ch) {
        i += text.charAt(i) === "\\" ? 2 : 1;
      }
      i += 1;
      lastCode = ch;
      continue;
    }
    if (ch === "(" || ch === "[" || ch === "{") {
      state.depth += 1;
    } else if (ch === ")" || ch === "]" || ch === "}") {
      state.depth = Math.max(0, state.depth - 1);
    }
    if (ch.trim() !== "") {
      lastCode = ch;
    }
    i += 1;
  }
  state.continued = state.triple === null && lastCode === "\\";
}

/**
 * Splits Python source into its logical lines (statements and block headers), skipping blank
 * and comment-only lines.
 *
 * Args:
 *   lines: the document's physical lines, without line breaks.
 *
 * Returns: the logical lines in source order.
 */
export function scanPython(lines: readonly string[]): LogicalLine[] {
  const out: LogicalLine[] = [];
  const state: ScanState = { triple: null, depth: 0, continued: false };
  let open: LogicalLine | undefined;
  lines.forEach((text, index) => {
    const starts = state.triple === null && state.depth === 0 && !state.continued;
    if (starts) {
      open = undefined;
      const stripped = text.trimStart();
      if (stripped !== "" && !stripped.startsWith("#")) {
        open = { first: index, last: index, indent: indentOf(text), text: stripped };
        out.push(open);
      }
    } else if (open !== undefined) {
      open.last = index;
    }
    scanLine(text, state);
  });
  return out;
}

/** Index of the logical line that contains `line`, or -1. */
function containing(scan: readonly LogicalLine[], line: number): number {
  return scan.findIndex((l) => l.first <= line && line <= l.last);
}

/** The decorators directly above the definition at `index` (same indentation), in order. */
function decoratorsOf(scan: readonly LogicalLine[], index: number): string[] {
  const decorators: string[] = [];
  const indent = scan[index]?.indent;
  for (let j = index - 1; j >= 0; j--) {
    const l = scan[j];
    if (l === undefined || l.indent !== indent || !l.text.startsWith("@")) {
      break;
    }
    decorators.unshift(l.text.slice(1).trim());
  }
  return decorators;
}

/**
 * Index of the logical line where the search for enclosing blocks starts, and the indentation
 * a block header must be below to enclose `line`.
 */
function startOf(
  scan: readonly LogicalLine[],
  lines: readonly string[],
  line: number,
): { index: number; limit: number } {
  const at = containing(scan, line);
  const here = scan[at];
  if (here !== undefined) {
    if (here.text.startsWith("@")) {
      // A decorator belongs to the definition below it.
      let j = at + 1;
      while (scan[j]?.indent === here.indent && scan[j]?.text.startsWith("@") === true) {
        j += 1;
      }
      const next = scan[j];
      if (next?.indent === here.indent && (DEF.test(next.text) || CLASS.test(next.text))) {
        return { index: j, limit: next.indent + 1 };
      }
    }
    // The statement itself is a candidate when it is a header (the cursor on `def f(`).
    return { index: at, limit: here.indent + 1 };
  }
  // A blank or comment line: a comment by its own indentation; a blank line by the next
  // statement's (a blank line inside a body is followed by more of the body).
  let before = -1;
  while (before + 1 < scan.length && (scan[before + 1]?.last ?? line) < line) {
    before += 1;
  }
  const text = lines[line] ?? "";
  if (text.trim() !== "") {
    return { index: before, limit: indentOf(text) };
  }
  return { index: before, limit: scan[before + 1]?.indent ?? 0 };
}

/** The block headers (def and class) enclosing `line`, innermost first, with their index. */
function enclosing(
  scan: readonly LogicalLine[],
  lines: readonly string[],
  line: number,
): { index: number; kind: "def" | "class"; name: string }[] {
  const chain: { index: number; kind: "def" | "class"; name: string }[] = [];
  const start = startOf(scan, lines, line);
  let limit = start.limit;
  for (let j = start.index; j >= 0 && limit > 0; j--) {
    const l = scan[j];
    if (l === undefined || l.indent >= limit) {
      continue;
    }
    limit = l.indent;
    const def = DEF.exec(l.text);
    const cls = def === null ? CLASS.exec(l.text) : null;
    if (def?.[1] !== undefined) {
      chain.push({ index: j, kind: "def", name: def[1] });
    } else if (cls?.[1] !== undefined) {
      chain.push({ index: j, kind: "class", name: cls[1] });
    }
  }
  return chain;
}

/**
 * The function that encloses `line`, named as the server names it.
 *
 * Args:
 *   scan: {@link scanPython} of `lines`.
 *   lines: the document's physical lines.
 *   line: 0-based line of the cursor; a decorator line counts as part of its definition.
 *
 * Returns: the outermost `def` around the line (a nested function is part of the function it
 *   is nested in), with its classes in the qualified name; undefined outside any function.
 */
export function functionAt(
  scan: readonly LogicalLine[],
  lines: readonly string[],
  line: number,
): FunctionAt | undefined {
  const chain = enclosing(scan, lines, line).reverse();
  const outer = chain.findIndex((block) => block.kind === "def");
  const def = chain[outer];
  const header = def === undefined ? undefined : scan[def.index];
  if (def === undefined || header === undefined) {
    return undefined;
  }
  const decorators = decoratorsOf(scan, def.index);
  return {
    name: def.name,
    qualname: [...chain.slice(0, outer).map((c) => c.name), def.name].join("."),
    defLine: header.first,
    decorators,
    isTritonKernel: decorators.some((d) => JIT.test(d)),
  };
}

/** The `@triton.jit` kernel that encloses `line` (see {@link functionAt}), if any. */
export function kernelAt(
  scan: readonly LogicalLine[],
  lines: readonly string[],
  line: number,
): FunctionAt | undefined {
  const found = functionAt(scan, lines, line);
  return found?.isTritonKernel === true ? found : undefined;
}
