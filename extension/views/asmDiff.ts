/**
 * **Compare Assembly…**: a kernel's PTX or SASS against another's — a load_inline CUDA kernel,
 * another Triton kernel of the workspace, the same kernel with other constexprs (another
 * BLOCK_SIZE) or as of the last commit — in VS Code's diff editor (`vscode.diff`) on two
 * read-only `kernel-lens-asmdiff:` documents.
 *
 * The server (`kernelLens/asmDiff`) compiles both sides, normalises them (registers, labels,
 * parameters, addresses canonicalised) and summarises each. The summary is a comment block at
 * the top of each side: it sits in the diff itself, where the eye already is, the two blocks line
 * up and their differing lines are highlighted as any other change — no panel to open or keep in
 * sync — and it travels with a copy of the text. *Show Original* / *Show Normalised* in the diff's
 * title bar swaps both sides. Selecting lines on a side highlights the source lines they came
 * from (and back), as in Show Assembly.
 */
import * as vscode from "vscode";
import { Commands, DISPLAY_NAME, LANGUAGE, LINKED_LINE_COLOR } from "../constants";
import type { Ctx } from "../ctx";
import type { AsmDiffResult, AsmDiffStage } from "../generated/wire";
import { showInformation } from "../notify";
import { AsmDiffRequest, isShowAssemblyArgs } from "../protocol";
import { reportFailure, runningClient, sendWithProgress } from "../requests";
import {
  ASM_DIFF_SCHEME,
  cudaKernelAt,
  diffDocPath,
  diffTitle,
  otherItems,
  otherMode,
  parsePicks,
  scanKernels,
  tritonKernelAt,
  type DiffMode,
  type DiffTarget,
  type FileKernels,
  type OtherItem,
} from "./asmDiffModel";
import type { Views } from "./documents";
import { assemblyLink, selectedLines, type LineLink } from "./lineMap";
import { SCHEME as VIEW_SCHEME } from "./virtualDocs";

/** Comparisons kept (each holds four documents); the oldest go first. */
const MAX_DIFFS = 10;
/** Python files read to list the workspace's kernels, and the largest read. */
const MAX_FILES = 400;
const MAX_FILE_BYTES = 1_000_000;

interface Doc {
  text: string;
  source: vscode.Uri;
  link: LineLink;
}

interface Shown {
  n: number;
  result: AsmDiffResult;
  mode: DiffMode;
}

