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

/**
 * A window of a long run, as *Profile Script: a Window…* sends it: `skip` steps unprofiled, then
 * `steps` profiled (absent: to the end of the run, or the time limit), and with `afterS` no
 * profiling before that many seconds into the run (`ProfileArgs.after_s`).
 */
export interface ScriptWindow {
  skip: number;
  steps?: number;
  afterS?: number;
}

const WINDOW_HELP =
  "steps to skip then steps to profile (2 3), or a time into the run: 30s, after 1.5m, " +
  "30s 3 (3 steps from 30 s in)";

const SECONDS_PER: Record<string, number> = {
  ms: 1e-3,
  s: 1,
  sec: 1,
  m: 60,
  min: 60,
  h: 3600,
};

/**
 * `2 3` → skip 2 steps, profile 3 (two whole numbers, the second at least 1); `30s`,
 * `after 30s`, `1.5m`, `200ms` → profile from that time into the run; `30s 3` (or
 * `after 30s, 3 steps`) → 3 steps from that time. A time needs its unit (a bare number is a
 * step count).
 */
export function parseWindow(line: string): ScriptWindow | { error: string } {
  const text = line.trim().toLowerCase();
  const bySteps = /^(\d+)\s+(\d+)$/.exec(text);
  if (bySteps !== null) {
    const skip = Number(bySteps[1]);
    const steps = Number(bySteps[2]);
    return steps < 1 ? { error: "profile at least one step" } : { skip, steps };
  }
  const byTime =
    /^(?:after\s+)?(\d+(?:\.\d+)?|\.\d+)\s*(ms|sec|s|min|m|h)(?:\s*,?\s*(?:then\s+)?(\d+)(?:\s+steps?)?)?$/.exec(
      text,
    );
  if (byTime === null) {
    return { error: WINDOW_HELP };
  }
  const afterS = Number(byTime[1]) * (SECONDS_PER[byTime[2] ?? "s"] ?? 1);
  if (byTime[3] === undefined) {
    return { skip: 0, afterS };
  }
  const steps = Number(byTime[3]);
  return steps < 1 ? { error: "profile at least one step" } : { skip: 0, steps, afterS };
}
