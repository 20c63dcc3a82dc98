/**
 * Inside a `@triton.jit` kernel, under Triton's interpreter:
 *
 * - **Show Values** (`kernelLens.showValues`): asks the server (`kernelLens/values`) to run the
 *   kernel's launch under the interpreter, then puts after each line of the body what it bound
 *   for the chosen program (`offs: int32[1024] 0 1 2 … 1023`), with the whole block in the
 *   line's hover; the kernel's lens (then `Values: program (3, 0, 0) of 4 × 1 × 1`) opens the
 *   program-id picker (first, last, any; a loop's first, last or any pass). The out-of-bounds
 *   loads and stores are the server's diagnostics. An edit of the document clears the values.
 * - **Debug Kernel** (`kernelLens.debugKernel`): a debug session of the same launch under the
 *   interpreter, stopped on the kernel's first line for the program Show Values shows (else the
 *   first). The extension contributes the `kernelLens` debug type; its adapter is debugpy's own
 *   (`python -m debugpy.adapter` in the user's interpreter): no debugger of ours.
 */
import { execFile } from "node:child_process";
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import { Commands, DISPLAY_NAME, LANGUAGE } from "../constants";
import type { Ctx } from "../ctx";
import type { ValuesResult } from "../generated/wire";
import { showError, showInformation, showWarning } from "../notify";
import { ValuesRequest, isDebugKernelArgs, isShowValuesArgs } from "../protocol";
import { bundledLibs } from "../python";
import { protocolUri, reportFailure, runningClient, sendWithProgress } from "../requests";
import {
  DEBUG_TYPE,
  afterText,
  debugpyConfig,
  debugpyMissing,
  headerText,
  installCommand,
  pickChoices,
  pidText,
  programProblem,
  type KernelDebugConfig,
} from "./model";
import { lineDecoration } from "../lineDecoration";

/** What Show Values shows for one kernel of one document. */
interface Shown {
  result: ValuesResult;
  program: string;
  iteration: string;
}

/** The values shown per document (URI) and kernel. */
const shown = new Map<string, Map<string, Shown>>();

export function registerInterp(ctx: Ctx): void {
  const after = vscode.window.createTextEditorDecorationType({
    after: {
      color: new vscode.ThemeColor("editorCodeLens.foreground"),
      fontStyle: "italic",
      margin: "0 0 0 2em",
    },
    rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
  });
  const render = (editor: vscode.TextEditor): void => {
    const kernels = shown.get(editor.document.uri.toString());
    const options: vscode.DecorationOptions[] = [];
    for (const { result } of kernels?.values() ?? []) {
      options.push(lineDecoration(editor.document, result.def_line, `⟵ ${headerText(result)}`));
      for (const line of result.lines) {
        if (line.line === result.def_line) {
          continue;
        }
        const hover = new vscode.MarkdownString(line.hover ?? "");
        hover.isTrusted = false;
        hover.supportHtml = false;
        options.push(lineDecoration(editor.document, line.line, afterText(line), hover));
      }
      const params = result.lines.find((l) => l.line === result.def_line);
      if (params !== undefined) {
        const hover = new vscode.MarkdownString(params.hover ?? "");
        hover.isTrusted = false;
        options.push({
          ...lineDecoration(editor.document, result.def_line, ""),
          hoverMessage: hover,
        });
      }
    }
    editor.setDecorations(after, options);
  };
  const renderAll = (): void => vscode.window.visibleTextEditors.forEach(render);
  ctx.pushExtCleanup(
    after,
    vscode.commands.registerCommand(Commands.showValues, (arg: unknown) =>
      showValues(ctx, arg, renderAll),
    ),
    vscode.commands.registerCommand(Commands.debugKernel, (arg: unknown) => debugKernel(arg)),
    vscode.window.onDidChangeVisibleTextEditors(renderAll),
    vscode.workspace.onDidChangeTextDocument((event) => {
      // The values belong to the text that ran: an edit moves lines, so they go.
      if (event.contentChanges.length > 0 && shown.delete(event.document.uri.toString())) {
        renderAll();
      }
    }),
    vscode.workspace.onDidCloseTextDocument((document) => {
      shown.delete(document.uri.toString());
    }),
    vscode.debug.registerDebugAdapterDescriptorFactory(DEBUG_TYPE, {
      createDebugAdapterDescriptor: (session) => {
        const configured: unknown = session.configuration["python"];
        const python = Array.isArray(configured)
          ? String(configured[0])
          : typeof configured === "string"
            ? configured
            : (ctx.python ?? "python3");
        return new vscode.DebugAdapterExecutable(python, ["-m", "debugpy.adapter"], {
          cwd: os.tmpdir(),
        });
      },
    }),
    vscode.debug.registerDebugConfigurationProvider(DEBUG_TYPE, {
      resolveDebugConfigurationWithSubstitutedVariables: (_folder, config) =>
        resolveDebugConfig(ctx, config),
    }),
  );
}

