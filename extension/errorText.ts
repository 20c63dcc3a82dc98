/**
 * One line for a notification from any failure message, however long: the rest goes to the
 * output channel behind "Show details".
 *
 * Also: {@link inert}, which every string shown in a notification goes through.
 *
 * Pure (no `vscode` import): unit-tested in tests/ts/errorText.test.ts.
 */

/** Longest summary shown in a notification, in characters (a toast is cut off past ~2 lines). */
export const MAX_SUMMARY = 120;

/** Lines of a traceback or a compiler's report that say where, not what. */
const NOISE = [
  /^Traceback \(most recent call last\):?$/,
  /^File "[^"]*", line \d+/,
  /^During handling of the above exception/,
  /^The above exception was the direct cause/,
  /^from user code:?$/i,
  /^Set TORCH_LOGS=/,
  /^You can suppress this exception/,
  /^-{3,}$/,
  /^\^+$/,
];

/**
 * The lines of `message`, with the literal `\n` sequences of an escaped message made real
 * line breaks, trimmed, without empty lines.
 */
export function messageLines(message: string): string[] {
  return message
    .replace(/\\r\\n|\\n/g, "\n")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "");
}

/** `text` cut at a word boundary before `max` characters, with an ellipsis when cut. */
export function clip(text: string, max: number): string {
  if (text.length <= max) {
    return text;
  }
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:—-]+$/, "")}…`;
}

export interface Summary {
  /** One line for the notification. */
  text: string;
  /** Whether the message had more than that line (the details are worth a look). */
  more: boolean;
}

/**
 * The first line of `message` that says what went wrong (traceback frames and hints are
 * skipped), clipped to {@link MAX_SUMMARY} characters.
 */
export function summarize(message: string, max = MAX_SUMMARY): Summary {
  const lines = messageLines(message);
  const meaningful = lines.filter((line) => !NOISE.some((re) => re.test(line)));
  const first = meaningful[0] ?? lines[0] ?? "failed (no message)";
  const text = clip(first, max);
  return { text, more: lines.length > 1 || text !== first };
}

/** Zero-width space: invisible, and no link syntax spans it. */
const BREAK = "\u200b";

/**
 * `text` made inert for a notification, a progress title or message: VS Code turns
 * `[label](command:…)` (or `https:`, `file:`) in them into a live link, with no escape syntax
 * (a backslash is shown, not obeyed). A zero-width space after every `]` keeps the text as it
 * reads (a file name, a stored string, a server message) but leaves no `](` to make a link.
 * Idempotent: a string made inert twice is the same.
 */
export function inert(text: string): string {
  return text.replace(/\](?!\u200b)/g, `]${BREAK}`);
}
