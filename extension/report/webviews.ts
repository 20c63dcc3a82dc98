/**
 * What the report panel and the custom editors share: the webview's options and HTML shell
 * (`html.ts`), typed posting, the wait for a running client, and the theme broadcast.
 */
import * as vscode from "vscode";
import { State, type LanguageClient } from "vscode-languageclient/node";
import type { Ctx } from "../ctx";
import { makeNonce, shellHtml } from "./html";
import { type Timeline } from "../generated/wire";
import { TimelineWindowRequest } from "../protocol";
import { isCancellation, sendChecked } from "../requests";
import type { ToWebview, ViewMode } from "./messages";
import type { TimelineSource } from "./timelineSource";

/** The only folder a report webview may load from: the bundled script, stylesheet and nothing else. */
export function webviewRoot(extensionUri: vscode.Uri): vscode.Uri {
  return vscode.Uri.joinPath(extensionUri, "dist", "webview");
}

/** Scripts on, resources from {@link webviewRoot} only, no command URIs. */
export function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions {
  return {
    enableScripts: true,
    enableCommandUris: false,
    localResourceRoots: [webviewRoot(extensionUri)],
  };
}

/** Sets the webview's options and its HTML shell (a fresh nonce each time). */
export function setShell(
  webview: vscode.Webview,
  extensionUri: vscode.Uri,
  title: string,
  mode: ViewMode,
): void {
  const root = webviewRoot(extensionUri);
  webview.options = webviewOptions(extensionUri);
  webview.html = shellHtml({
    cspSource: webview.cspSource,
    nonce: makeNonce(),
    scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(root, "report.js")).toString(),
    styleUri: webview.asWebviewUri(vscode.Uri.joinPath(root, "report.css")).toString(),
    title,
    mode,
  });
}

/** Posts a typed message; a webview that has gone away just drops it. */
export function postTo(webview: vscode.Webview, message: ToWebview): void {
  void webview.postMessage(message).then(undefined, () => undefined);
}

/**
 * Answers the webview's `timelineWindow` request number `id`: the server's detail of the
 * window of the trace at `source` (a path, or a distributed step's ranks: every rank's trace at
 * its shift), or null when there is none to be had (no server, no path, an error, which is
 * logged: the overview stays on screen).
 */
export async function answerTimelineWindow(
  ctx: Ctx,
  webview: vscode.Webview,
  source: TimelineSource | string | undefined,
  request: { id: number; start: number; end: number },
): Promise<void> {
  let timeline: Timeline | null = null;
  const client = ctx.client;
  const { path, ranks } =
    typeof source === "string" ? { path: source, ranks: undefined } : (source ?? {});
  if (client !== undefined && path !== undefined) {
    const method = TimelineWindowRequest.method;
    try {
      timeline = await sendChecked(ctx, client, TimelineWindowRequest, {
        path,
        start_us: request.start,
        end_us: request.end,
        ...(ranks === undefined ? {} : { ranks }),
      });
    } catch (error) {
      if (!isCancellation(error)) {
        ctx.log.warn(`${method} ${path}: ${messageOf(error)}; keeping the overview`);
      }
    }
  }
  postTo(webview, { type: "timelineWindow", id: request.id, timeline });
}

/** The message of an error (a ResponseError's is the server's, worded for the user). */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Waits for a running client: views opened while the server starts (a trace file reopened at
 * start-up, a report revealed at once) ask as soon as it runs instead of failing.
 */
export class ClientWaiter implements vscode.Disposable {
  private readonly started = new vscode.EventEmitter<void>();
  private readonly subscription: vscode.Disposable;

  constructor(private readonly ctx: Ctx) {
    this.subscription = ctx.onClientCreated((client) => [
      client.onDidChangeState((event) => {
        if (event.newState === State.Running) {
          this.started.fire();
        }
      }),
    ]);
  }

  /** The running client, waiting at most `timeoutMs` for one; undefined if none runs by then. */
  running(timeoutMs: number): Promise<LanguageClient | undefined> {
    const now = this.ctx.client;
    if (now !== undefined) {
      return Promise.resolve(now);
    }
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        subscription.dispose();
        resolve(this.ctx.client);
      };
      const timer = setTimeout(done, timeoutMs);
      const subscription = this.started.event(done);
    });
  }

  dispose(): void {
    this.subscription.dispose();
    this.started.dispose();
  }
}

/** The live report webviews, told when the colour theme changes so they redraw their canvases. */
export class ThemeBroadcast implements vscode.Disposable {
  private readonly webviews = new Set<vscode.Webview>();
  private readonly subscription = vscode.window.onDidChangeActiveColorTheme(() => {
    for (const webview of this.webviews) {
      postTo(webview, { type: "theme" });
    }
  });

  /** Adds a webview until the returned disposable is disposed. */
  add(webview: vscode.Webview): vscode.Disposable {
    this.webviews.add(webview);
    return { dispose: () => this.webviews.delete(webview) };
  }

  dispose(): void {
    this.subscription.dispose();
    this.webviews.clear();
  }
}
