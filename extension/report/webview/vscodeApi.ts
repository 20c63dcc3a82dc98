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

/** What the webview keeps across reloads. */
export interface SavedState {
  tab?: ReportTab;
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

export function saveState(state: SavedState): void {
  api.setState(state);
}