/** Show Values from a lens (`{uri, kernel, program?, pick?}`) or at the cursor. */
async function showValues(ctx: Ctx, arg: unknown, renderAll: () => void): Promise<void> {
  let source: vscode.Uri;
  let kernel: string | undefined;
  let lensUri: string | undefined;
  let program: string | undefined;
  let pick = false;
  let position: vscode.Position | undefined;
  if (isShowValuesArgs(arg)) {
    source = vscode.Uri.parse(arg.uri);
    kernel = arg.kernel;
    lensUri = arg.uri;
    program = arg.program;
    pick = arg.pick === true;
  } else {
    const editor = vscode.window.activeTextEditor;
    if (editor === undefined || editor.document.languageId !== LANGUAGE) {
      void showInformation(`${DISPLAY_NAME}: open a Python file and put the cursor in a kernel.`);
      return;
    }
    source = editor.document.uri;
    position = editor.selection.active;
  }
  const before = kernel === undefined ? undefined : shown.get(source.toString())?.get(kernel);
  let iteration = before?.iteration ?? "first";
  program = program ?? before?.program ?? "first";
  if (pick) {
    const picked = await pickProgram(before?.result, program, iteration);
    if (picked === undefined) {
      return;
    }
    ({ program, iteration } = picked);
  }
  const client = await runningClient(ctx);
  if (client === undefined) {
    return;
  }
  const label = kernel ?? "the kernel at the cursor";
  try {
    const result = await sendWithProgress(
      ctx,
      client,
      ValuesRequest,
      {
        uri: protocolUri(client, source, lensUri),
        ...(kernel === undefined ? {} : { kernel }),
        ...(position === undefined
          ? {}
          : { position: { line: position.line, character: position.character } }),
        program,
        iteration,
      },
      `${DISPLAY_NAME}: running ${label} under Triton's interpreter (program ${program})…`,
    );
    const kernels = shown.get(source.toString()) ?? new Map<string, Shown>();
    kernels.set(result.kernel, { result, program, iteration });
    shown.set(source.toString(), kernels);
    renderAll();
    ctx.log.info(
      `${ValuesRequest.method} ${result.kernel}: program ${pidText(result.pid)} of ` +
        `${result.grid.join("×")}, ${result.lines.length} lines, ${result.oob.length} out of ` +
        `bounds (${result.label})`,
    );
    if (!result.in_grid) {
      void showWarning(
        `${DISPLAY_NAME}: program ${pidText(result.pid)} is outside the grid ` +
          `${result.grid.join(" × ")} of ${result.kernel}: no line ran for it.`,
      );
    } else if (result.error !== null) {
      void showWarning(`${DISPLAY_NAME}: ${result.kernel}: ${result.error.message}`);
    }
  } catch (error) {
    reportFailure(ctx, ValuesRequest.method, error);
  }
}

/** The program-id picker: first, last, any; a loop's first, last or any pass. */
async function pickProgram(
  last: ValuesResult | undefined,
  program: string,
  iteration: string,
): Promise<{ program: string; iteration: string } | undefined> {
  const choices = pickChoices(last);
  const picked = await vscode.window.showQuickPick(
    choices.map((c) => ({
      label: c.label,
      action: c.action,
      ...(c.description === undefined ? {} : { description: c.description }),
    })),
    {
      title: `${DISPLAY_NAME}: Show Values of ${last?.kernel ?? "the kernel"} for which program?`,
      placeHolder: "Triton interpreter: the kernel's values and semantics, not GPU time",
    },
  );
  if (picked === undefined) {
    return undefined;
  }
  if (picked.action === "first" || picked.action === "last") {
    return { program: picked.action, iteration };
  }
  if (picked.action === "iteration:first" || picked.action === "iteration:last") {
    return { program, iteration: picked.action.slice("iteration:".length) };
  }
  if (picked.action === "iteration:other") {
    const typed = await vscode.window.showInputBox({
      title: `${DISPLAY_NAME}: which pass of each loop (1 is the first)?`,
      validateInput: (text) => (/^[1-9]\d*$/.test(text.trim()) ? undefined : "a number from 1"),
    });
    return typed === undefined ? undefined : { program, iteration: typed.trim() };
  }
  const typed = await vscode.window.showInputBox({
    title: `${DISPLAY_NAME}: program id x, y, z`,
    placeHolder: last === undefined ? "0, 0, 0" : `in ${last.grid.join(" × ")}`,
    validateInput: (text) => programProblem(text, last?.grid),
  });
  return typed === undefined ? undefined : { program: typed.replace(/\s/g, ""), iteration };
}