/** The diff documents, their line links and the toggle between modes. */
class AsmDiffDocs implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly docs = new Map<string, Doc>();
  private readonly diffs = new Map<number, Shown>();
  private next = 1;
  private readonly decoration: vscode.TextEditorDecorationType;
  private readonly item: vscode.StatusBarItem;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor() {
    this.decoration = vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      backgroundColor: new vscode.ThemeColor(LINKED_LINE_COLOR),
    });
    this.item = vscode.window.createStatusBarItem(
      "kernelLens.asmDiff",
      vscode.StatusBarAlignment.Left,
      -1,
    );
    this.item.name = "Kernel Lens Compare Assembly";
    this.subscriptions.push(
      this.decoration,
      this.item,
      vscode.workspace.registerTextDocumentContentProvider(ASM_DIFF_SCHEME, this),
      vscode.window.onDidChangeTextEditorSelection((e) => this.onSelection(e)),
      vscode.window.onDidChangeActiveTextEditor(() => this.render()),
    );
  }

  /**
   * While a side of a comparison is the active editor, the status bar says what differs most
   * (the diff may be too narrow for the header's long lines); its tooltip holds both summaries.
   */
  private render(): void {
    const uri = vscode.window.activeTextEditor?.document.uri;
    const n = uri?.scheme === ASM_DIFF_SCHEME ? Number(uri.path.split("/")[1]) : NaN;
    const shown = this.diffs.get(n);
    if (shown === undefined) {
      this.item.hide();
      return;
    }
    const { result } = shown;
    this.item.text = `$(diff) ${result.verdict}`;
    const strip = (lines: readonly string[]): string =>
      lines
        .map((l) => l.replace(/^\/\/ ?/, ""))
        .filter((l) => l !== "" && !l.startsWith("differs most"))
        .join("\n");
    this.item.tooltip = `${strip(result.a.header)}\n\n${strip(result.b.header)}\n\ndiffers most: ${result.verdict}`;
    this.item.command = { title: "Normalised ↔ Original", command: Commands.toggleAsmDiffText };
    this.item.show();
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return (
      this.docs.get(uri.toString())?.text ??
      "// Kernel Lens: this comparison is no longer held; run Compare Assembly… again.\n"
    );
  }

  /** Opens the diff editor on a new comparison. */
  async open(result: AsmDiffResult): Promise<void> {
    const n = this.next++;
    for (const mode of ["normalised", "original"] as const) {
      for (const side of ["a", "b"] as const) {
        const doc = result[side][mode];
        this.docs.set(this.uri(n, side, result, mode).toString(), {
          text: doc.text,
          source: vscode.Uri.file(result[side].path),
          link: assemblyLink(doc.line_map),
        });
      }
    }
    this.diffs.set(n, { n, result, mode: "normalised" });
    for (const old of [...this.diffs.keys()].slice(0, -MAX_DIFFS)) {
      this.forget(old);
    }
    await this.show(n, "normalised");
  }

  /** The comparison in the active diff editor shown with the other texts. */
  async toggle(uri: vscode.Uri | undefined): Promise<void> {
    const target = uri ?? vscode.window.activeTextEditor?.document.uri;
    const n = target?.scheme === ASM_DIFF_SCHEME ? Number(target.path.split("/")[1]) : NaN;
    const shown = this.diffs.get(n);
    if (shown === undefined) {
      void showInformation(`${DISPLAY_NAME}: run Compare Assembly… first.`);
      return;
    }
    await this.show(n, otherMode(shown.mode));
  }

  private uri(n: number, side: "a" | "b", result: AsmDiffResult, mode: DiffMode): vscode.Uri {
    return vscode.Uri.from({ scheme: ASM_DIFF_SCHEME, path: diffDocPath(n, side, result, mode) });
  }

  private async show(n: number, mode: DiffMode): Promise<void> {
    const shown = this.diffs.get(n);
    if (shown === undefined) {
      return;
    }
    shown.mode = mode;
    const { result } = shown;
    const left = this.uri(n, "a", result, mode);
    const right = this.uri(n, "b", result, mode);
    if (result.stage === "sass") {
      // `.sass` is also Sass stylesheets' extension: keep SASS plain text.
      for (const uri of [left, right]) {
        const doc = await vscode.workspace.openTextDocument(uri);
        if (doc.languageId !== "plaintext") {
          await vscode.languages.setTextDocumentLanguage(doc, "plaintext");
        }
      }
    }
    // From a Kernel Lens view (the kernel's PTX) or a diff, in its group, beside the source;
    // from the source, beside it.
    const active = vscode.window.activeTextEditor?.document.uri.scheme;
    const here = active === ASM_DIFF_SCHEME || active === VIEW_SCHEME;
    await vscode.commands.executeCommand("vscode.diff", left, right, diffTitle(result, mode), {
      preview: false,
      viewColumn: here ? vscode.ViewColumn.Active : vscode.ViewColumn.Beside,
    });
    this.render();
  }

  private forget(n: number): void {
    const shown = this.diffs.get(n);
    this.diffs.delete(n);
    if (shown === undefined) {
      return;
    }
    for (const mode of ["normalised", "original"] as const) {
      for (const side of ["a", "b"] as const) {
        this.docs.delete(this.uri(n, side, shown.result, mode).toString());
      }
    }
  }

  /** Links a selection on a diff side to its source's lines, and a source's to the sides. */
  private onSelection(event: vscode.TextEditorSelectionChangeEvent): void {
    if (event.kind === undefined) {
      return;
    }
    const uri = event.textEditor.document.uri;
    const lines = event.textEditor.selections.flatMap((s) =>
      selectedLines(s.start.line, s.end.line, s.end.character),
    );
    const editors = vscode.window.visibleTextEditors;
    if (uri.scheme === ASM_DIFF_SCHEME) {
      const doc = this.docs.get(uri.toString());
      if (doc === undefined) {
        return;
      }
      const source = doc.link.sourceLines(lines);
      for (const editor of editors) {
        if (editor.document.uri.toString() === doc.source.toString()) {
          this.highlight(editor, source);
        }
      }
      return;
    }
    if (uri.scheme !== "file") {
      return;
    }
    for (const editor of editors) {
      const doc = this.docs.get(editor.document.uri.toString());
      if (doc !== undefined && doc.source.toString() === uri.toString()) {
        this.highlight(editor, doc.link.viewLines(lines));
      }
    }
  }

  private highlight(editor: vscode.TextEditor, lines: readonly number[]): void {
    const count = editor.document.lineCount;
    const ranges = lines
      .filter((line) => line >= 1 && line <= count)
      .map((line) => new vscode.Range(line - 1, 0, line - 1, 0));
    editor.setDecorations(this.decoration, ranges);
    const first = ranges[0];
    if (first !== undefined) {
      editor.revealRange(first, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    }
  }

  dispose(): void {
    for (const s of this.subscriptions.splice(0).reverse()) {
      s.dispose();
    }
    this.docs.clear();
    this.diffs.clear();
  }
}

