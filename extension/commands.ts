/**
 * The extension's own commands. Profiling goes to the server as `workspace/executeCommand`
 * with the server's command ids (`protocol.ts`); the server reports progress and results. The
 * at-cursor commands send the cursor (`cursor.ts`) and the server finds the function there.
 */
import * as vscode from "vscode";
import {
  ExecuteCommandRequest,
  MessageType,
  ShowMessageNotification,
  type ShowMessageParams,
} from "vscode-languageclient/node";
import { Commands, DISPLAY_NAME, LANGUAGE } from "./constants";
import type { Ctx } from "./ctx";
import { cursorParams } from "./cursor";
import {
  CMD_MORE_ACTIONS,
  type CheckMemoryArgs,
  type ProfileAllArgs,
  type ProfileArgs,
  type ProfileLightArgs,
  type RunNcuArgs,
} from "./generated/wire";
import {
  ReportServerCommands,
  ServerCommands,
  isAttributeInsideArgs,
  isProfileScriptArgs,
  isRevealLineArgs,
  isShowErrorArgs,
} from "./protocol";
import { targetRefusal } from "./targetGuard";
import { SECTION } from "./settings";
import { isMoreActionsArgs, pickItems, type PickItem } from "./moreActions";
import { parseWindow } from "./scriptArgs";
import { chooseDriver, scriptArguments } from "./runChoices";
import { protocolUri, reportFailure, runningClient, showFailure } from "./requests";
import { summarize } from "./errorText";
import { chooseInterpreter } from "./install";
import { showErrorModal, showInformation, showWarning } from "./notify";
import { PROFILE_SCRIPT_INSTEAD, lightOutcome } from "./light";

/** Registers every command of {@link Commands} as an extension-scoped disposable. */
export function registerCommands(ctx: Ctx): void {
  ctx.pushExtCleanup(
    vscode.commands.registerCommand(Commands.profileAtCursor, () => profileAtCursor(ctx)),
    vscode.commands.registerCommand(Commands.profileWithBackward, () =>
      profileAtCursor(ctx, { backward: true }),
    ),
    vscode.commands.registerCommand(Commands.profileMemory, () =>
      profileAtCursor(ctx, { memory: true }),
    ),
    vscode.commands.registerCommand(Commands.profileFile, () => profileFile(ctx)),
    vscode.commands.registerCommand(Commands.profileScript, () => profileScript(ctx)),
    vscode.commands.registerCommand(Commands.profileScriptWindow, (args: unknown) =>
      profileScriptWindow(ctx, args),
    ),
    vscode.commands.registerCommand(Commands.profileScriptLight, (args: unknown) =>
      profileScriptLight(ctx, args),
    ),
    vscode.commands.registerCommand(Commands.runNcuAtCursor, () => runNcuAtCursor(ctx)),
    vscode.commands.registerCommand(Commands.checkMemoryAtCursor, () => checkMemoryAtCursor(ctx)),
    vscode.commands.registerCommand(Commands.showOutput, () => ctx.log.show()),
    vscode.commands.registerCommand(Commands.restartServer, () =>
      ctx.restart("Restart Server command"),
    ),
    vscode.commands.registerCommand(CMD_MORE_ACTIONS, (args: unknown) => moreActions(ctx, args)),
    vscode.commands.registerCommand(Commands.scriptArguments, (args: unknown) =>
      scriptArguments(ctx, args),
    ),
    vscode.commands.registerCommand(Commands.chooseDriver, (args: unknown) =>
      chooseDriver(ctx, args),
    ),
    vscode.commands.registerCommand(Commands.chooseInterpreter, () =>
      chooseInterpreter(ctx.extensionPath),
    ),
    vscode.commands.registerCommand(Commands.showError, (args: unknown) => showError(ctx, args)),
    vscode.commands.registerCommand(Commands.revealLine, (args: unknown) => revealLine(ctx, args)),
    vscode.commands.registerCommand(Commands.attributeInside, (args: unknown) =>
      attributeInside(ctx, args),
    ),
    // The server's own messages take the same single way as the client's failures.
    ctx.onClientCreated((client) => [
      client.onNotification(ShowMessageNotification.type, (params: ShowMessageParams) =>
        showServerMessage(ctx, params),
      ),
    ]),
  );
}

