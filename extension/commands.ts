/**
 * The extension's own commands. Profiling goes to the server as `workspace/executeCommand`
 * with the server's command ids (`protocol.ts`); the server reports progress and results.
 */
import * as vscode from "vscode";
import { ExecuteCommandRequest } from "vscode-languageclient/node";
import { Commands, DISPLAY_NAME, LANGUAGE } from "./constants";
import type { Ctx } from "./ctx";
import {
  ReportServerCommands,
  ServerCommands,
  type ProfileAllArgs,
  type ProfileArgs,
  type RunNcuArgs,
} from "./protocol";
import { functionAt, scanPython } from "./pyscan";
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
    const line = editor.selection.active.line;
    await execute(ctx, editor.document.uri, (uri) => ({
      command: ServerCommands.profile,
      args: { uri, line },
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

/** Nsight Compute on the function at the cursor (the server says why when it cannot run). */
async function runNcuAtCursor(ctx: Ctx): Promise<void> {
  const editor = pythonEditor();
  if (editor === undefined) {
    return;
  }
  const lines = editor.document.getText().split(/\r?\n/);
  const found = functionAt(scanPython(lines), lines, editor.selection.active.line);
  if (found === undefined || found.isTritonKernel) {
    void vscode.window.showInformationMessage(
      `${DISPLAY_NAME}: put the cursor in a function that launches kernels (not a @triton.jit kernel itself).`,
    );
    return;
  }
  await execute(ctx, editor.document.uri, (uri) => ({
    command: ReportServerCommands.runNcu,
    args: { uri, function: found.qualname },
  }));
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
    // A cancelled request (the user cancelled the progress notification) is not an error.
    reportFailure(ctx, command, error);
  }
}