/** Registers Compare Assembly… and the toggle, extension-scoped. */
export function registerAsmDiff(ctx: Ctx, views: Views): void {
  const docs = new AsmDiffDocs();
  ctx.pushExtCleanup(
    docs,
    vscode.commands.registerCommand(Commands.compareAssembly, (arg: unknown) =>
      compareAssembly(ctx, views, docs, arg),
    ),
    vscode.commands.registerCommand(Commands.toggleAsmDiffText, (uri: unknown) =>
      docs.toggle(uri instanceof vscode.Uri ? uri : undefined),
    ),
  );
}

/** Side A: the lens's kernel, else the assembly view's, else the kernel at the cursor. */
function firstSide(views: Views, arg: unknown): { target: DiffTarget; stage?: string } | undefined {
  if (isShowAssemblyArgs(arg)) {
    return { target: { uri: arg.uri, kernel: arg.kernel } };
  }
  const editor = vscode.window.activeTextEditor;
  const view = editor === undefined ? undefined : views.viewOf(editor.document.uri);
  if (view?.kind === "assembly") {
    return { target: { uri: view.source, kernel: view.kernel }, stage: view.stage };
  }
  const document = editor?.document;
  if (editor !== undefined && document?.languageId === LANGUAGE && document.uri.scheme === "file") {
    const text = document.getText();
    const line = editor.selection.active.line;
    const kernel = tritonKernelAt(text, line) ?? cudaKernelAt(text, line);
    if (kernel !== undefined) {
      return { target: { uri: document.uri.toString(), kernel } };
    }
  }
  void showInformation(
    `${DISPLAY_NAME}: put the cursor in a @triton.jit kernel (or a load_inline __global__ kernel), or open its assembly, to compare it.`,
  );
  return undefined;
}

/** Every Python file of the workspace (and the open ones) with the kernels it holds. */
async function workspaceKernels(): Promise<Map<string, FileKernels>> {
  const found = new Map<string, FileKernels>();
  const uris = new Map<string, vscode.Uri>();
  for (const doc of vscode.workspace.textDocuments) {
    if (doc.languageId === LANGUAGE && doc.uri.scheme === "file") {
      uris.set(doc.uri.toString(), doc.uri);
    }
  }
  const files = await vscode.workspace.findFiles(
    "**/*.py",
    "{**/node_modules/**,**/.venv/**,**/venv/**,**/site-packages/**,**/.git/**}",
    MAX_FILES,
  );
  files.forEach((u) => uris.set(u.toString(), u));
  for (const [key, uri] of uris) {
    let text = vscode.workspace.textDocuments.find((d) => d.uri.toString() === key)?.getText();
    if (text === undefined) {
      try {
        const stat = await vscode.workspace.fs.stat(uri);
        if (stat.type !== vscode.FileType.File || stat.size > MAX_FILE_BYTES) {
          continue;
        }
        text = new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
      } catch {
        continue;
      }
    }
    const kernels = scanKernels(text);
    if (kernels.triton.length + kernels.cuda.length > 0) {
      found.set(key, kernels);
    }
  }
  return new Map([...found].sort(([a], [b]) => a.localeCompare(b)));
}

