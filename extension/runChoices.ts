/**
 * A script's arguments and a function's driver, chosen once and kept per workspace by the
 * server (`server/kernel_lens/run_choices.py`): the `args:` lens, *Arguments…* after a script
 * exited on its arguments or failed on a device it was not given, the driver lens
 * (`→ inputs from bench.py --device=cpu`), a failed profile's quick fixes and dialog, and the
 * palette (*Script Arguments…*, *Take the Inputs from…*) all end here.
 */
import * as vscode from "vscode";
import { ExecuteCommandRequest, type LanguageClient } from "vscode-languageclient/node";
import { DISPLAY_NAME, LANGUAGE } from "./constants";
import type { Ctx } from "./ctx";
import { cursorParams } from "./cursor";
import {
  CMD_DRIVER_CHOICES,
  CMD_PROFILE,
  CMD_SCRIPT_ARGUMENTS_OF,
  CMD_SET_DRIVER,
  CMD_SET_SCRIPT_ARGUMENTS,
  type DriverCandidate,
  type DriverChoices,
  type DriverQuery,
  type ProfileArgs,
  type ScriptArgumentsInfo,
  type SetDriverArgs,
} from "./generated/wire";
import { showInformation, showWarning } from "./notify";
import { reportFailure, runningClient } from "./requests";
import { joinArgs, splitArgs } from "./scriptArgs";

interface ScriptArgumentsCall {
  uri: string;
  argv: string[];
  suggested?: string[] | null;
  then?: DriverQuery | null;
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((a) => typeof a === "string");
}

function asScriptArgumentsCall(value: unknown): ScriptArgumentsCall | undefined {
  if (typeof value !== "object" || value === null) {
    return undefined;
  }
  const v = value as Record<string, unknown>;
  if (typeof v["uri"] !== "string" || !isStringList(v["argv"])) {
    return undefined;
  }
  const suggested = isStringList(v["suggested"]) ? v["suggested"] : null;
  const then = asDriverQuery(v["then"]);
  return { uri: v["uri"], argv: v["argv"], suggested, then: then ?? null };
}

function asDriverQuery(value: unknown): DriverQuery | undefined {
  if (typeof value !== "object" || value === null) {
    return undefined;
  }
  const v = value as Record<string, unknown>;
  if (typeof v["uri"] !== "string" || typeof v["function"] !== "string") {
    return undefined;
  }
  return { uri: v["uri"], function: v["function"] };
}

async function serverCommand<R>(
  ctx: Ctx,
  client: LanguageClient,
  command: string,
  arg: object,
): Promise<R | undefined> {
  try {
    return (await client.sendRequest(ExecuteCommandRequest.type, {
      command,
      arguments: [arg],
    })) as R;
  } catch (error) {
    reportFailure(ctx, command, error);
    return undefined;
  }
}

function activePython(): vscode.TextEditor | undefined {
  const editor = vscode.window.activeTextEditor;
  if (editor?.document.languageId !== LANGUAGE || editor.document.uri.scheme !== "file") {
    void showInformation(`${DISPLAY_NAME}: open a Python file first.`);
    return undefined;
  }
  return editor;
}

/**
 * *Arguments…*: asks for a script's `sys.argv[1:]` in one line (the CPU ones filled in after a
 * device failure, else the current ones), keeps them for every run of the script, then runs
 * what failed: the function whose driver the script is (`then`), else the script. From the
 * palette (no argument), the active editor's script.
 */
