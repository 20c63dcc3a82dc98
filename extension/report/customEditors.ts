/**
 * Read-only custom editors for profiler output on disk: a Chrome trace (`*.pt.trace.json`, and
 * any `*.json` on request) in the timeline, and an Nsight Compute report (`*.ncu-rep`) in the
 * kernels view. The server reads the file (`kernelLens/traceFile`, `kernelLens/ncuFile`); the
 * webview is the report panel's, in a mode without source links or commands.
 *
 * A big trace takes seconds to read the first time: the view shows the server's
 * `kernelLens/traceProgress` as it comes ("Reading big.json: 45% · reading events…"), the
 * server's progress notification has the Cancel button, and closing the editor cancels the
 * request (the server stops reading when no view waits for the file any more).
 */
import * as vscode from "vscode";
import type { Ctx } from "../ctx";
import {
  NcuFileRequest,
  TraceFileRequest,
  TraceProgressNotification,
  TraceReadyNotification,
} from "../protocol";
import { isCancellation, sendChecked } from "../requests";
import { isFromWebview, type ToWebview } from "./messages";
import { traceLoadingText } from "./traceLoading";
import type { ClientWaiter, ThemeBroadcast } from "./webviews";
import { answerTimelineWindow, messageOf, postTo, setShell } from "./webviews";

/** How long a file view waits for the server to start, in milliseconds. */
const CLIENT_WAIT_MS = 60_000;

/** A file opened in a viewer; keeps the server's answer while any of its editors is open. */
class FileDocument implements vscode.CustomDocument {
  /** The last answer, so that showing a hidden editor again does not re-read a large trace. */
  answer: ToWebview | undefined;
  /** Cancels the request in flight (the editor closed, or a refresh replaced it). */
  loading: vscode.CancellationTokenSource | undefined;
  /** After a first view of a big trace: waits for `kernelLens/traceReady` to ask again. */
  partialWait: vscode.Disposable | undefined;

  constructor(readonly uri: vscode.Uri) {}

  dispose(): void {
    this.answer = undefined;
    this.partialWait?.dispose();
    this.partialWait = undefined;
    this.loading?.cancel();
    this.loading?.dispose();
    this.loading = undefined;
  }
}

/** Which view a file opens in. */
export type FileKind = "trace" | "ncu";

export class FileViewer implements vscode.CustomReadonlyEditorProvider<FileDocument> {
  constructor(
    private readonly ctx: Ctx,
    private readonly extensionUri: vscode.Uri,
    private readonly kind: FileKind,
    private readonly clients: ClientWaiter,
    private readonly theme: ThemeBroadcast,
  ) {}

  openCustomDocument(uri: vscode.Uri): FileDocument {
    return new FileDocument(uri);
  }

  resolveCustomEditor(document: FileDocument, panel: vscode.WebviewPanel): void {
    const name = document.uri.path.split("/").pop() ?? document.uri.path;
    setShell(panel.webview, this.extensionUri, name, this.kind);
    const subscriptions = [
      this.theme.add(panel.webview),
      panel.webview.onDidReceiveMessage((message: unknown) => {
        if (!isFromWebview(message)) {
          return;
        }
        if (message.type === "refresh") {
          document.answer = undefined;
        }
        if (message.type === "ready" || message.type === "refresh") {
          void this.load(document, panel.webview);
        } else if (message.type === "timelineWindow" && this.kind === "trace") {
          const answer = document.answer;
          const path = answer?.type === "traceFile" ? answer.result.timeline.path : undefined;
          void answerTimelineWindow(this.ctx, panel.webview, path ?? document.uri.fsPath, message);
        }
      }),
    ];
    panel.onDidDispose(() => {
      subscriptions.forEach((d) => void d.dispose());
      document.loading?.cancel();
    });
  }

  private async load(document: FileDocument, webview: vscode.Webview): Promise<void> {
    if (document.answer !== undefined) {
      postTo(webview, document.answer);
      return;
    }
    const uri = document.uri;
    if (uri.scheme !== "file") {
      postTo(webview, {
        type: "error",
        message: `Kernel Lens reads profiler files from the local disk only; this one is on ${uri.scheme}:.`,
      });
      return;
    }
    const name = uri.path.split("/").pop() ?? uri.fsPath;
    let bytes: number | undefined;
    try {
      bytes = (await vscode.workspace.fs.stat(uri)).size;
    } catch {
      bytes = undefined; // the server says what is wrong with the file
    }
    postTo(webview, { type: "loading", message: traceLoadingText(name, bytes) });
    const client = await this.clients.running(CLIENT_WAIT_MS);
    if (client === undefined) {
      postTo(webview, {
        type: "error",
        message:
          "The Kernel Lens server is not running: see the output (Kernel Lens: Show Output), or restart it, then Refresh.",
      });
      return;
    }
    document.loading?.cancel();
    const loading = new vscode.CancellationTokenSource();
    document.loading = loading;
    const progress =
      this.kind === "trace"
        ? client.onNotification(TraceProgressNotification, (note) => {
            if (note.path === uri.fsPath && !loading.token.isCancellationRequested) {
              postTo(webview, { type: "loading", message: traceLoadingText(name, bytes, note) });
            }
          })
        : undefined;
    try {
      const params = { path: uri.fsPath };
      let answer: ToWebview;
      if (this.kind === "trace") {
        answer = {
          type: "traceFile",
          result: await sendChecked(this.ctx, client, TraceFileRequest, params, loading.token),
        };
      } else {
        answer = {
          type: "ncuFile",
          result: await sendChecked(this.ctx, client, NcuFileRequest, params, loading.token),
        };
      }
      if (answer.type === "traceFile" && answer.result.partial !== undefined) {
        // A first view of a big trace: ask again once the server has read it whole.
        const ready = client.onNotification(TraceReadyNotification, (note) => {
          if (note.path === uri.fsPath) {
            ready.dispose();
            if (document.loading === undefined && document.answer === undefined) {
              void this.load(document, webview);
            }
          }
        });
        document.partialWait?.dispose();
        document.partialWait = ready;
      } else {
        document.answer = answer;
      }
      postTo(webview, answer);
    } catch (error) {
      if (!isCancellation(error)) {
        this.ctx.log.error(`Reading ${uri.fsPath}: ${messageOf(error)}`);
        postTo(webview, { type: "error", message: messageOf(error) });
      }
    } finally {
      progress?.dispose();
      if (document.loading === loading) {
        document.loading = undefined;
      }
      loading.dispose();
    }
  }
}