/**
 * A `window/showMessage` from the server: an error or warning through {@link showFailure}
 * (one line, "Show details"); information as one line.
 */
function showServerMessage(ctx: Ctx, params: ShowMessageParams): void {
  if (params.type === MessageType.Error || params.type === MessageType.Warning) {
    showFailure(ctx, params.message, params.type === MessageType.Error ? "error" : "warning");
    return;
  }
  ctx.log.info(params.message);
  void showInformation(summarize(params.message).text);
}

/**
 * A failed profile's lens, clicked: the whole error in one place (a dialog: its message in
 * full, once), with the actions that can fix it as its buttons (open the setting, choose the
 * interpreter, go to the line where the quick fix is, the output).
 */
async function showError(ctx: Ctx, args: unknown): Promise<void> {
  if (!isShowErrorArgs(args)) {
    ctx.log.warn(`${Commands.showError}: malformed argument ${JSON.stringify(args)}`);
    return;
  }
  const { kind, message } = args.error;
  const picked = await showErrorModal(
    `${DISPLAY_NAME}: profiling ${args.function} failed (${kind})`,
    { modal: true, detail: message },
    ...args.actions.map((a) => a.label),
  );
  const action = args.actions.find((a) => a.label === picked);
  if (action !== undefined) {
    await vscode.commands.executeCommand(action.command, ...action.arguments);
  }
}

