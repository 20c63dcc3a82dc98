/**
 * The report panel: one webview beside the source for one function at a time (showing another
 * function reuses it), fed by `kernelLens/report`. Its buttons run the server's commands
 * (profile, Nsight Compute, sweep, apply a parameter) and its rows and events reveal source
 * lines. It keeps no state while hidden: the webview reloads when shown and asks again.
 */
import * as vscode from "vscode";
import { ExecuteCommandRequest } from "vscode-languageclient/node";
import { DISPLAY_NAME } from "../constants";
import type { Ctx } from "../ctx";
import { type HistoryResult, type ShowReportArgs } from "../generated/wire";
import {
  commandFailure,
  CompareRequest,
  HistoryRequest,
  ReportRequest,
  SetBaselineRequest,
} from "../protocol";
import { isCancellation, runningClient, sendChecked } from "../requests";
import { commandFor } from "./actions";
import { HistoryDocs } from "./historyDocs";
import { actionOf, isFromWebview, type Action, type FromWebview, type ReportTab } from "./messages";
import { showInformation, showWarning } from "../notify";
import { targetRefusal } from "../targetGuard";
import { savedTarget } from "./savedTarget";
import { timelineSource, type TimelineSource } from "./timelineSource";
import { REPORT_PANEL_TYPE } from "./viewTypes";
import type { ClientWaiter, ThemeBroadcast } from "./webviews";
import { answerTimelineWindow, messageOf, postTo, setShell, webviewRoot } from "./webviews";

/** How long a report waits for the server to start, in milliseconds. */
const CLIENT_WAIT_MS = 30_000;

