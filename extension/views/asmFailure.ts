/**
 * What a failed Show Assembly says of the kernel's argument types, read from the server's
 * message, so that *Argument Types…* can be offered right there (the failure's toast, the
 * palette) prefilled with the types that were tried — not only from an open assembly view.
 *
 * The messages are the agent's own (`stages/triton_ir.py`): a failed compile says
 * `Triton could not compile KERNEL for sm_90 with x_ptr: *fp32, n: i32, BLOCK=64: …`; a refused
 * guess says `KERNEL: no launch could run here (…), and the text does not say A, B (computed at
 * run time)`; a kernel no text launches says `… to start from: x_ptr: *fp32, BLOCK=64`. No
 * vscode here (unit-tested).
 */

/** The types a failed compile tried, for the picker. */
export interface FailedTypes {
  kernel: string;
  /** Parameter → Triton type (`*fp32`, `i32`) or `constexpr`, in the kernel's order. */
  signature: Record<string, string>;
  /** A constexpr's value as the message wrote it (a Python literal), `undefined` if unknown. */
  constexprs: Record<string, string | undefined>;
}

const COMPILE = /could not compile (\w+) for sm_\d+ with (.*?): (?:\w*Error|\w*Exception)\b/s;
/** A kernel whose file has no launch of it: the guess from its signature, to start from. */
const NO_LAUNCH =
  /(\w+): no launch could run here, and the text has no launch of it.*?; to start from: ([^\n]*)/s;
const REFUSED =
  /(\w+): no launch could run here .*the text does not say ([\w, ]+?) \(computed at run time\)/s;

/** The kernel and the types a failed Show Assembly tried; undefined for any other failure. */
export function failedTypes(message: string): FailedTypes | undefined {
  const compiled = COMPILE.exec(message) ?? NO_LAUNCH.exec(message);
  if (compiled !== null) {
    return typesListed(compiled[1] ?? "", compiled[2] ?? "");
  }
  const refused = REFUSED.exec(message);
  if (refused !== null) {
    const names = (refused[2] ?? "").split(",").map((n) => n.trim());
    const signature: Record<string, string> = {};
    const constexprs: Record<string, string | undefined> = {};
    for (const name of names.filter((n) => /^\w+$/.test(n))) {
      signature[name] = "constexpr";
      constexprs[name] = undefined;
    }
    return { kernel: refused[1] ?? "", signature, constexprs };
  }
  return undefined;
}

/** `x_ptr: *fp32, n: i32, BLOCK=64` (the agent's `_signature_text`) as the picker's types. */
function typesListed(kernel: string, listed: string): FailedTypes | undefined {
  const signature: Record<string, string> = {};
  const constexprs: Record<string, string | undefined> = {};
  for (const part of splitTop(listed)) {
    const typed = /^(\w+): (\S+)$/.exec(part);
    const valued = /^(\w+)=(.+)$/.exec(part);
    if (typed !== null) {
      signature[typed[1] ?? ""] = typed[2] ?? "";
    } else if (valued !== null) {
      signature[valued[1] ?? ""] = "constexpr";
      constexprs[valued[1] ?? ""] = valued[2];
    } else {
      return undefined;
    }
  }
  return Object.keys(signature).length > 0 ? { kernel, signature, constexprs } : undefined;
}

/** `a: *fp32, B=(1, 2), c='x, y'` split at the commas outside brackets and quotes. */
function splitTop(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote = "";
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? "";
    if (quote !== "") {
      if (c === quote) {
        quote = "";
      }
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if ("([{".includes(c)) {
      depth++;
    } else if (")]}".includes(c)) {
      depth--;
    } else if (c === "," && depth === 0 && text[i + 1] === " ") {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(text.slice(start).trim());
  return parts.filter((p) => p !== "");
}
