/**
 * The webview's handle on VS Code: posting messages to the extension and keeping a little
 * state (the tab shown) across the reloads that follow hiding the panel.
 */
import type { FromWebview, ReportTab } from "../messages";

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

/** What the webview keeps across reloads (and a window reload: the panel is restored on it). */
export interface SavedState {
  tab?: ReportTab;
  /** The report shown: the panel's serializer reopens it after *Reload Window*. */
  target?: { uri: string; function: string };
}

const api = acquireVsCodeApi();

/** Sends a message to the extension. */
export function post(message: FromWebview): void {
  api.postMessage(message);
}

export function loadState(): SavedState {
  const state = api.getState();
  return typeof state === "object" && state !== null ? state : {};
}

/** Merges `state` into what is kept. */
export function saveState(state: SavedState): void {
  api.setState({ ...loadState(), ...state });
}
