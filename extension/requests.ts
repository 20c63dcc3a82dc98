/**
 * What every request to the server from a command needs: a running client (or the user told
 * why there is none) and one way of reporting a failure.
 */
import * as vscode from "vscode";
import { LSPErrorCodes, ResponseError, type LanguageClient } from "vscode-languageclient/node";
import { CancelledError } from "./async";
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
