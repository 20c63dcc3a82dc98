/**
 * "Show Generated Code" and "Show Assembly": ask the server (`kernelLens/generatedCode`,
 * `kernelLens/assembly`) for a function's torch.compile output or a `@triton.jit` kernel's
 * compiled stage, and open it beside the source, its lines linked with the source's.
 *
 * Both run from the server's code lenses (with `{ uri, function }` / `{ uri, kernel }`), from
 * the command palette and the editor's context menu (`{ uri, position }`: the server finds the
 * function or kernel at the cursor), and from the title bar of a view (the same function or
 * kernel again: refresh, or another stage).
 */
import * as vscode from "vscode";
import { Commands, DISPLAY_NAME, LANGUAGE, LAST_STAGE_KEY } from "../constants";
import type { Ctx } from "../ctx";
import {
  assemblyParams,
  cursorPosition,
  functionParams,
  pointerLabel,
  type Pointer,
} from "../cursor";
import {
  ASM_POINTER_TYPES,
  ASM_SCALAR_TYPES,
  ASM_STAGES,
  type AsmStage,
  type AssemblyResult,
} from "../generated/wire";
import {
  AssemblyRequest,
  GeneratedCodeRequest,
  isShowAssemblyArgs,
  isShowGeneratedCodeArgs,
} from "../protocol";
import {
  SHOW_DETAILS,
  isCancellation,
  protocolUri,
  reportFailure,
  runningClient,
  sendWithProgress,
  versionOf,
} from "../requests";
import type { Views } from "./documents";
import { assemblyLink, generatedCodeLink } from "./lineMap";
import {
  DEFAULT_STAGE,
  STAGE_DESCRIPTIONS,
  STAGE_LABELS,
  assemblyInfo,
  generatedCodeInfo,
} from "./virtualDocs";
import { showError, showInformation } from "../notify";
import { summarize } from "../errorText";
import { ResponseError } from "vscode-languageclient/node";
import { failedTypes, type FailedTypes } from "./asmFailure";

/** Registers the two commands, extension-scoped, over the views of `documents.ts`. */
export function registerCompiledCommands(ctx: Ctx, views: Views): void {
  ctx.pushExtCleanup(
    vscode.commands.registerCommand(Commands.showGeneratedCode, (arg: unknown) =>
      showGeneratedCode(ctx, views, arg),
    ),
    vscode.commands.registerCommand(Commands.showAssembly, (arg: unknown) =>
      showAssembly(ctx, views, arg),
    ),
    vscode.commands.registerCommand(Commands.assemblyArgumentTypes, (arg: unknown) =>
      pickArgumentTypes(ctx, views, arg),
    ),
  );
}

/** The user's argument types per kernel (`source#kernel`), sent with every compile of it. */
const pickedTypes = new Map<string, Record<string, string>>();
/** The last compile of each kernel (`source#kernel`): its signature, for the picker. */
const lastCompile = new Map<string, AssemblyResult>();
/** The last failed compile of each kernel (`source#kernel`): the types it tried, and stage. */
const lastFailure = new Map<string, { types: FailedTypes; stage: AsmStage; lensUri?: string }>();

/** Puts `value` last in `map` (the most recent of a document's kernels is found last). */
function setLatest<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
}

function kernelKey(source: vscode.Uri, kernel: string): string {
  return `${source.toString()}#${kernel}`;
}

/** A source document and the function or kernel in it: by name, or at the cursor. */
interface Target {
  source: vscode.Uri;
  at: Pointer;
  /** The document's URI as a code lens gave it (sent back unchanged). */
  lensUri?: string;
  /** The stage of the view the command was run from. */
  stage?: AsmStage;
}

/**
 * The target of a command: the lens's argument; else the view in the active editor, if it is
 * one of `kind`; else the cursor of the active Python file (the server finds the function or
 * kernel there). Undefined after telling the user what to do.
 */