/** An error's *Go to Line*: the document opened with the 1-based line selected. */
async function revealLine(ctx: Ctx, args: unknown): Promise<void> {
  if (!isRevealLineArgs(args)) {
    ctx.log.warn(`${Commands.revealLine}: malformed argument ${JSON.stringify(args)}`);
    return;
  }
  const line = Math.max(args.line - 1, 0);
  const editor = await vscode.window.showTextDocument(vscode.Uri.parse(args.uri), {
    preview: false,
  });
  const at = editor.document.lineAt(Math.min(line, editor.document.lineCount - 1)).range;
  editor.selection = new vscode.Selection(at.start, at.end);
  editor.revealRange(at, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}

/**
 * *Attribute inside transformers* (a line whose time was mostly inside an installed package):
 * the same run again (the script, or the function) with the package named for this run, and
 * the offer to add it to `kernelLens.attributeInPackages` for the next runs. The run's file is
 * the workspace's (checked here and by the server): the package's files only show results.
 */
async function attributeInside(ctx: Ctx, args: unknown): Promise<void> {
  if (!isAttributeInsideArgs(args)) {
    ctx.log.warn(`${Commands.attributeInside}: malformed argument ${JSON.stringify(args)}`);
    return;
  }
  const refusal = targetRefusal(args.uri, true);
  if (refusal !== undefined) {
    ctx.log.warn(`${Commands.attributeInside}: ${refusal}`);
    return;
  }
  const config = vscode.workspace.getConfiguration(SECTION);
  const named = config.get<string[]>("attributeInPackages") ?? [];
  if (!named.includes(args.package)) {
    // Asked alongside the run (not before it): the run does not wait for an answer.
    void showInformation(
      `${DISPLAY_NAME}: attribute inside ${args.package} in every run of this workspace?`,
      "Add to Settings",
    ).then(async (picked) => {
      if (picked === "Add to Settings") {
        const now = config.get<string[]>("attributeInPackages") ?? [];
        if (!now.includes(args.package)) {
          await config.update(
            "attributeInPackages",
            [...now, args.package],
            vscode.ConfigurationTarget.Workspace,
          );
        }
      }
    });
  }
  const packages = [...args.packages.filter((p) => p !== args.package), args.package];
  await execute(ctx, vscode.Uri.parse(args.uri), (uri) => ({
    command: ServerCommands.profile,
    args:
      args.function === null
        ? { uri, script: true, packages }
        : { uri, function: args.function, packages },
  }));
}

/** The `…` lens: a quick pick of a function's other actions; one that cannot work says why. */
async function moreActions(ctx: Ctx, args: unknown): Promise<void> {
  if (!isMoreActionsArgs(args)) {
    ctx.log.warn(`${CMD_MORE_ACTIONS}: malformed argument ${JSON.stringify(args)}`);
    return;
  }
  const picked = await vscode.window.showQuickPick<PickItem>(pickItems(args), {
    title: `${DISPLAY_NAME}: ${args.function}`,
    placeHolder: `More actions for this ${args.function.endsWith(".py") ? "script" : "function"}`,
  });
  if (picked?.action !== undefined) {
    await vscode.commands.executeCommand(picked.action.command, ...picked.action.arguments);
  } else if (picked?.description !== undefined) {
    void showInformation(
      `${DISPLAY_NAME}: ${picked.label.replace(/^\$\([^)]+\)\s*/, "")} is ${picked.description}.`,
    );
  }
}

/** The active editor if it shows a Python file, else undefined after telling the user. */
function pythonEditor(): vscode.TextEditor | undefined {
  const editor = vscode.window.activeTextEditor;
  if (editor?.document.languageId !== LANGUAGE || editor.document.uri.scheme !== "file") {
    void showInformation(
      `${DISPLAY_NAME}: open a Python file and put the cursor in the function to profile.`,
    );
    return undefined;
  }
  return editor;
}

/** The function at the cursor; with `backward`, each call is followed by the backward of its
 * output (*Profile with Backward*: a layer's lines then show their forward and backward cost);
 * with `memory`, each line shows what it allocated and the summary the peak (*Profile Memory*). */
async function profileAtCursor(
  ctx: Ctx,
  options: { backward?: boolean; memory?: boolean } = {},
): Promise<void> {
  const editor = pythonEditor();
  if (editor !== undefined) {
    const position = editor.selection.active;
    await execute(ctx, editor.document.uri, (uri) => ({
      command: ServerCommands.profile,
      args: {
        ...cursorParams(uri, position),
        ...(options.backward === true ? { backward: true } : {}),
        ...(options.memory === true ? { memory: true } : {}),
      },
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

/** The whole file, run once as `__main__` with each module-level line profiled. */
async function profileScript(ctx: Ctx): Promise<void> {
  const editor = pythonEditor();
  if (editor !== undefined) {
    await execute(ctx, editor.document.uri, (uri) => ({
      command: ServerCommands.profile,
      args: { uri, script: true },
    }));
  }
}

/**
 * A window of a long run: N steps unprofiled, the next M profiled, then the script is stopped
 * (steps: `optimizer.step()`, the profiler's `step()`, a `# kernel-lens: step` line); or a
 * wall-clock window: nothing profiled before `30s` into the run (then M steps, or to the end or
 * the time limit, whatever comes first). Parsed by {@link parseWindow}.
 */
async function profileScriptWindow(ctx: Ctx, args?: unknown): Promise<void> {
  const target = scriptTarget(ctx, args, Commands.profileScriptWindow);
  if (target === undefined) {
    return;
  }
  const line = await vscode.window.showInputBox({
    title: `${DISPLAY_NAME}: a window of the script's run`,
    prompt:
      "Steps to skip, then steps to profile (2 3), or a time into the run (30s, after 2m; " +
      "30s 3: three steps from 30 s in). A step ends at optimizer.step(), the profiler's " +
      "step() or a `# kernel-lens: step` line; the script is stopped after the window",
    value: "2 3",
    validateInput: (text) => {
      const parsed = parseWindow(text);
      return "error" in parsed ? parsed.error : undefined;
    },
  });
  const parsed = line === undefined ? undefined : parseWindow(line);
  if (parsed === undefined || "error" in parsed) {
    return;
  }
  await execute(
    ctx,
    target.document,
    (uri) => ({
      command: ServerCommands.profile,
      args: {
        uri,
        script: true,
        skip: parsed.skip,
        ...(parsed.steps !== undefined ? { steps: parsed.steps } : {}),
        ...(parsed.afterS !== undefined ? { after_s: parsed.afterS } : {}),
      },
    }),
    target.lensUri,
  );
}

/**
 * The script a script command is about: the one a lens, a hover link or More… named (its URI
 * as the server gave it, checked like every URI that comes with a command), else the active
 * editor's Python file.
 */
function scriptTarget(
  ctx: Ctx,
  args: unknown,
  command: string,
): { document: vscode.Uri; lensUri?: string } | undefined {
  if (args === undefined) {
    const editor = pythonEditor();
    return editor === undefined ? undefined : { document: editor.document.uri };
  }
  if (!isProfileScriptArgs(args)) {
    ctx.log.warn(`${command}: malformed argument ${JSON.stringify(args)}`);
    return undefined;
  }
  const refusal = targetRefusal(args.uri, true);
  if (refusal !== undefined) {
    ctx.log.warn(`${command}: ${refusal}`);
    return undefined;
  }
  return { document: vscode.Uri.parse(args.uri), lensUri: args.uri };
}

/**
 * *Profile Script (Light)*: the whole file run once under Triton's Proton, every line's kernel
 * time (the server shows it on the lines). Where it cannot run (no CUDA GPU) the user is told
 * so and offered *Profile Script*, the deep profile, instead ({@link lightOutcome}).
 */
async function profileScriptLight(ctx: Ctx, args?: unknown): Promise<void> {
  const target = scriptTarget(ctx, args, Commands.profileScriptLight);
  if (target === undefined) {
    return;
  }
  const result = await execute(
    ctx,
    target.document,
    (uri) => ({ command: ServerCommands.profileLight, args: { uri } }),
    target.lensUri,
  );
  const name = target.document.path.split("/").pop() ?? "the script";
  const outcome = lightOutcome(result, name);
  if (outcome === undefined) {
    return;
  }
  ctx.log.info(outcome.message);
  // Said here, with what to do: the status item need not stay red until the next success.
  ctx.status.failureShown();
  const buttons = outcome.offerDeep ? [PROFILE_SCRIPT_INSTEAD] : [];
  const show = outcome.severity === "info" ? showInformation : showWarning;
  const picked = await show(`${DISPLAY_NAME}: ${outcome.message}`, ...buttons);
  if (picked === PROFILE_SCRIPT_INSTEAD) {
    await execute(
      ctx,
      target.document,
      (uri) => ({ command: ServerCommands.profile, args: { uri, script: true } }),
      target.lensUri,
    );
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

/** Check Memory (compute-sanitizer) of the function at the cursor; the server says why not. */
async function checkMemoryAtCursor(ctx: Ctx): Promise<void> {
  const editor = pythonEditor();
  if (editor !== undefined) {
    const position = editor.selection.active;
    await execute(ctx, editor.document.uri, (uri) => ({
      command: ReportServerCommands.checkMemory,
      args: cursorParams(uri, position),
    }));
  }
}

/** A server command with its argument. */
type Invocation =
  | { command: typeof ServerCommands.profile; args: ProfileArgs }
  | { command: typeof ServerCommands.profileAll; args: ProfileAllArgs }
  | { command: typeof ServerCommands.profileLight; args: ProfileLightArgs }
  | { command: typeof ReportServerCommands.runNcu; args: RunNcuArgs }
  | { command: typeof ReportServerCommands.checkMemory; args: CheckMemoryArgs };

/**
 * Sends `workspace/executeCommand` for `document` (its URI converted as the client converts
 * it in every other message); the server shows progress (cancellable) and results itself.
 */
async function execute(
  ctx: Ctx,
  document: vscode.Uri,
  invocation: (uri: string) => Invocation,
  lensUri?: string,
): Promise<unknown> {
  const client = await runningClient(ctx);
  if (client === undefined) {
    return undefined;
  }
  const { command, args } = invocation(protocolUri(client, document, lensUri));
  try {
    return (await client.sendRequest(ExecuteCommandRequest.type, {
      command,
      arguments: [args],
    })) as unknown;
  } catch (error) {
    // A cancelled request (the user cancelled the progress notification) is not an error; a
    // cursor in no function is the server's message to the user, shown as is.
    reportFailure(ctx, command, error);
    return undefined;
  }
}
