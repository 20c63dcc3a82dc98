/**
 * Lens rows that fit the editor they are drawn in (issue 41): VS Code draws a line's code lenses
 * as one line of text cut at the editor's right edge, so a long summary or error pushes
 * *Re-profile*, *Report*, *More…* or *Arguments…* out of reach. A row longer than the editor has
 * room for says its verdict first and folds the rest of its first lens into that lens's hover:
 * a summary keeps its leading ` · ` parts (the time and spread first), an error its reason
 * without the parenthesis (`Profile failed: this code needs an NVIDIA GPU`); the whole text is
 * the tooltip, and a failure's click still shows the whole error.
 *
 * The room is the editor's: an extension cannot read widths in pixels, so it goes by the editor
 * groups shown — two or more side by side (the Report beside the source) is the narrow case,
 * measured at 1280 px with the explorer open (the editor test, scenario 161). No vscode here.
 */

/** Characters of a row visible when editor groups are side by side: at 1280 px with the
 * explorer open and the Report beside, 396 px of lens text at about 6.2 px a character. */
export const NARROW_ROW_CHARS = 60;
/** Characters visible with one editor group: 862 px at 1280 px with the explorer open. */
export const WIDE_ROW_CHARS = 130;
/** Characters a row's first lens keeps at least (its verdict), however many actions follow. */
export const MIN_HEAD_CHARS = 18;

const SEPARATOR = " | "; // how VS Code joins a line's lenses
const ICON = /\$\([a-z0-9~-]+\)\s?/g;
const LEADING_ICON = /^\$\([a-z0-9~-]+\)\s?/;
const FAILED = /^(.*\bfailed): [\w-]+ — (.+)$/;
const DRIVER = /^(\$\([a-z0-9~-]+\)\s?)?inputs from /;

/** The room of a row, by the number of editor groups shown side by side. */
export function rowChars(groups: number): number {
  return groups > 1 ? NARROW_ROW_CHARS : WIDE_ROW_CHARS;
}

/** Characters `title` takes on screen: a `$(icon)` is about two. */
export function visibleChars(title: string): number {
  return title.replace(ICON, "XX").length;
}

/** The longest cut of `text` before `cut` (searched from the end, not before `first`) that fits. */
function cutToFit(text: string, room: number, first: number): string | undefined {
  for (const cut of [" $(", " (", " — ", ": "]) {
    let at = text.lastIndexOf(cut);
    while (at >= first && at > 0) {
      const candidate = text.slice(0, at).replace(/[\s—:]+$/, "");
      const n = visibleChars(candidate);
      if (n >= MIN_HEAD_CHARS && n <= room) {
        return candidate;
      }
      at = text.lastIndexOf(cut, at - 1);
    }
  }
  return undefined;
}

/**
 * `title` in at most `room` visible characters, its verdict first: the leading ` · ` parts that
 * fit; else (a failure) its reason; else the text before an icon, a parenthesis, a ` — ` or a
 * `: `; else cut at a word with `…`.
 */
export function shorten(title: string, room: number): string {
  if (visibleChars(title) <= room) {
    return title;
  }
  const parts = title.split(" · ");
  for (let n = parts.length - 1; n > 0; n--) {
    const candidate = parts.slice(0, n).join(" · ");
    if (visibleChars(candidate) <= room) {
      return candidate;
    }
  }
  const head = parts[0] ?? title;
  // (text, where a cut may start): a failure's reason is kept whole or not at all, then the
  // failure without its kind (in the hover), then the reason alone.
  const variants: [string, number][] = [[head, 0]];
  const failed = FAILED.exec(head);
  if (failed !== null) {
    const prefix = failed[1] ?? "";
    const whole = failed[2] ?? "";
    // "the script raised RuntimeError: …": the exception is the verdict.
    const reason = whole.replace(/^the script raised /, "");
    const icon = LEADING_ICON.exec(head)?.[0] ?? "";
    variants[0] = [head, head.length - whole.length + 1];
    variants.push([`${prefix}: ${reason}`, prefix.length + 3], [`${icon}${reason}`, 1]);
  }
  for (const [variant, first] of variants) {
    if (visibleChars(variant) <= room) {
      return variant;
    }
    const cut = cutToFit(variant, room, first);
    if (cut !== undefined) {
      return cut;
    }
  }
  const words = head.split(" ");
  let out = words[0] ?? "";
  for (const word of words.slice(1)) {
    if (visibleChars(`${out} ${word}`) + 1 > room) {
      break;
    }
    out = `${out} ${word}`;
  }
  return `${out.replace(/[\s—:·,]+$/, "")}…`;
}

/** The shape of a code lens this needs (a `vscode.CodeLens`, or a test's stand-in). */
export interface LensLike {
  range: { start: { line: number } };
  command?: { title: string; tooltip?: string };
}

/**
 * Each line's row of `lenses` within `room` characters: a row with lenses after its verdict (its
 * first lens, or the failure after a driver lens) that would be cut has that lens shortened
 * ({@link shorten}) and its whole text put in its tooltip. A row of one lens is left as it is (nothing after it to push off). Changes the
 * lenses' commands in place; returns `lenses`.
 */
export function fitRows<T extends LensLike>(lenses: T[], room: number): T[] {
  const byLine = new Map<number, T[]>();
  for (const lens of lenses) {
    const row = byLine.get(lens.range.start.line) ?? [];
    row.push(lens);
    byLine.set(lens.range.start.line, row);
  }
  for (const row of byLine.values()) {
    // The row's first lens is its verdict, but for a driver lens that a failed row puts first
    // (`inputs from kv_bench.py | Profile failed: …`): there the failure after it is shortened.
    const first = row[0]?.command;
    const head =
      first !== undefined && DRIVER.test(first.title) && row.length > 2 ? row[1]?.command : first;
    if (row.length < 2 || head === undefined) {
      continue;
    }
    const total =
      row.reduce((n, lens) => n + visibleChars(lens.command?.title ?? ""), 0) +
      SEPARATOR.length * (row.length - 1);
    if (total <= room) {
      continue;
    }
    const short = shorten(
      head.title,
      Math.max(MIN_HEAD_CHARS, visibleChars(head.title) - (total - room)),
    );
    if (short === head.title) {
      continue;
    }
    const whole = head.title.replace(ICON, "").trim();
    head.tooltip =
      head.tooltip === undefined || head.tooltip === "" ? whole : `${whole}\n\n${head.tooltip}`;
    head.title = short;
  }
  return lenses;
}
