/**
 * Text of the Kernel Lens status bar item, as a pure function of the state.
 *
 * No `vscode` import: `statusItem.ts` applies the {@link Presentation} to the item.
 */
import type { ServerState } from "./generated/wire";

/** States the client itself knows of, besides those the server reports. */
export type ClientState = "starting" | "stopped" | "unavailable";

export type ViewState = ServerState | ClientState;

export interface StatusInput {
  state: ViewState;
  /** The server's message (see `StatusParams`), or the client's reason. */
  message: string;
  /** The document concerned, as a URI string. */
  uri?: string | undefined;
  /** Whether the workspace is trusted; in Restricted Mode nothing is profiled. */
  trusted: boolean;
  /** Why the interpreter asked for is not run (Restricted Mode), kept whatever the state. */
  held?: string | undefined;
}

export type Severity = "none" | "warning" | "error";

export interface Presentation {
  /** Status bar text, with codicons. */
  text: string;
  /** Hover text (plain). */
  tooltip: string;
  /** Drives the item's background colour. */
  severity: Severity;
}

/** How long an error state stays in the status bar when nothing else happens, in ms. */
export const ERROR_HOLD_MS = 10_000;

/** How long it stays once its notification has been shown, in ms. */
export const SHOWN_HOLD_MS = 4_000;

/**
 * The state an error returns to once it has been seen: idle, the failure kept in the
 * tooltip (the output channel has the details). Any other state is left as it is.
 */
export function afterFailure(input: StatusInput): StatusInput {
  if (input.state !== "error") {
    return input;
  }
  const last = input.message.trim();
  return {
    state: "idle",
    message: last === "" ? "" : `Last failure: ${last} (details in the output).`,
    uri: input.uri,
    trusted: input.trusted,
    held: input.held,
  };
}

/** Longest subject shown in the status bar, in characters; the tooltip has the rest. */
export const MAX_SUBJECT = 40;

const NAME = "Kernel Lens";
const CLICK = "Click to show the Kernel Lens output.";

/** Shortens `text` to at most `max` characters, marking the cut with an ellipsis. */
export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

/** The file name at the end of a URI string, decoded ("file:///a/b%20c.py" -> "b c.py"). */
export function fileName(uri: string): string {
  const last =
    uri
      .replace(/[?#].*$/, "")
      .split("/")
      .at(-1) ?? uri;
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

function lines(...parts: (string | undefined)[]): string {
  return parts.filter((p): p is string => p !== undefined && p !== "").join("\n");
}

/**
 * The status bar text, tooltip and severity for a state; an interpreter held back until trust
 * is said first in the tooltip, whatever the state.
 */
export function present(input: StatusInput): Presentation {
  const shown = presentState(input);
  const held = input.held?.trim() ?? "";
  return held === "" ? shown : { ...shown, tooltip: lines(held, shown.tooltip) };
}

function presentState(input: StatusInput): Presentation {
  const where = input.uri === undefined ? undefined : `in ${fileName(input.uri)}`;
  // A whole-script run is the server's `<script>`: named by its file, as the user knows it.
  const message = input.message
    .trim()
    .replace(
      /^<script>/,
      input.uri === undefined ? "the script" : `${fileName(input.uri)} (script)`,
    );
  switch (input.state) {
    case "idle":
      if (!input.trusted) {
        return {
          text: `$(workspace-untrusted) ${NAME}`,
          tooltip: lines(
            `${NAME}: Restricted Mode, nothing is profiled until the workspace is trusted.`,
            message,
            CLICK,
          ),
          severity: "none",
        };
      }
      return {
        text: `$(pulse) ${NAME}`,
        tooltip: lines(`${NAME}: ready.`, message, CLICK),
        severity: "none",
      };
    case "profiling": {
      const subject = message === "" ? "…" : truncate(message, MAX_SUBJECT);
      return {
        text: `$(loading~spin) profiling ${subject}`,
        tooltip: lines(`${NAME}: profiling ${message || "…"}`, where, CLICK),
        severity: "none",
      };
    }
    case "error":
      return {
        text: `$(error) ${NAME} error`,
        tooltip: lines(`${NAME} error: ${message || "see the output"}`, where, CLICK),
        severity: "error",
      };
    case "starting":
      return {
        text: `$(loading~spin) ${NAME}`,
        tooltip: lines(`${NAME}: starting the server.`, message, CLICK),
        severity: "none",
      };
    case "stopped":
      return {
        text: `$(circle-slash) ${NAME}`,
        tooltip: lines(`${NAME}: the server is not running.`, message, CLICK),
        severity: "warning",
      };
    case "unavailable":
      return {
        text: `$(warning) ${NAME}`,
        tooltip: lines(`${NAME} cannot start: ${message || "see the output"}`, CLICK),
        severity: "warning",
      };
  }
}