function targetOf(
  views: Views,
  arg: unknown,
  kind: "generatedCode" | "assembly",
): Target | undefined {
  if (kind === "assembly" && isShowAssemblyArgs(arg)) {
    return { source: vscode.Uri.parse(arg.uri), at: { name: arg.kernel }, lensUri: arg.uri };
  }
  if (kind === "generatedCode" && isShowGeneratedCodeArgs(arg)) {
    return { source: vscode.Uri.parse(arg.uri), at: { name: arg.function }, lensUri: arg.uri };
  }
  const editor = vscode.window.activeTextEditor;
  const view = editor === undefined ? undefined : views.viewOf(editor.document.uri);
  if (view?.kind === "assembly" && kind === "assembly") {
    return { source: vscode.Uri.parse(view.source), at: { name: view.kernel }, stage: view.stage };
  }
  if (view?.kind === "generatedCode" && kind === "generatedCode") {
    return { source: vscode.Uri.parse(view.source), at: { name: view.function } };
  }
  const document = editor?.document;
  if (editor === undefined || document?.languageId !== LANGUAGE || document.uri.scheme !== "file") {
    const what = kind === "assembly" ? "a @triton.jit kernel" : "a function";
    void showInformation(`${DISPLAY_NAME}: open a Python file and put the cursor in ${what}.`);
    return undefined;
  }
  return { source: document.uri, at: { position: cursorPosition(editor.selection.active) } };
}

async function showGeneratedCode(ctx: Ctx, views: Views, arg: unknown): Promise<void> {
  const target = targetOf(views, arg, "generatedCode");
  const client = target === undefined ? undefined : await runningClient(ctx);
  if (target === undefined || client === undefined) {
    return;
  }
  const method = GeneratedCodeRequest.method;
  const sourceVersion = versionOf(target.source);
  try {
    const result = await sendWithProgress(
      ctx,
      client,
      GeneratedCodeRequest,
      functionParams(protocolUri(client, target.source, target.lensUri), target.at),
      `${DISPLAY_NAME}: torch.compile ${pointerLabel(target.at, "function")}…`,
    );
    // The function's name as the server resolved it (from the cursor) names the view.
    const name = result.function;
    ctx.log.info(`${method} ${name}: ${result.summary}`);
    await views.show(
      target.source,
      { kind: "generatedCode", source: target.source.toString(), function: name },
      {
        text: result.code,
        link: generatedCodeLink(result.code, result.kernels),
        info: generatedCodeInfo(result),
        sourceVersion,
      },
    );
  } catch (error) {
    reportFailure(ctx, method, error);
  }
}

async function showAssembly(ctx: Ctx, views: Views, arg: unknown): Promise<void> {
  const target = targetOf(views, arg, "assembly");
  if (target === undefined) {
    return;
  }
  const label = pointerLabel(target.at, "kernel");
  const stage = await pickStage(ctx, label, target.stage);
  if (stage !== undefined) {
    await compileAndShow(ctx, views, target, stage);
  }
}

/** Compiles the target's kernel (with the user's argument types, if any) and shows `stage`. */
async function compileAndShow(
  ctx: Ctx,
  views: Views,
  target: Target,
  stage: AsmStage,
): Promise<void> {
  const client = await runningClient(ctx);
  if (client === undefined) {
    return;
  }
  const label = pointerLabel(target.at, "kernel");
  const method = AssemblyRequest.method;
  const sourceVersion = versionOf(target.source);
  const overrides =
    "name" in target.at ? pickedTypes.get(kernelKey(target.source, target.at.name)) : undefined;
  try {
    const result = await sendWithProgress(
      ctx,
      client,
      AssemblyRequest,
      {
        ...assemblyParams(protocolUri(client, target.source, target.lensUri), target.at, stage),
        ...(overrides === undefined ? {} : { overrides }),
      },
      `${DISPLAY_NAME}: compiling ${label} to ${STAGE_LABELS[stage]}…`,
    );
    // The kernel's name as the server resolved it (from the cursor) names the view.
    const name = result.kernel;
    setLatest(lastCompile, kernelKey(target.source, name), result);
    lastFailure.delete(kernelKey(target.source, name));
    ctx.log.info(
      `${method} ${name} ${stage} ${result.arch}: ${result.registers ?? "?"} registers, ` +
        `${result.spills} B spilled, ${result.line_map.length} source lines mapped`,
    );
    result.warnings.forEach((w) => ctx.log.warn(`${method} ${name}: ${w}`));
    await views.show(
      target.source,
      { kind: "assembly", source: target.source.toString(), kernel: name, stage },
      {
        text: result.asm,
        link: assemblyLink(result.line_map),
        info: assemblyInfo(result, stage),
        sourceVersion,
      },
    );
  } catch (error) {
    const failed =
      error instanceof ResponseError && !isCancellation(error)
        ? failedTypes(error.message)
        : undefined;
    if (failed === undefined) {
      reportFailure(ctx, method, error);
      return;
    }
    // The guessed types did not compile (or a constexpr is unknown): Argument Types… is
    // offered right here, prefilled with what was tried.
    const failedTarget: Target = {
      source: target.source,
      at: { name: failed.kernel },
      ...(target.lensUri === undefined ? {} : { lensUri: target.lensUri }),
    };
    setLatest(lastFailure, kernelKey(target.source, failed.kernel), {
      types: failed,
      stage,
      ...(target.lensUri === undefined ? {} : { lensUri: target.lensUri }),
    });
    const message = (error as Error).message;
    ctx.log.error(`${method} failed:`);
    ctx.log.error(message);
    ctx.status.failureShown();
    void showError(
      `${DISPLAY_NAME}: ${summarize(message).text}`,
      ARGUMENT_TYPES,
      SHOW_DETAILS,
    ).then((choice) => {
      if (choice === ARGUMENT_TYPES) {
        void pickArgumentTypes(ctx, views, failedTarget);
      } else if (choice === SHOW_DETAILS) {
        ctx.log.show(true);
      }
    });
  }
}

