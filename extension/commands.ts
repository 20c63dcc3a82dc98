/**
 * The extension's own commands. Profiling goes to the server as `workspace/executeCommand`
 * with the server's command ids (`protocol.ts`); the server reports progress and results. The
 * at-cursor commands send the cursor (`cursor.ts`) and the server finds the function there.
 */
import * as vscode from "vscode";
import { ExecuteCommandRequest } from "vscode-languageclient/node";
import { Commands, DISPLAY_NAME, LANGUAGE } from "./constants";
import type { Ctx } from "./ctx";
import { cursorParams } from "./cursor";
import {
  ReportServerCommands,
  ServerCommands,
  type ProfileAllArgs,
  type ProfileArgs,
  type RunNcuArgs,
} from "./protocol";
import { reportFailure, runningClient } from "./requests";

/** Registers every command of {@link Commands} as an extension-scoped disposable. */
export function registerCommands(ctx: Ctx): void {
  ctx.pushExtCleanup(
    vscode.commands.registerCommand(Commands.profileAtCursor, () => profileAtCursor(ctx)),
    vscode.commands.registerCommand(Commands.profileFile, () => profileFile(ctx)),
    vscode.commands.registerCommand(Commands.runNcuAtCursor, () => runNcuAtCursor(ctx)),
    vscode.commands.registerCommand(Commands.showOutput, () => ctx.log.show()),
    vscode.commands.registerCommand(Commands.restartServer, () =>
      ctx.restart("Restart Server command"),
    ),
  );
}

/** The active editor if it shows a Python file, else undefined after telling the user. */
function pythonEditor(): vscode.TextEditor | undefined {
  const editor = vscode.window.activeTextEditor;
  if (editor?.document.languageId !== LANGUAGE || editor.document.uri.scheme !== "file") {
    void vscode.window.showInformationMessage(
      `${DISPLAY_NAME}: open a Python file and put the cursor in the function to profile.`,
    );
    return undefined;
  }
  return editor;
}

async function profileAtCursor(ctx: Ctx): Promise<void> {
  const editor = pythonEditor();
  if (editor !== undefined) {
    const position = editor.selection.active;
    await execute(ctx, editor.document.uri, (uri) => ({
      command: ServerCommands.profile,
      args: cursorParams(uri, position),
    }));
  }
}

async function profileFile(ctx: Ctx): Promise<void> {
  const editor = pythonEditor();
  if (editor !== undefined) {
    await execute(ctx, editor.document.uri, (uri) => ({
      command: ServerCommands.profileAll,
      args: { uri },
    }));
  }
}

/**
 * Nsight Compute on the function at the cursor (the server says why when it cannot run, or
 * when the cursor is in no function that launches kernels).
 */
async function runNcuAtCursor(ctx: Ctx): Promise<void> {
  const editor = pythonEditor();
  if (editor !== undefined) {
    const position = editor.selection.active;
    await execute(ctx, editor.document.uri, (uri) => ({
      command: ReportServerCommands.runNcu,
      args: cursorParams(uri, position),
    }));
  }
}

/** A server command with its argument. */
type Invocation =
  | { command: typeof ServerCommands.profile; args: ProfileArgs }
  | { command: typeof ServerCommands.profileAll; args: ProfileAllArgs }
  | { command: typeof ReportServerCommands.runNcu; args: RunNcuArgs };

/**
 * Sends `workspace/executeCommand` for `document` (its URI converted as the client converts
 * it in every other message); the server shows progress (cancellable) and results itself.
 */
async function execute(
  ctx: Ctx,
  document: vscode.Uri,
  invocation: (uri: string) => Invocation,
): Promise<void> {
  const client = await runningClient(ctx);
  if (client === undefined) {
    return;
  }
  const { command, args } = invocation(client.code2ProtocolConverter.asUri(document));
  try {
    await client.sendRequest(ExecuteCommandRequest.type, {
      command,
      arguments: [args],
    });
  } catch (error) {
    // A cancelled request (the user cancelled the progress notification) is not an error; a
    // cursor in no function is the server's message to the user, shown as is.
    reportFailure(ctx, command, error);
  }
}
