/**
 * Profile Kernel Lines (`kernelLens.profileKernelLines`, issue 35): asks the server
 * (`kernelLens/kernelLines`) for a kernel's Nsight Compute source counters — the function that
 * launches it run under `ncu --section SourceCounters`, or a recorded report — and puts on each
 * line of the kernel its share of the warp-stall samples and of the instructions with the
 * dominant stall (`38% of samples · long scoreboard (waiting on memory) · 12% of instructions`),
 * a heat bar in the gutter, the line's SASS with its samples in the hover, and the remedy for the
 * hottest line on the kernel's first line. A kernel's assembly (Show Assembly's SASS, or the
 * report's own instructions, **Show Sampled SASS**) marks the sampled instructions by offset.
 * An edit of the document clears the figures (the lines they were on moved).
 */
import * as path from "node:path";
import * as vscode from "vscode";
import { Commands, DISPLAY_NAME, LANGUAGE } from "../constants";
import type { Ctx } from "../ctx";
import type { KernelLinesKernel, KernelLinesResult } from "../generated/wire";
import { showInformation, showWarning } from "../notify";
import { KernelLinesRequest, isProfileKernelLinesArgs } from "../protocol";
import { protocolUri, reportFailure, runningClient, sendWithProgress } from "../requests";
import {
  HEAT_COLOR,
  HEAT_LEVELS,
  headerText,
  heatLevel,
  heatUri,
  hotInstructions,
  instructionText,
  remedyMarkdown,
  sassOffset,
} from "./model";
import { lineDecoration } from "../lineDecoration";

/** The documents of the report's own SASS with samples (Show Sampled SASS). */
export const SAMPLES_SCHEME = "kernel-lens-samples";
/** Background of a sampled instruction in an assembly view (package.json `colors`). */
export const HOT_INSTRUCTION_COLOR = "kernelLens.hotInstructionBackground";

/** The kernels shown per document (URI string), by kernel name. */
const shown = new Map<string, Map<string, KernelLinesKernel>>();

export function registerKernelLines(ctx: Ctx): void {
  const decorations = createDecorations();
  const samples = new SampledSass();
  const renderAll = (): void =>
    vscode.window.visibleTextEditors.forEach((editor) => render(editor, decorations));
  ctx.pushExtCleanup(
    decorations.after,
    decorations.hot,
    ...decorations.heat,
    vscode.workspace.registerTextDocumentContentProvider(SAMPLES_SCHEME, samples),
    vscode.commands.registerCommand(Commands.profileKernelLines, (arg: unknown) =>
      profileKernelLines(ctx, arg, undefined, renderAll),
    ),
    vscode.commands.registerCommand(Commands.kernelLinesFromReport, () =>
      fromReport(ctx, renderAll),
    ),
    vscode.commands.registerCommand(Commands.showSampledSass, () => samples.open()),
    vscode.commands.registerCommand(Commands.clearKernelLines, () => {
      const editor = vscode.window.activeTextEditor;
      if (editor !== undefined && shown.delete(editor.document.uri.toString())) {
        renderAll();
      }
    }),
    vscode.window.onDidChangeVisibleTextEditors(renderAll),
    vscode.workspace.onDidChangeTextDocument((event) => {
      const scheme = event.document.uri.scheme;
      if (scheme === "kernel-lens" || scheme === SAMPLES_SCHEME) {
        renderAll(); // an assembly view's text arrived: mark its sampled instructions
        return;
      }
      // The figures belong to the text that ran: an edit moves lines, so they go.
      if (
        event.document.uri.scheme === "file" &&
        event.contentChanges.length > 0 &&
        shown.delete(event.document.uri.toString())
      ) {
        renderAll();
      }
    }),
    vscode.workspace.onDidCloseTextDocument((document) => {
      shown.delete(document.uri.toString());
    }),
  );
}

/** The decoration types: the text after each line, the gutter's heat bars by level, and the
 * sampled instructions of an assembly view. */
interface Decorations {
  after: vscode.TextEditorDecorationType;
  heat: vscode.TextEditorDecorationType[];
  hot: vscode.TextEditorDecorationType;
}