/** The failure toast's button (and the command's title). */
const ARGUMENT_TYPES = "Argument Types…";

interface ParamItem extends vscode.QuickPickItem {
  param?: string;
  reset?: true;
}

/** What the picker shows of a kernel: the types of its last compile, or of its failed one. */
interface KnownTypes {
  signature: Record<string, string>;
  /** A constexpr's value as a Python literal (undefined: not known). */
  constexprs: Record<string, string | undefined>;
  note: string;
}

function knownOf(key: string): KnownTypes | undefined {
  const failed = lastFailure.get(key);
  if (failed !== undefined) {
    return {
      signature: failed.types.signature,
      constexprs: failed.types.constexprs,
      note: "the types the failed compile tried: pick one to change, then it compiles again",
    };
  }
  const last = lastCompile.get(key);
  if (last === undefined) {
    return undefined;
  }
  const constexprs: Record<string, string | undefined> = {};
  for (const [param, value] of Object.entries(last.constexprs)) {
    constexprs[param] = JSON.stringify(value);
  }
  return {
    signature: last.signature,
    constexprs,
    note: last.types_note ?? `types of the launch by ${last.launcher ?? "the script"}`,
  };
}

/** The kernel *Argument Types…* is for: the failure toast's, an assembly view's, or the last
 * compiled or failed kernel of the active Python file (the palette). */
function argumentTypesTarget(
  views: Views,
  arg: unknown,
): { target: Target; stage: AsmStage } | undefined {
  if (typeof arg === "object" && arg !== null && "source" in arg && "at" in arg) {
    const target = arg as Target;
    const name = "name" in target.at ? target.at.name : "";
    const stage = lastFailure.get(kernelKey(target.source, name))?.stage;
    return { target, stage: stage ?? target.stage ?? DEFAULT_STAGE };
  }
  const editor = vscode.window.activeTextEditor;
  const view = editor === undefined ? undefined : views.viewOf(editor.document.uri);
  if (view?.kind === "assembly") {
    const source = vscode.Uri.parse(view.source);
    return { target: { source, at: { name: view.kernel } }, stage: view.stage };
  }
  const document = editor?.document;
  if (document?.languageId !== LANGUAGE) {
    return undefined;
  }
  const prefix = `${document.uri.toString()}#`;
  const keys = [...lastFailure.keys(), ...lastCompile.keys()].filter((k) => k.startsWith(prefix));
  const key = keys.find((k) => lastFailure.has(k)) ?? keys[keys.length - 1];
  if (key === undefined) {
    return undefined;
  }
  const name = key.slice(prefix.length);
  const failed = lastFailure.get(key);
  return {
    target: {
      source: document.uri,
      at: { name },
      ...(failed?.lensUri === undefined ? {} : { lensUri: failed.lensUri }),
    },
    stage:
      failed?.stage ?? ASM_STAGES.find((st) => st === lastCompile.get(key)?.stage) ?? DEFAULT_STAGE,
  };
}

/**
 * *Argument Types…* — in an assembly view's title bar, in a failed compile's toast, and in the
 * palette (the active file's last compiled or failed kernel): pick a parameter, then its Triton
 * type (pointers, scalars) or its constexpr value; the kernel is compiled again with the picks
 * (kept for the kernel until reset). The way out when the types were read from the text and
 * guessed (a launcher that needs a GPU) and did not compile, or to see the code for other dtypes.
 */