export class ReportPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private target: ShowReportArgs | undefined;
  /** The tab to switch to with the next report sent. */
  private tab: ReportTab | undefined;
  /** The action running, if any (one at a time; the webview disables its buttons meanwhile). */
  private busy: Action | null = null;
  /** Numbers the report requests, so that an old answer never replaces a newer one. */
  private requests = 0;
  private panelSubscriptions: vscode.Disposable[] = [];
  /** The trace file(s) of the timeline shown, for its detail windows. */
  private timelineSource: TimelineSource | undefined;
  /** The History tab's runs, for opening a run's text in the diff editor. */
  private history: HistoryResult | undefined;
  private readonly historyDocs = new HistoryDocs();

  constructor(
    private readonly ctx: Ctx,
    private readonly extensionUri: vscode.Uri,
    private readonly clients: ClientWaiter,
    private readonly theme: ThemeBroadcast,
  ) {}

  /**
   * Opens the panel on `target` (or shows it there), on `tab` if given; a target outside the
   * workspace (and not open in the editor) is refused.
   */
  show(target: ShowReportArgs, tab?: ReportTab): void {
    const refusal = targetRefusal(target.uri, true);
    if (refusal !== undefined) {
      this.ctx.log.warn(`Report refused: ${refusal}`);
      void showWarning(`${DISPLAY_NAME}: no report: ${refusal}.`);
      return;
    }
    this.target = target;
    this.tab = tab;
    const title = `${DISPLAY_NAME}: ${target.function}`;
    const panel = this.panel;
    if (panel === undefined) {
      this.create(title);
      return;
    }
    panel.title = title;
    if (panel.visible) {
      void this.load();
    }
    // A hidden panel's webview reloads when revealed and asks for its data ("ready").
    panel.reveal(panel.viewColumn, true);
  }

  /** Reloads the panel if it shows `uri`'s `fn` (its results changed on the server). */
  refreshIf(uri: string, fn: string): void {
    const target = this.target;
    if (this.panel?.visible === true && target?.uri === uri && target.function === fn) {
      void this.load();
    }
  }

  dispose(): void {
    this.panel?.dispose();
    this.historyDocs.dispose();
  }

  /**
   * After *Reload Window*: the panel VS Code kept is the report of the function its webview
   * last showed (its saved `target`), loaded afresh; without one it is closed, never left as an
   * empty editor group.
   */
  restore(panel: vscode.WebviewPanel, state: unknown): void {
    const target = savedTarget(state);
    if (target === undefined || this.panel !== undefined) {
      panel.dispose();
      return;
    }
    // The saved state is the webview's word, not the extension's: only a workspace file's
    // report comes back (in Restricted Mode its buttons run nothing).
    const refusal = targetRefusal(target.uri, false);
    if (refusal !== undefined) {
      this.ctx.log.warn(`Report panel not restored: ${refusal}`);
      panel.dispose();
      return;
    }
    this.target = target;
    panel.webview.options = this.webviewOptions();
    this.attach(panel, `${DISPLAY_NAME}: ${target.function}`);
    this.ctx.log.info(`Report panel restored: ${target.function}`);
  }

  private webviewOptions(): vscode.WebviewOptions & vscode.WebviewPanelOptions {
    return {
      enableScripts: true,
      enableCommandUris: false,
      localResourceRoots: [webviewRoot(this.extensionUri)],
      retainContextWhenHidden: false,
    };
  }

  private create(title: string): void {
    const panel = vscode.window.createWebviewPanel(
      REPORT_PANEL_TYPE,
      title,
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      this.webviewOptions(),
    );
    this.attach(panel, title);
  }

  private attach(panel: vscode.WebviewPanel, title: string): void {
    this.panel = panel;
    panel.title = title;
    setShell(panel.webview, this.extensionUri, title, "report");
    this.panelSubscriptions = [
      panel.webview.onDidReceiveMessage((message: unknown) => this.onMessage(message)),
      this.theme.add(panel.webview),
      panel.onDidDispose(() => {
        this.panelSubscriptions.forEach((d) => void d.dispose());
        this.panelSubscriptions = [];
        this.panel = undefined;
        this.target = undefined;
      }),
    ];
  }

  private post(message: Parameters<typeof postTo>[1]): void {
    if (this.panel !== undefined) {
      postTo(this.panel.webview, message);
    }
  }

  private onMessage(message: unknown): void {
    if (!isFromWebview(message)) {
      this.ctx.log.warn(`Report panel: ignoring a malformed message ${JSON.stringify(message)}`);
      return;
    }
    const target = this.target;
    if (target === undefined) {
      return;
    }
    switch (message.type) {
      case "ready":
      case "refresh":
        void this.load();
        return;
      case "timelineWindow":
        if (this.panel !== undefined) {
          void answerTimelineWindow(this.ctx, this.panel.webview, this.timelineSource, message);
        }
        return;
      case "historyDiff":
        void this.openDiff(target, message.run);
        return;
      case "setBaseline":
      case "compareRuns":
        void this.historyRequest(target, message);
        return;
      case "revealLine":
        void revealLine(target.uri, message.line).catch((error: unknown) =>
          this.post({
            type: "error",
            message: `Cannot show line ${message.line}: ${messageOf(error)}`,
          }),
        );
        return;
      default:
        void this.run(target, message);
    }
  }

  /** Asks the server for the target's report and sends it to the webview. */
  private async load(): Promise<void> {
    const target = this.target;
    if (target === undefined || this.panel === undefined) {
      return;
    }
    const request = ++this.requests;
    this.post({ type: "loading", message: `Loading the report of ${target.function}…` });
    const client = await this.clients.running(CLIENT_WAIT_MS);
    if (request !== this.requests) {
      return;
    }
    if (client === undefined) {
      this.post({
        type: "error",
        message:
          "The Kernel Lens server is not running: see the output (Kernel Lens: Show Output), or restart it.",
      });
      return;
    }
    try {
      const result = await sendChecked(this.ctx, client, ReportRequest, {
        uri: target.uri,
        function: target.function,
      });
      if (request !== this.requests) {
        return;
      }
      const tab = this.tab;
      this.tab = undefined;
      this.timelineSource = timelineSource(result.timeline);
      this.post({ type: "report", report: result, ...(tab === undefined ? {} : { tab }) });
      this.post({ type: "busy", action: this.busy });
      await this.loadHistory(target, request);
    } catch (error) {
      if (request === this.requests && !isCancellation(error)) {
        this.ctx.log.error(
          `${ReportRequest.method} ${target.function} failed: ${messageOf(error)}`,
        );
        this.post({ type: "error", message: messageOf(error) });
      }
    }
  }

  /** Asks the server for the target's history of runs and sends it to the webview. */
  private async loadHistory(target: ShowReportArgs, request: number): Promise<void> {
    const client = await this.clients.running(CLIENT_WAIT_MS);
    if (client === undefined || request !== this.requests) {
      return;
    }
    try {
      const history = await sendChecked(this.ctx, client, HistoryRequest, {
        uri: target.uri,
        function: target.function,
      });
      if (request === this.requests) {
        this.history = history;
        this.post({ type: "history", history });
      }
    } catch (error) {
      if (request === this.requests && !isCancellation(error)) {
        this.ctx.log.warn(`${HistoryRequest.method} ${target.function}: ${messageOf(error)}`);
        this.history = undefined;
        this.post({ type: "history", history: null });
      }
    }
  }

  /** Opens the diff editor between run `run`'s text of the function and its text now. */
  private async openDiff(target: ShowReportArgs, run: string): Promise<void> {
    const history = this.history;
    const entry = history?.runs.find((r) => r.id === run);
    if (history === undefined || entry?.text === undefined) {
      this.post({ type: "error", message: `Run ${run} is not in the history shown; refresh.` });
      return;
    }
    const current = history.current_text;
    if (current === null) {
      this.post({
        type: "error",
        message: `${target.function} is not in the document now (or it does not parse): nothing to compare with.`,
      });
      return;
    }
    const key = String(hashText(target.uri));
    try {
      await this.historyDocs.openDiff(target.function, run, entry.text, current, key);
    } catch (error) {
      this.post({ type: "error", message: `Cannot open the diff: ${messageOf(error)}` });
    }
  }

  /** Pins a baseline (then reloads) or compares two runs (then sends the comparison). */
  private async historyRequest(
    target: ShowReportArgs,
    message: Extract<FromWebview, { type: "setBaseline" | "compareRuns" }>,
  ): Promise<void> {
    const client = await runningClient(this.ctx);
    if (client === undefined) {
      return;
    }
    const base = { uri: target.uri, function: target.function };
    try {
      if (message.type === "setBaseline") {
        const before = await sendChecked(this.ctx, client, HistoryRequest, base);
        const pinned = await sendChecked(this.ctx, client, SetBaselineRequest, {
          ...base,
          run: message.run,
        });
        await this.load();
        // An explicit pin says so, with Undo (issue 41): the baseline as it was comes back.
        const id = pinned.baseline?.id;
        if (id !== undefined) {
          const undo = await showInformation(
            `${DISPLAY_NAME}: run ${id} of ${pinned.function} is its baseline; later profiles are compared with it.`,
            "Undo",
          );
          if (undo === "Undo") {
            await sendChecked(
              this.ctx,
              client,
              SetBaselineRequest,
              before.baseline === null
                ? { ...base, clear: true }
                : { ...base, run: before.baseline },
            );
            await this.load();
          }
        }
        return;
      }
      const comparison = await sendChecked(this.ctx, client, CompareRequest, {
        ...base,
        before: message.before,
        after: message.after,
      });
      this.post({ type: "comparison", comparison });
    } catch (error) {
      if (!isCancellation(error)) {
        this.post({ type: "error", message: messageOf(error) });
      }
    }
  }

  /** Runs the server command behind a button, then reloads the report. */
  private async run(target: ShowReportArgs, message: FromWebview): Promise<void> {
    const action = actionOf(message);
    if (action === undefined || this.busy !== null) {
      return;
    }
    const invocation = commandFor(target, message);
    if (invocation === undefined) {
      return;
    }
    if (!vscode.workspace.isTrusted) {
      this.post({
        type: "error",
        message: "Restricted Mode: nothing is run until the workspace is trusted.",
      });
      return;
    }
    const refusal = targetRefusal(target.uri, true);
    if (refusal !== undefined) {
      this.post({ type: "error", message: `Refused: ${refusal}.` });
      return;
    }
    const client = await runningClient(this.ctx);
    if (client === undefined) {
      return;
    }
    this.setBusy(action);
    try {
      const result: unknown = await client.sendRequest(ExecuteCommandRequest.type, invocation);
      const failure = commandFailure(result);
      if (failure !== undefined) {
        this.post({ type: "error", message: failure });
      }
    } catch (error) {
      if (!isCancellation(error)) {
        this.ctx.log.error(`${invocation.command} failed: ${messageOf(error)}`);
        this.post({ type: "error", message: messageOf(error) });
      }
    } finally {
      this.setBusy(null);
    }
    // The panel may show another function by now; reload whatever it shows.
    if (action !== "applyParameter") {
      await this.load();
    }
  }

  private setBusy(action: Action | null): void {
    this.busy = action;
    this.post({ type: "busy", action });
  }
}

/** Shows 1-based `line` of the document at `uri`, selected, in the editor that shows it (or the first column). */
async function revealLine(uri: string, line: number): Promise<void> {
  const document = await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
  if (line > document.lineCount) {
    throw new Error(`the document has ${document.lineCount} lines now`);
  }
  const text = document.lineAt(line - 1);
  const range = new vscode.Range(
    line - 1,
    text.firstNonWhitespaceCharacterIndex,
    line - 1,
    text.text.length,
  );
  const shown = vscode.window.visibleTextEditors.find(
    (e) => e.document.uri.toString() === document.uri.toString(),
  );
  const editor = await vscode.window.showTextDocument(document, {
    viewColumn: shown?.viewColumn ?? vscode.ViewColumn.One,
    selection: range,
    preserveFocus: false,
  });
  editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}

/** A small stable hash of a string (FNV-1a), to keep apart documents of different files. */
function hashText(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}