export async function scriptArguments(ctx: Ctx, args: unknown): Promise<void> {
  const client = await runningClient(ctx);
  if (client === undefined) {
    return;
  }
  let call = args === undefined ? undefined : asScriptArgumentsCall(args);
  if (args !== undefined && call === undefined) {
    ctx.log.warn(`kernelLens.scriptArguments: malformed argument ${JSON.stringify(args)}`);
    return;
  }
  const uri = call?.uri ?? activePython()?.document.uri.toString();
  if (uri === undefined) {
    return;
  }
  const info = await serverCommand<ScriptArgumentsInfo>(ctx, client, CMD_SCRIPT_ARGUMENTS_OF, {
    uri,
  });
  call ??= { uri, argv: info?.argv ?? [], suggested: null, then: null };
  const name = uri.slice(uri.lastIndexOf("/") + 1);
  const form = info?.form ?? "--option value";
  const reader = info?.reader ? ` (read by ${info.reader})` : "";
  const from = info?.source && info.source !== "set" ? `; now those of the ${info.source}` : "";
  const line = await vscode.window.showInputBox({
    title: `${DISPLAY_NAME}: arguments of ${name}`,
    prompt:
      `sys.argv[1:] of every run of ${name}${reader}, as after \`python ${name}\` ` +
      `(${form})${from}. Empty: no arguments.`,
    value: joinArgs(call.suggested ?? call.argv),
    validateInput: (text) => {
      const split = splitArgs(text);
      return "error" in split ? split.error : undefined;
    },
  });
  if (line === undefined) {
    return;
  }
  const split = splitArgs(line);
  if ("error" in split) {
    return;
  }
  const kept = await serverCommand<{ ok: boolean; message?: string }>(
    ctx,
    client,
    CMD_SET_SCRIPT_ARGUMENTS,
    { uri, argv: split.argv },
  );
  if (kept?.ok === false && kept.message) {
    void showWarning(kept.message);
  }
  const then = call.then;
  const profileArgs: ProfileArgs =
    then !== null && then !== undefined && then.function
      ? { uri: then.uri, function: then.function }
      : { uri, script: true, argv: split.argv };
  await serverCommand(ctx, client, CMD_PROFILE, profileArgs);
}

interface DriverItem extends vscode.QuickPickItem {
  candidate: DriverCandidate;
}

/**
 * *Take the Inputs from…* / *Change the Driver…*: the drivers a function can take its inputs
 * from (launch configurations, workspace scripts that import its module — each with its
 * arguments — and its own inputs), the chosen one first; the pick is kept per workspace and the
 * function is profiled from it. From the palette, the function at the cursor.
 */
export async function chooseDriver(ctx: Ctx, args: unknown): Promise<void> {
  const client = await runningClient(ctx);
  if (client === undefined) {
    return;
  }
  let query = args === undefined ? undefined : asDriverQuery(args);
  if (query === undefined) {
    const editor = activePython();
    if (editor === undefined) {
      return;
    }
    query = cursorParams(editor.document.uri.toString(), editor.selection.active);
  }
  const choices = await serverCommand<DriverChoices>(ctx, client, CMD_DRIVER_CHOICES, query);
  if (choices === undefined) {
    return;
  }
  if (!choices.ok) {
    void showWarning(`${DISPLAY_NAME}: ${choices.message ?? "no function there"}`);
    return;
  }
  const items: DriverItem[] = choices.candidates.map((candidate, i) => ({
    label: candidate.label,
    detail: candidate.detail,
    ...(i === 0 && choices.current !== null ? { description: "chosen" } : {}),
    candidate,
  }));
  const picked = await vscode.window.showQuickPick(items, {
    title: `${DISPLAY_NAME}: inputs of ${choices.function}`,
    placeHolder: choices.current
      ? `now: inputs from ${choices.current}`
      : "where its inputs come from (a script that calls it, a launch configuration)",
    matchOnDetail: true,
  });
  if (picked === undefined) {
    return;
  }
  const set: SetDriverArgs = {
    uri: query.uri,
    function: choices.function,
    kind: picked.candidate.kind,
    driver: picked.candidate.driver,
    config: picked.candidate.config,
  };
  const done = await serverCommand<{ ok: boolean; message?: string }>(
    ctx,
    client,
    CMD_SET_DRIVER,
    set,
  );
  if (done?.ok !== true) {
    void showWarning(`${DISPLAY_NAME}: ${done?.message ?? "the driver was not changed"}`);
    return;
  }
  const profileArgs: ProfileArgs = { uri: query.uri, function: choices.function };
  await serverCommand(ctx, client, CMD_PROFILE, profileArgs);
}