/** Debug Kernel from a lens (`{uri, kernel, program?}`). */
async function debugKernel(arg: unknown): Promise<void> {
  if (!isDebugKernelArgs(arg)) {
    void showInformation(`${DISPLAY_NAME}: use Debug Kernel from the lens above a kernel.`);
    return;
  }
  if (!vscode.workspace.isTrusted) {
    void showWarning(`${DISPLAY_NAME}: Debug Kernel runs the file's code: trust the workspace.`);
    return;
  }
  const source = vscode.Uri.parse(arg.uri);
  const document = vscode.workspace.textDocuments.find(
    (d) => d.uri.toString() === source.toString(),
  );
  // The debugger runs the file as saved, and shows its lines.
  if (document?.isDirty === true && !(await document.save())) {
    void showWarning(`${DISPLAY_NAME}: save ${path.basename(source.fsPath)} to debug it.`);
    return;
  }
  const program = arg.program ?? shown.get(source.toString())?.get(arg.kernel)?.program ?? "first";
  const config: KernelDebugConfig = {
    type: DEBUG_TYPE,
    request: "launch",
    name: `Debug ${arg.kernel} (program ${program}, Triton interpreter)`,
    kernelFile: source.fsPath,
    kernel: arg.kernel,
    pid: program,
    cwd: path.dirname(source.fsPath),
  };
  await vscode.debug.startDebugging(vscode.workspace.getWorkspaceFolder(source), config);
}

function hasDebugpy(python: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(python, ["-c", "import debugpy"], { cwd: os.tmpdir(), timeout: 30_000 }, (error) =>
      resolve(error === null),
    );
  });
}

/** A `kernelLens` launch configuration → debugpy's, or undefined after saying why not. */
async function resolveDebugConfig(
  ctx: Ctx,
  config: vscode.DebugConfiguration,
): Promise<vscode.DebugConfiguration | undefined> {
  const kernelFile: unknown = config["kernelFile"] ?? config["program"];
  const kernel: unknown = config["kernel"];
  if (typeof kernelFile !== "string" || typeof kernel !== "string") {
    void showError(
      `${DISPLAY_NAME}: a "${DEBUG_TYPE}" launch needs "kernelFile" (or "program") and "kernel".`,
    );
    return undefined;
  }
  const python = typeof config["python"] === "string" ? config["python"] : ctx.python;
  if (python === undefined) {
    void showError(`${DISPLAY_NAME}: the server is not running; its interpreter runs the kernel.`);
    return undefined;
  }
  if (!(await hasDebugpy(python))) {
    const copy = "Copy Install Command";
    const answer = await showError(debugpyMissing(python), copy);
    if (answer === copy) {
      await vscode.env.clipboard.writeText(installCommand(python));
    }
    return undefined;
  }
  const rest: Record<string, unknown> = { ...config };
  delete rest["program"]; // debugpy runs `module`; a `program` too would be refused
  const resolved = debugpyConfig(
    {
      ...rest,
      type: DEBUG_TYPE,
      request: "launch",
      name: String(config.name),
      kernelFile,
      kernel,
      ...(typeof config["pid"] === "string" ? { pid: config["pid"] } : {}),
    },
    python,
    bundledLibs(ctx.extensionPath),
    path.delimiter,
    process.env["PYTHONPATH"],
    (...parts: string[]) => path.join(...parts),
  );
  ctx.log.info(
    `Debug Kernel: ${kernel} of ${kernelFile} (program ${String(config["pid"] ?? "first")})`,
  );
  return resolved as vscode.DebugConfiguration;
}
