/**
 * What every request to the server from a command needs: a running client (or the user told
 * why there is none), a cancellable progress notification, a check of the document's version,
 * and one way of reporting a failure.
 */
import * as vscode from "vscode";
import { LSPErrorCodes, ResponseError, type LanguageClient } from "vscode-languageclient/node";
import { CancelledError, untilCancelled } from "./async";
import { DISPLAY_NAME } from "./constants";
import type { Ctx } from "./ctx";

/**
 * The running client, or undefined after offering to show the output or restart the server.
 */
export async function runningClient(ctx: Ctx): Promise<LanguageClient | undefined> {
  const client = ctx.client;
  if (client !== undefined) {
    return client;
  }
  const choice = await vscode.window.showWarningMessage(
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

/** True for a request the user cancelled (not an error worth a message). */
export function isCancellation(error: unknown): boolean {
  return (
    error instanceof CancelledError ||
    (error instanceof ResponseError && error.code === LSPErrorCodes.RequestCancelled)
  );
}

/**
 * Logs a failed request and shows its message, which the server words for the user (e.g. "no
 * function in triton_square.py launches k[grid](…)"), with a "Show Output" action. Cancellations
 * are ignored.
 *
 * Args:
 *   what: the request's method or command id, for the log.
 */
export function reportFailure(ctx: Ctx, what: string, error: unknown): void {
  if (isCancellation(error)) {
    return;
  }
  const message = error instanceof Error ? error.message : String(error);
  ctx.log.error(`${what} failed: ${message}`);
  void vscode.window
    .showErrorMessage(`${DISPLAY_NAME}: ${message}`, "Show Output")
    .then((choice) => choice !== undefined && ctx.log.show());
}

/** Logs a result that does not have the shape of the protocol's, and the error to throw. */
export function malformed(ctx: Ctx, method: string, result: unknown): Error {
  ctx.log.error(`${method}: unexpected result ${JSON.stringify(result)?.slice(0, 2_000)}`);
  return new Error(`the server's answer to ${method} is malformed; see the output`);
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
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title, cancellable: true },
    (_progress, token) => untilCancelled(request(token), token),
  );
}