interface GitApi {
  getRepository(uri: vscode.Uri): { show(ref: string, path: string): Promise<string> } | null;
}

/** The built-in Git extension's API, where it is enabled. */
async function gitApi(): Promise<GitApi | undefined> {
  const git = vscode.extensions.getExtension<{ getAPI(v: 1): GitApi }>("vscode.git");
  if (git === undefined) {
    return undefined;
  }
  try {
    const exports = git.isActive ? git.exports : await git.activate();
    return exports.getAPI(1);
  } catch {
    return undefined;
  }
}

async function pickStage(current: string | undefined): Promise<AsmDiffStage | undefined> {
  const items: (vscode.QuickPickItem & { stage: AsmDiffStage })[] = [
    { label: "PTX", description: "NVIDIA's virtual instruction set", stage: "ptx" },
    { label: "SASS", description: "the GPU's machine code (ptxas, nvdisasm)", stage: "sass" },
  ];
  if (current === "sass") {
    items.reverse();
  }
  const picked = await vscode.window.showQuickPick(items, {
    title: `${DISPLAY_NAME}: Compare Assembly — stage`,
  });
  return picked?.stage;
}

/** Side B, as the user picks it (undefined when dismissed). */
async function secondSide(a: DiffTarget, git: GitApi | undefined): Promise<DiffTarget | undefined> {
  const items = otherItems(a, await workspaceKernels(), git !== undefined);
  const picked = await vscode.window.showQuickPick<OtherItem>(items, {
    title: `${DISPLAY_NAME}: compare ${a.kernel} with…`,
    placeHolder: "a load_inline CUDA kernel, another Triton kernel, other constexprs, a commit",
    matchOnDescription: true,
  });
  if (picked === undefined) {
    return undefined;
  }
  const choice = picked.choice;
  if (choice.kind === "target") {
    return choice.target;
  }
  if (choice.kind === "picks") {
    const typed = await vscode.window.showInputBox({
      title: `${DISPLAY_NAME}: ${a.kernel} compiled with`,
      prompt: "constexpr values or argument types, NAME=VALUE, comma-separated",
      placeHolder: "BLOCK_SIZE=64",
      validateInput: (text) => {
        const picks = parsePicks(text);
        return "error" in picks ? picks.error : undefined;
      },
    });
    const picks = typed === undefined ? undefined : parsePicks(typed);
    return picks === undefined || "error" in picks ? undefined : { ...a, overrides: picks };
  }
  const uri = vscode.Uri.parse(a.uri);
  const repo = git?.getRepository(uri);
  if (repo === undefined || repo === null) {
    void showInformation(`${DISPLAY_NAME}: ${uri.fsPath} is in no git repository.`);
    return undefined;
  }
  try {
    const text = await repo.show("HEAD", uri.fsPath);
    return { ...a, text, label: "HEAD" };
  } catch {
    void showInformation(`${DISPLAY_NAME}: ${uri.fsPath} is not in the last commit.`);
    return undefined;
  }
}

async function compareAssembly(
  ctx: Ctx,
  views: Views,
  docs: AsmDiffDocs,
  arg: unknown,
): Promise<void> {
  const first = firstSide(views, arg);
  if (first === undefined) {
    return;
  }
  const stage = await pickStage(first.stage);
  if (stage === undefined) {
    return;
  }
  const git = await gitApi();
  const other = await secondSide(first.target, git);
  const client = other === undefined ? undefined : await runningClient(ctx);
  if (other === undefined || client === undefined) {
    return;
  }
  // "As of the last commit": the commit's text on the left, the text now on the right.
  const [a, b] = other.text !== undefined ? [other, first.target] : [first.target, other];
  try {
    const result = await sendWithProgress(
      ctx,
      client,
      AsmDiffRequest,
      { a, b, stage, arch: null },
      `${DISPLAY_NAME}: compiling ${a.kernel} and ${b.kernel} to ${stage.toUpperCase()}…`,
    );
    ctx.log.info(`${AsmDiffRequest.method}: ${result.a.title} vs ${result.b.title}`);
    ctx.log.info(`${AsmDiffRequest.method}: differs most: ${result.verdict}`);
    await docs.open(result);
  } catch (error) {
    reportFailure(ctx, AsmDiffRequest.method, error);
  }
}
