/**
 * What every request to the server from a command needs: a running client (or the user told
 * why there is none), a cancellable progress notification, a check of the document's version,
 * one way of checking a result (each request's own check, `protocol.ts`) and one way of
 * reporting a failure.
 */
import * as vscode from "vscode";
import { LSPErrorCodes, ResponseError, type LanguageClient } from "vscode-languageclient/node";
import { CancelledError, untilCancelled } from "./async";
import { DISPLAY_NAME, LANGUAGE } from "./constants";
import type { Ctx } from "./ctx";
import { cursorParams, isUserReady } from "./cursor";
import type { Position } from "./generated/wire";
import { Invalid } from "./guards";
import type { CheckedRequest } from "./protocol";
import { summarize } from "./errorText";
import { showError, showInformation, showWarning, withInertProgress } from "./notify";

/**
 * The running client, or undefined after offering to show the output or restart the server.
 */
export async function runningClient(ctx: Ctx): Promise<LanguageClient | undefined> {
  const client = ctx.client;
  if (client !== undefined) {
    return client;
  }
  const choice = await showWarning(
    `${DISPLAY_NAME}: the server is not running.`,
    "Show Output",
    "Restart Server",
  );
  if (choice === "Show Output") {
    ctx.log.show();
  } else if (choice === "Restart Server") {
    await ctx.restart("Restart Server from a command");
  }
  return undefined;
}

/**
 * For a request about the cursor of the active editor: the running client, the document's URI
 * as the client sends it (the server's results are keyed by it) and `{uri, position}`; undefined
 * after telling the user when the active editor is not a Python file (`what`: what the cursor
 * should be in, e.g. "the function to report on") or the server is not running.
 */
export async function atCursor(
  ctx: Ctx,
  what: string,
): Promise<
  { client: LanguageClient; uri: string; params: { uri: string; position: Position } } | undefined
> {
  const editor = vscode.window.activeTextEditor;
  const document = editor?.document;
  if (editor === undefined || document?.languageId !== LANGUAGE || document.uri.scheme !== "file") {
    void showInformation(`${DISPLAY_NAME}: open a Python file and put the cursor in ${what}.`);
    return undefined;
  }
  const position = editor.selection.active;
  const client = await runningClient(ctx);
  if (client === undefined) {
    return undefined;
  }
  const uri = client.code2ProtocolConverter.asUri(document.uri);
  return { client, uri, params: cursorParams(uri, position) };
}

/** True for a request the user cancelled (not an error worth a message). */
export function isCancellation(error: unknown): boolean {
  return (
    error instanceof CancelledError ||
    (error instanceof ResponseError && error.code === LSPErrorCodes.RequestCancelled)
  );
}

/**
 * The server's error message when it is a complete sentence for the user ({@link isUserReady}),
 * e.g. when an at-cursor request's position is in no function; undefined for any other error.
 */
export function userMessage(error: unknown): string | undefined {
  return error instanceof ResponseError && isUserReady(error.message) ? error.message : undefined;
}

/** The button of a failure notification that opens the output channel. */
export const SHOW_DETAILS = "Show details";

/**
 * The one way a failure without a line of its own reaches the user: the whole message in the
 * output channel, and one notification with a one-line summary ({@link summarize}) and "Show
 * details", which opens the output channel. Never a raw multi-line exception in a toast.
 *
 * Args:
 *   message: the failure, as long as it is (a server error, a compiler's output…).
 *   severity: "error" (default) or "warning".
 */
export function showFailure(
  ctx: Ctx,
  message: string,
  severity: "error" | "warning" = "error",
): void {
  const summary = summarize(message);
  const prefixed = summary.text.startsWith(DISPLAY_NAME)
    ? summary.text
    : `${DISPLAY_NAME}: ${summary.text}`;
  if (severity === "error") {
    ctx.log.error(message);
  } else {
    ctx.log.warn(message);
  }
  const show = severity === "error" ? showError : showWarning;
  void show(prefixed, SHOW_DETAILS).then((choice) => {
    if (choice === SHOW_DETAILS) {
      ctx.log.show(true);
    }
  });
  // The failure has been shown: the status item need not stay red until the next success.
  ctx.status.failureShown();
}

/**
 * Shows a failed request: a {@link userMessage} as is, as information; anything else through
 * {@link showFailure}. Cancellations are ignored.
 *
 * Args:
 *   what: the request's method or command id, for the log.
 */
export function reportFailure(ctx: Ctx, what: string, error: unknown): void {
  if (isCancellation(error)) {
    return;
  }
  const message = error instanceof Error ? error.message : String(error);
  const forUser = userMessage(error);
  if (forUser !== undefined) {
    ctx.log.info(`${what}: ${forUser}`);
    void showInformation(summarize(forUser).text);
    return;
  }
  ctx.log.error(`${what} failed:`);
  showFailure(ctx, message);
}

/** Logs a result that does not have the shape of the protocol's, and returns the error to throw. */
export function malformed(ctx: Ctx, method: string, result: unknown, reason: string): Error {
  ctx.log.error(
    `${method}: unexpected result (${reason}): ${JSON.stringify(result)?.slice(0, 2_000)}`,
  );
  return new Error(`the server's answer to ${method} is malformed; see the output`);
}

/**
 * Sends a `kernelLens/*` request and checks its result with the request's check of it
 * (`protocol.ts`); throws the server's error, or a malformed-answer error after logging why.
 */
export async function sendChecked<P, R>(
  ctx: Ctx,
  client: LanguageClient,
  request: CheckedRequest<P, R>,
  params: P,
  token?: vscode.CancellationToken,
): Promise<R> {
  const result: unknown = await client.sendRequest(request, params, token);
  const checked = request.check(result, "result");
  if (checked instanceof Invalid) {
    throw malformed(ctx, request.method, result, checked.reason);
  }
  return checked;
}

/**
 * {@link sendChecked} under a cancellable progress notification titled `title` (see
 * {@link withProgress}).
 */
export function sendWithProgress<P, R>(
  ctx: Ctx,
  client: LanguageClient,
  request: CheckedRequest<P, R>,
  params: P,
  title: string,
): Thenable<R> {
  return withProgress(title, (token) => sendChecked(ctx, client, request, params, token));
}

/**
 * The URI of `source` as the server knows it: as a code lens gave it (sent back unchanged),
 * else as the client converts it in every other message.
 */
export function protocolUri(
  client: LanguageClient,
  source: vscode.Uri,
  lensUri: string | undefined,
): string {
  return lensUri ?? client.code2ProtocolConverter.asUri(source);
}

/** The version of the source document the server will read, if it is open. */
export function versionOf(source: vscode.Uri): number | undefined {
  return vscode.workspace.textDocuments.find((d) => d.uri.toString() === source.toString())
    ?.version;
}

/**
 * Runs `request` under a cancellable progress notification; cancelling it cancels the request
 * (the server stops the work) and closes the notification at once.
 */
export function withProgress<T>(
  title: string,
  request: (token: vscode.CancellationToken) => Promise<T>,
): Thenable<T> {
  return withInertProgress(
    { location: vscode.ProgressLocation.Notification, title, cancellable: true },
    (_progress, token) => untilCancelled(request(token), token),
  );
}