function createDecorations(): Decorations {
  const after = vscode.window.createTextEditorDecorationType({
    after: {
      color: new vscode.ThemeColor("editorCodeLens.foreground"),
      fontStyle: "italic",
      margin: "0 0 0 2em",
    },
    rangeBehavior: vscode.DecorationRangeBehavior.ClosedClosed,
  });
  const heat = Array.from({ length: HEAT_LEVELS }, (_, i) =>
    vscode.window.createTextEditorDecorationType({
      gutterIconPath: vscode.Uri.parse(heatUri(i + 1)),
      gutterIconSize: "contain",
      ...(i + 1 >= 3
        ? { overviewRulerColor: HEAT_COLOR, overviewRulerLane: vscode.OverviewRulerLane.Left }
        : {}),
    }),
  );
  const hot = vscode.window.createTextEditorDecorationType({
    backgroundColor: new vscode.ThemeColor(HOT_INSTRUCTION_COLOR),
    isWholeLine: true,
    after: {
      color: new vscode.ThemeColor("editorCodeLens.foreground"),
      fontStyle: "italic",
      margin: "0 0 0 2em",
    },
  });
  return { after, heat, hot };
}

/** The figures of the kernels shown on an editor's document (or, on an assembly view, its
 * sampled instructions). */
function render(editor: vscode.TextEditor, { after, heat, hot }: Decorations): void {
  const document = editor.document;
  if (document.uri.scheme === "kernel-lens" || document.uri.scheme === SAMPLES_SCHEME) {
    editor.setDecorations(hot, assemblyMarks(document));
    return;
  }
  const kernels = shown.get(document.uri.toString());
  const texts: vscode.DecorationOptions[] = [];
  const bars: vscode.DecorationOptions[][] = heat.map(() => []);
  for (const kernel of kernels?.values() ?? []) {
    const first = kernel.span?.[0] ?? Math.min(...kernel.lines.map((r) => r.line));
    const header = new vscode.MarkdownString(remedyMarkdown(kernel));
    header.isTrusted = false;
    header.supportHtml = false;
    if (Number.isFinite(first)) {
      texts.push(lineDecoration(document, first, `⟵ ${headerText(kernel)}`, header));
    }
    for (const row of kernel.lines) {
      const hover = new vscode.MarkdownString(row.hover);
      hover.isTrusted = false;
      hover.supportHtml = false;
      const options = lineDecoration(document, row.line, row.text, hover);
      texts.push(options);
      // once the blame (issue 43) ran, the heat follows the cause
      const level = heatLevel(row.blamed_pct ?? row.share_pct);
      if (level > 0) {
        bars[level - 1]?.push({ range: options.range });
      }
    }
  }
  editor.setDecorations(after, texts);
  heat.forEach((type, i) => editor.setDecorations(type, bars[i] ?? []));
}

/** The kernel an assembly document is of: its path's last segment less the stage. */
function assemblyKernel(document: vscode.TextDocument): string | undefined {
  const base = path.posix.basename(document.uri.path);
  return base.endsWith(".sass") ? base.slice(0, -".sass".length) : undefined;
}

/** The marks of a SASS document: each sampled instruction of its kernel, by offset. */
function assemblyMarks(document: vscode.TextDocument): vscode.DecorationOptions[] {
  const kernel = assemblyKernel(document);
  if (kernel === undefined) {
    return [];
  }
  const found = [...shown.values()].map((k) => k.get(kernel)).find((k) => k !== undefined);
  if (found === undefined) {
    return [];
  }
  const hotByOffset = hotInstructions(found);
  const out: vscode.DecorationOptions[] = [];
  for (let i = 0; i < document.lineCount; i++) {
    const offset = sassOffset(document.lineAt(i).text);
    const ins = offset === undefined ? undefined : hotByOffset.get(offset);
    if (ins !== undefined) {
      const hover = new vscode.MarkdownString(
        `${instructionText(ins).slice(2)}${ins.stall === null ? "" : ` · ${ins.stall}`} ` +
          "(Nsight Compute source counters, matched by offset)",
      );
      hover.isTrusted = false;
      out.push({
        range: document.lineAt(i).range,
        renderOptions: { after: { contentText: instructionText(ins) } },
        hoverMessage: hover,
      });
    }
  }
  return out;
}

