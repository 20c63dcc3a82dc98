/**
 * The messages between the extension and the report webview (the panel and the two custom
 * editors share one webview bundle).
 *
 * The webview holds no URI and no path: it names a source line or an action, and the extension,
 * which knows the document and the function the view is about, carries it out. Everything the
 * webview sends is checked by {@link isFromWebview} before it is acted on.
 *
 * Pure (no `vscode`, no DOM), so both sides import it and node:test checks it.
 */
import type {
  CompareResult,
  HistoryResult,
  NcuFileResult,
  ReportResult,
  Timeline,
  TraceFileResult,
} from "../generated/wire";
import { isRunRef } from "./historyModel";

/** What a webview shows: a function's report, or a file opened in a custom editor. */
export type ViewMode = "report" | "trace" | "ncu";

export const VIEW_MODES: readonly ViewMode[] = ["report", "trace", "ncu"];

/** The report panel's tabs. */
export type ReportTab = "summary" | "timeline" | "ncu" | "sweep" | "history";

export const REPORT_TABS: readonly ReportTab[] = ["summary", "timeline", "ncu", "sweep", "history"];

/** Actions the webview asks for that run a server command; one runs at a time per view. */
export type Action = "profile" | "runNcu" | "sweep" | "applyParameter";

/** Extension -> webview. */
export type ToWebview =
  /** A request for the data is in flight. */
  | { type: "loading"; message: string }
  /** A function's report; `tab` switches to that tab (else the webview keeps its own). */
  | { type: "report"; report: ReportResult; tab?: ReportTab }
  | { type: "traceFile"; result: TraceFileResult }
  | { type: "ncuFile"; result: NcuFileResult }
  /** A failure worded for the user, shown in the view (the data shown before stays). */
  | { type: "error"; message: string }
  /** The action now running (its buttons are disabled), or null when none runs. */
  | { type: "busy"; action: Action | null }
  /** The colour theme changed: redraw the canvases with the new colours. */
  | { type: "theme" }
  /** The answer to the webview's `timelineWindow` number `id` (null: no detail to be had). */
  | { type: "timelineWindow"; id: number; timeline: Timeline | null }
  /** The function's history of runs (sent after each report; null: it could not be read). */
  | { type: "history"; history: HistoryResult | null }
  /** The answer to the webview's `compareRuns`. */
  | { type: "comparison"; comparison: CompareResult };

/** Webview -> extension. */
export type FromWebview =
  /** The webview (re)loaded and wants its data, e.g. after being hidden and shown again. */
  | { type: "ready" }
  /** Ask the server again. */
  | { type: "refresh" }
  /** Show a line of the function's document in the editor (1-based). */
  | { type: "revealLine"; line: number }
  /** Profile the function (when it has no profile yet, or again). */
  | { type: "profile" }
  | { type: "runNcu"; set: "basic" | "full" }
  /** Sweep `param` over `values` (null: the server's default powers of two). */
  | { type: "sweep"; param: string; values: number[] | null }
  | { type: "applyParameter"; param: string; value: number }
  /**
   * The timeline shown in detail between `start` and `end` (microseconds from the trace's
   * start): the view is zoomed in past the resolution of what it has. Numbered by the webview,
   * which keeps only the answer to its latest.
   */
  | { type: "timelineWindow"; id: number; start: number; end: number }
  /** Open VS Code's diff editor: the function's text in run `run` against its text now. */
  | { type: "historyDiff"; run: string }
  /** Pin run `run` as the function's baseline. */
  | { type: "setBaseline"; run: string }
  /** Compare two runs (ids, `-1`, `baseline`), side by side per line and per kernel. */
  | { type: "compareRuns"; before: string; after: string };

/** Most values one sweep may ask for from the webview. */
export const MAX_SWEEP_VALUES = 64;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** True for a Python identifier (ASCII), the only parameter names the webview may send. */
export function isIdentifier(value: unknown): value is string {
  return typeof value === "string" && value.length <= 100 && IDENTIFIER.test(value);
}

/** A value of an int parameter the webview may send: a positive safe integer. */
export function isParameterValue(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Checks a message from the webview (untrusted: it renders data from the user's code). */
export function isFromWebview(value: unknown): value is FromWebview {
  if (!isRecord(value)) {
    return false;
  }
  switch (value["type"]) {
    case "ready":
    case "refresh":
    case "profile":
      return true;
    case "revealLine":
      return Number.isSafeInteger(value["line"]) && (value["line"] as number) >= 1;
    case "runNcu":
      return value["set"] === "basic" || value["set"] === "full";
    case "sweep": {
      const values = value["values"];
      return (
        isIdentifier(value["param"]) &&
        (values === null ||
          (Array.isArray(values) &&
            values.length > 0 &&
            values.length <= MAX_SWEEP_VALUES &&
            values.every(isParameterValue)))
      );
    }
    case "applyParameter":
      return isIdentifier(value["param"]) && isParameterValue(value["value"]);
    case "historyDiff":
    case "setBaseline":
      return isRunRef(value["run"]);
    case "compareRuns":
      return isRunRef(value["before"]) && isRunRef(value["after"]);
    case "timelineWindow": {
      const { id, start, end } = value;
      return (
        Number.isSafeInteger(id) &&
        typeof start === "number" &&
        typeof end === "number" &&
        Number.isFinite(start) &&
        Number.isFinite(end) &&
        start < end
      );
    }
    default:
      return false;
  }
}

/** The action a message starts, if it starts one. */
export function actionOf(message: FromWebview): Action | undefined {
  switch (message.type) {
    case "profile":
    case "runNcu":
    case "sweep":
    case "applyParameter":
      return message.type;
    default:
      return undefined;
  }
}

/** Checks a message from the extension (the webview's side of the contract). */
export function isToWebview(value: unknown): value is ToWebview {
  if (!isRecord(value)) {
    return false;
  }
  switch (value["type"]) {
    case "loading":
    case "error":
      return typeof value["message"] === "string";
    case "report":
      return (
        isRecord(value["report"]) &&
        (value["tab"] === undefined || REPORT_TABS.includes(value["tab"] as ReportTab))
      );
    case "traceFile":
    case "ncuFile":
      return isRecord(value["result"]);
    case "busy":
      return (
        value["action"] === null ||
        ["profile", "runNcu", "sweep", "applyParameter"].includes(value["action"] as string)
      );
    case "theme":
      return true;
    case "timelineWindow":
      return (
        Number.isSafeInteger(value["id"]) &&
        (value["timeline"] === null || isRecord(value["timeline"]))
      );
    case "history":
      return value["history"] === null || isRecord(value["history"]);
    case "comparison":
      return isRecord(value["comparison"]);
    default:
      return false;
  }
}
