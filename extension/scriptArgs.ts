/**
 * A script's arguments (`sys.argv[1:]` of *Profile Script*), as typed in one line and shown
 * back: split like a POSIX shell does (quotes and backslashes), joined with quotes where a word
 * needs them. The server remembers them per script (`ProfileArgs.argv`).
 *
 * Pure (no `vscode` import): tests/ts/scriptArgs.test.ts.
 */

/** The lens command that asks for a script's arguments (`CMD_SCRIPT_ARGUMENTS` in
 * server/kernel_lens/lsp/code_lens.py); its argument is {@link ScriptArgumentsArgs}. */
export const SCRIPT_ARGUMENTS = "kernelLens.scriptArguments";

/** The argument of {@link SCRIPT_ARGUMENTS}: the script and its current arguments. */
export interface ScriptArgumentsArgs {
  uri: string;
  argv: string[];
}

export function isScriptArgumentsArgs(value: unknown): value is ScriptArgumentsArgs {
  if (typeof value !== "object" || value === null) {
    return false;
  }
  const v = value as Record<string, unknown>;
  return (
    typeof v["uri"] === "string" &&
    Array.isArray(v["argv"]) &&
    v["argv"].every((a) => typeof a === "string")
  );
}

/** `--dim 24 --name 'a b'` → `["--dim", "24", "--name", "a b"]`; an unclosed quote is an
 * error (the message names it). */
export function splitArgs(line: string): { argv: string[] } | { error: string } {
  const argv: string[] = [];
  let word = "";
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line.charAt(i);
    if (quote === "'") {
      if (c === "'") {
        quote = null;
      } else {
        word += c;
      }
    } else if (quote === '"') {
      if (c === '"') {
        quote = null;
      } else if (c === "\\" && i + 1 < line.length && '"\\$`'.includes(line.charAt(i + 1))) {
        word += line.charAt(++i);
      } else {
        word += c;
      }
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === "\\" && i + 1 < line.length) {
      word += line.charAt(++i);
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) {
        argv.push(word);
        word = "";
        inWord = false;
      }
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote !== null) {
    return { error: `unclosed ${quote} quote` };
  }
  if (inWord) {
    argv.push(word);
  }
  return { argv };
}

/** The arguments as one line that {@link splitArgs} reads back to the same words. */
export function joinArgs(argv: readonly string[]): string {
  return argv
    .map((a) => (a !== "" && /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`))
    .join(" ");
}

/** `2 3` → skip 2 steps, profile 3: two whole numbers, the second at least 1. */
export function parseWindow(line: string): { skip: number; steps: number } | { error: string } {
  const words = line.trim().split(/\s+/);
  if (words.length !== 2 || !words.every((w) => /^\d+$/.test(w))) {
    return { error: "two whole numbers: the steps to skip, then the steps to profile (2 3)" };
  }
  const [skip, steps] = words.map(Number) as [number, number];
  if (steps < 1) {
    return { error: "profile at least one step" };
  }
  return { skip, steps };
}