/** Profile Kernel Lines from a lens (`{uri, kernel, function?, report?}`) or at the cursor. */
async function profileKernelLines(
  ctx: Ctx,
  arg: unknown,
  report: string | undefined,
  renderAll: () => void,
): Promise<KernelLinesResult | undefined> {
  let source: vscode.Uri;
  let kernel: string | undefined;
  let fn: string | undefined;
  let lensUri: string | undefined;
  let position: vscode.Position | undefined;
  if (isProfileKernelLinesArgs(arg)) {
    source = vscode.Uri.parse(arg.uri);
    kernel = arg.kernel;
    fn = arg.function;
    report = report ?? arg.report;
    lensUri = arg.uri;
  } else {
    const editor = vscode.window.activeTextEditor;
    if (editor === undefined || editor.document.languageId !== LANGUAGE) {
      void showInformation(`${DISPLAY_NAME}: open a Python file and put the cursor in a kernel.`);
      return undefined;
    }
    source = editor.document.uri;
    position = editor.selection.active;
  }
  const client = await runningClient(ctx);
  if (client === undefined) {
    return undefined;
  }
  const label = kernel ?? "the kernel at the cursor";
  try {
    const result = await sendWithProgress(
      ctx,
      client,
      KernelLinesRequest,
      {
        uri: protocolUri(client, source, lensUri),
        ...(kernel === undefined ? {} : { kernel }),
        ...(fn === undefined ? {} : { function: fn }),
        ...(report === undefined ? {} : { report }),
        ...(position === undefined
          ? {}
          : { position: { line: position.line, character: position.character } }),
      },
      report === undefined
        ? `${DISPLAY_NAME}: Nsight Compute source counters of ${label}…`
        : `${DISPLAY_NAME}: reading ${path.basename(report)}…`,
    );
    const kernels = shown.get(source.toString()) ?? new Map<string, KernelLinesKernel>();
    for (const k of result.kernels) {
      kernels.set(k.kernel, k);
    }
    shown.set(source.toString(), kernels);
    renderAll();
    for (const k of result.kernels) {
      ctx.log.info(`${KernelLinesRequest.method} ${k.kernel}: ${headerText(k)}`);
      for (const note of k.notes) {
        void showWarning(`${DISPLAY_NAME}: ${k.kernel}: ${note}`);
      }
    }
    return result;
  } catch (error) {
    reportFailure(ctx, KernelLinesRequest.method, error);
    return undefined;
  }
}

/** A recorded `.ncu-rep` of the workspace, picked, on the active editor's kernels. */
async function fromReport(ctx: Ctx, renderAll: () => void): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (editor === undefined || editor.document.languageId !== LANGUAGE) {
    void showInformation(`${DISPLAY_NAME}: open the kernel's Python file first.`);
    return;
  }
  const files = await vscode.workspace.findFiles("**/*.ncu-rep", "**/node_modules/**", 200);
  if (files.length === 0) {
    void showInformation(`${DISPLAY_NAME}: no .ncu-rep file in the workspace.`);
    return;
  }
  const picked = await vscode.window.showQuickPick(
    files.map((uri) => ({ label: vscode.workspace.asRelativePath(uri), uri })),
    { placeHolder: "A report recorded with --section SourceCounters --import-source yes" },
  );
  if (picked === undefined) {
    return;
  }
  // The kernel at the cursor, else every kernel of the report that lands in this file.
  await profileKernelLines(ctx, undefined, picked.uri.fsPath, renderAll);
}

/** The report's own SASS of a shown kernel, with each instruction's samples. */
class SampledSass implements vscode.TextDocumentContentProvider {
  provideTextDocumentContent(uri: vscode.Uri): string {
    const kernel = path.posix.basename(uri.path).replace(/\.sass$/, "");
    for (const kernels of shown.values()) {
      const k = kernels.get(kernel);
      if (k !== undefined) {
        const rows = k.lines
          .flatMap((r) => r.sass.map((s) => ({ ...s, line: r.line })))
          .sort((a, b) => a.offset - b.offset);
        return [
          `// ${k.kernel} (${k.sampling})`,
          ...rows.map((s) => `        /*${s.offset.toString(16).padStart(4, "0")}*/ ${s.text} ;`),
        ].join("\n");
      }
    }
    return "// Run Profile Kernel Lines first: no kernel's source counters are shown.";
  }

  async open(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const kernels = editor === undefined ? undefined : shown.get(editor.document.uri.toString());
    const first = kernels === undefined ? undefined : [...kernels.keys()][0];
    if (editor === undefined || first === undefined) {
      void showInformation(`${DISPLAY_NAME}: run Profile Kernel Lines on this file first.`);
      return;
    }
    const uri = vscode.Uri.from({
      scheme: SAMPLES_SCHEME,
      path: `/${path.basename(editor.document.uri.path)}/${first}.sass`,
    });
    const document = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(document, vscode.ViewColumn.Beside);
  }
}