async function pickArgumentTypes(ctx: Ctx, views: Views, arg?: unknown): Promise<void> {
  const found = argumentTypesTarget(views, arg);
  if (found === undefined) {
    void showInformation(
      `${DISPLAY_NAME}: Show Assembly of a kernel first; its argument types can then be changed ` +
        "(here, in the assembly view's title bar, or from a failed compile's notification).",
    );
    return;
  }
  const { target, stage } = found;
  const kernel = "name" in target.at ? target.at.name : "";
  const key = kernelKey(target.source, kernel);
  const known = knownOf(key);
  if (known === undefined) {
    await compileAndShow(ctx, views, target, stage);
    return;
  }
  const picks = { ...(pickedTypes.get(key) ?? {}) };
  const items: ParamItem[] = Object.entries(known.signature).map(([param, type]) => ({
    param,
    label: param,
    description:
      param in picks
        ? `${picks[param]} (picked)`
        : type === "constexpr"
          ? `constexpr = ${known.constexprs[param] ?? "? (computed at run time)"}`
          : type,
    ...(param in picks ? { detail: "picked" } : {}),
  }));
  if (Object.keys(picks).length > 0) {
    items.push({ label: "$(discard) Back to the launch's types", reset: true });
  }
  const chosen = await vscode.window.showQuickPick(items, {
    title: `${DISPLAY_NAME}: argument types of ${kernel}`,
    placeHolder: known.note,
  });
  if (chosen === undefined) {
    return;
  }
  if (chosen.reset === true) {
    pickedTypes.delete(key);
  } else if (chosen.param !== undefined) {
    const type = known.signature[chosen.param];
    let value: string | undefined;
    if (type === "constexpr") {
      value = await vscode.window.showInputBox({
        title: `${DISPLAY_NAME}: ${chosen.param} (constexpr)`,
        prompt: "A Python literal: 128, True, 'leaky_relu'",
        value: picks[chosen.param] ?? known.constexprs[chosen.param] ?? "",
      });
    } else {
      // An optional pointer may be left out: None (Triton makes it a constexpr None).
      const choices =
        type?.startsWith("*") === true ? [...ASM_POINTER_TYPES, "None"] : ASM_SCALAR_TYPES;
      value = await vscode.window.showQuickPick([...choices], {
        title: `${DISPLAY_NAME}: type of ${chosen.param} (now ${picks[chosen.param] ?? type ?? "?"})`,
      });
    }
    if (value === undefined) {
      return;
    }
    picks[chosen.param] = value;
    pickedTypes.set(key, picks);
  }
  await compileAndShow(ctx, views, target, stage);
}

interface StageItem extends vscode.QuickPickItem {
  stage: AsmStage;
}

/**
 * Asks which stage to show, with the current view's stage, else the last one picked, else PTX
 * preselected; remembers the pick. Undefined when the user dismisses the picker.
 */
async function pickStage(
  ctx: Ctx,
  kernel: string,
  current: AsmStage | undefined,
): Promise<AsmStage | undefined> {
  const last = ctx.globalState.get<string>(LAST_STAGE_KEY);
  const preselected = current ?? ASM_STAGES.find((s) => s === last) ?? DEFAULT_STAGE;
  const picker = vscode.window.createQuickPick<StageItem>();
  picker.title = `${DISPLAY_NAME}: Show Assembly of ${kernel}`;
  picker.placeholder = "Stage to show beside the source";
  picker.items = ASM_STAGES.map((stage) => ({
    stage,
    label: STAGE_LABELS[stage],
    description: STAGE_DESCRIPTIONS[stage],
  }));
  picker.activeItems = picker.items.filter((item) => item.stage === preselected);
  const picked = await new Promise<AsmStage | undefined>((resolve) => {
    picker.onDidAccept(() => {
      resolve(picker.selectedItems[0]?.stage ?? picker.activeItems[0]?.stage);
      picker.hide();
    });
    picker.onDidHide(() => {
      resolve(undefined);
      picker.dispose();
    });
    picker.show();
  });
  if (picked !== undefined) {
    await ctx.globalState.update(LAST_STAGE_KEY, picked);
  }
  return picked;
}
