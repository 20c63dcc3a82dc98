/**
 * "Show load_inline Build": ask the server (`kernelLens/inlineExtension`) what
 * `torch.utils.cpp_extension.load_inline` makes of each `load_inline(...)` call of a Python file
 * (the generated main.cpp and cuda.cu, the PTX of cuda.cu with its line map, nvcc's errors) and
 * open the module's PTX beside the source, its lines linked with the source's as in Show
 * Assembly. nvcc's errors also arrive as diagnostics on the Python lines, so a failed compile
 * points at the Problems view.
 *
 * "Open load_inline File…" (the title bar and status bar item of those views) opens the
 * module's other files as read-only views, compiles it again, or builds it with load_inline and
 * opens the build log.
 */
import * as vscode from "vscode";
import { Commands, DISPLAY_NAME, LANGUAGE } from "../constants";
import type { Ctx } from "../ctx";
import {
  INLINE_FILE_DESCRIPTIONS,
  findModule,
  inlineFileText,
  inlineFileTitle,
  inlineFiles,
  keepBuild,
  moduleDescription,
  nearestModule,
  problemCounts,
  problemsMessage,
  type InlineFile,
} from "./inline";
import { LineLink, assemblyLink } from "./lineMap";
import { type InlineModule } from "../generated/wire";
import { InlineExtensionRequest, isShowInlineExtensionArgs } from "../protocol";
import {
  protocolUri,
  reportFailure,
  runningClient,
  sendWithProgress,
  versionOf,
} from "../requests";
import { fileName } from "../status";
import type { Views } from "./documents";
import { inlineInfo } from "./virtualDocs";
import { showError, showInformation, showWarning } from "../notify";

/** Source documents whose last result is kept for the file picker; more forget the oldest. */
export const MAX_RESULTS = 16;

/** VS Code's command that opens the Problems view. */
const SHOW_PROBLEMS = "workbench.actions.view.problems";

/** Codicons of the files in the picker. */
const FILE_ICONS: Readonly<Record<InlineFile, string>> = {
  ptx: "$(file-binary)",
  "cuda.cu": "$(file-code)",
  "main.cpp": "$(file-code)",
  "build.ninja": "$(gear)",
  "build.log": "$(output)",
};

/** Registers the two commands, extension-scoped, over the views of `documents.ts`. */
export function registerInlineCommands(ctx: Ctx, views: Views): void {
  const commands = new InlineCommands(ctx, views);
  ctx.pushExtCleanup(
    vscode.commands.registerCommand(Commands.showInlineExtension, (arg: unknown) =>
      commands.show(arg),
    ),
    vscode.commands.registerCommand(Commands.openInlineFile, (arg: unknown) =>
      commands.openFile(arg),
    ),
  );
}

/** The server's last answer for one source document. */
interface Compiled {
  modules: InlineModule[];
  /** Version of the source the server read; undefined when it was not open. */
  sourceVersion: number | undefined;
}

/** The document a command is about, and what it says of the module meant. */
interface Target {
  source: vscode.Uri;
  /** The document's URI as a code lens gave it (sent back unchanged). */
  lensUri?: string;
  /** 1-based line of the lens's `load_inline(` call. */
  line?: number;
  /** The module of the view the command ran from, and the file it shows. */
  module?: string;
  file?: InlineFile;
  /** 1-based line of the cursor in the source: the call above it is preselected. */
  cursor?: number;
}

interface ModuleItem extends vscode.QuickPickItem {
  module?: InlineModule;
}

interface FileItem extends vscode.QuickPickItem {
  action?: "file" | "build" | "compile";
  file?: InlineFile;
}

/**
 * Shows a picker with `active` preselected; resolves to the accepted item, or undefined when
 * the user dismisses it.
 */
async function pick<T extends vscode.QuickPickItem>(
  title: string,
  placeholder: string,
  items: readonly T[],
  active: T | undefined,
): Promise<T | undefined> {
  const picker = vscode.window.createQuickPick<T>();
  picker.title = title;
  picker.placeholder = placeholder;
  picker.items = items;
  picker.activeItems = active === undefined ? [] : [active];
  return new Promise<T | undefined>((resolve) => {
    picker.onDidAccept(() => {
      resolve(picker.selectedItems[0] ?? picker.activeItems[0]);
      picker.hide();
    });
    picker.onDidHide(() => {
      resolve(undefined);
      picker.dispose();
    });
    picker.show();
  });
}

class InlineCommands {
  /** The last answer per source URI, least recently stored first. */
  private readonly results = new Map<string, Compiled>();

  constructor(
    private readonly ctx: Ctx,
    private readonly views: Views,
  ) {}

  /**
   * `kernelLens.showInlineExtension`: compiles the file's load_inline modules and shows the
   * module's PTX; or, when nvcc failed, says so and offers the Problems view.
   */
  async show(arg: unknown): Promise<void> {
    const target = this.targetOf(arg);
    if (target !== undefined) {
      await this.compileAndShow(target);
    }
  }

  private async compileAndShow(target: Target): Promise<void> {
    const compiled = await this.compile(target, false);
    const module =
      compiled === undefined ? undefined : await this.pickModule(target, compiled.modules);
    if (compiled !== undefined && module !== undefined) {
      await this.present(target.source, module, compiled.sourceVersion);
    }
  }

  /**
   * `kernelLens.openInlineFile`: picks one of the module's files (or Build, or Compile again)
   * from the last answer for the source, compiling first if there is none for its current text.
   */
  async openFile(arg: unknown): Promise<void> {
    const target = this.targetOf(arg);
    if (target === undefined) {
      return;
    }
    const compiled = this.cached(target.source) ?? (await this.compile(target, false));
    const module =
      compiled === undefined ? undefined : await this.pickModule(target, compiled.modules);
    if (compiled === undefined || module === undefined) {
      return;
    }
    const choice = await this.pickFile(module, target.file);
    if (choice?.action === "file" && choice.file !== undefined) {
      await this.open(target.source, module, choice.file, compiled.sourceVersion);
    } else if (choice?.action === "build") {
      await this.build(target, module);
    } else if (choice?.action === "compile") {
      await this.compileAndShow({ ...target, module: module.name });
    }
  }

  /**
   * The target of a command: the lens's argument; else the load_inline view passed (title bar,
   * status bar item) or active; else the active Python file, with its cursor line. Undefined
   * after telling the user what to do.
   */
  private targetOf(arg: unknown): Target | undefined {
    if (isShowInlineExtensionArgs(arg)) {
      const target: Target = { source: vscode.Uri.parse(arg.uri), lensUri: arg.uri };
      if (arg.line !== undefined) {
        target.line = arg.line;
      }
      return target;
    }
    const editor = vscode.window.activeTextEditor;
    const uri = arg instanceof vscode.Uri ? arg : editor?.document.uri;
    const view = uri === undefined ? undefined : this.views.viewOf(uri);
    if (view?.kind === "inline") {
      return { source: vscode.Uri.parse(view.source), module: view.module, file: view.file };
    }
    const document = editor?.document;
    if (
      editor === undefined ||
      document?.languageId !== LANGUAGE ||
      document.uri.scheme !== "file"
    ) {
      void showInformation(
        `${DISPLAY_NAME}: open a Python file that calls torch.utils.cpp_extension.load_inline(...).`,
      );
      return undefined;
    }
    return { source: document.uri, cursor: editor.selection.active.line + 1 };
  }

  /** The last answer for `source`, if the document has not changed since. */
  private cached(source: vscode.Uri): Compiled | undefined {
    const compiled = this.results.get(source.toString());
    const version = versionOf(source);
    return compiled !== undefined &&
      (version === undefined ||
        compiled.sourceVersion === undefined ||
        version === compiled.sourceVersion)
      ? compiled
      : undefined;
  }

  /** Remembers an answer; a compile keeps the build products of the same text's last build. */
  private store(source: vscode.Uri, compiled: Compiled): Compiled {
    const key = source.toString();
    const previous = this.results.get(key);
    this.results.delete(key);
    const kept: Compiled =
      previous !== undefined && previous.sourceVersion === compiled.sourceVersion
        ? { ...compiled, modules: keepBuild(previous.modules, compiled.modules) }
        : compiled;
    this.results.set(key, kept);
    for (const old of [...this.results.keys()].slice(0, -MAX_RESULTS)) {
      this.results.delete(old);
    }
    return kept;
  }

  /**
   * Sends `kernelLens/inlineExtension` under a cancellable progress notification (nvcc takes
   * 20-60 s on torch's headers; a build, minutes); undefined after reporting a failure.
   */
  private async compile(target: Target, build: boolean): Promise<Compiled | undefined> {
    const client = await runningClient(this.ctx);
    if (client === undefined) {
      return undefined;
    }
    const method = InlineExtensionRequest.method;
    const uri = protocolUri(client, target.source, target.lensUri);
    const sourceVersion = versionOf(target.source);
    const file = fileName(target.source.toString());
    const title = build
      ? `${DISPLAY_NAME}: building the load_inline modules of ${file} (ninja, nvcc, c++)…`
      : `${DISPLAY_NAME}: nvcc: compiling the load_inline CUDA sources of ${file}…`;
    try {
      const result = await sendWithProgress(
        this.ctx,
        client,
        InlineExtensionRequest,
        build ? { uri, build } : { uri },
        title,
      );
      for (const m of result.modules) {
        const { errors, warnings } = problemCounts(m);
        this.ctx.log.info(
          `${method} ${m.name} (line ${m.call_line}, ${m.arch}): ` +
            `${m.ptx === null ? "no PTX" : `PTX in ${m.ptx_seconds ?? "?"} s`}, ` +
            `${errors} errors, ${warnings} warnings, ${m.line_map.length} source lines mapped` +
            (m.build_directory === null ? "" : `, built in ${m.build_directory}`),
        );
      }
      return this.store(target.source, { modules: result.modules, sourceVersion });
    } catch (error) {
      reportFailure(this.ctx, method, error);
      return undefined;
    }
  }

  /**
   * The module the command means (the lens's call, the view's module, the only one), else the
   * user's pick, with the call above the cursor preselected.
   */
  private async pickModule(
    target: Target,
    modules: readonly InlineModule[],
  ): Promise<InlineModule | undefined> {
    const found = findModule(modules, { line: target.line, name: target.module });
    if (found !== undefined || modules.length === 0) {
      return found;
    }
    const items: ModuleItem[] = [...modules]
      .sort((a, b) => a.call_line - b.call_line)
      .map((module) => ({
        module,
        label: `$(tools) ${module.name}`,
        description: moduleDescription(module),
      }));
    const nearest = nearestModule(modules, target.cursor ?? target.line);
    const picked = await pick(
      `${DISPLAY_NAME}: load_inline modules of ${fileName(target.source.toString())}`,
      "Module to show",
      items,
      items.find((item) => item.module === nearest),
    );
    return picked?.module;
  }

  /** Asks which file of `module` to open (not the one in sight first), or Build, or Compile. */
  private async pickFile(
    module: InlineModule,
    current: InlineFile | undefined,
  ): Promise<FileItem | undefined> {
    const files: FileItem[] = inlineFiles(module).map((file) => ({
      action: "file",
      file,
      label: `${FILE_ICONS[file]} ${inlineFileTitle(module.name, file)}`,
      description: INLINE_FILE_DESCRIPTIONS[file],
    }));
    const items: FileItem[] = [
      ...files,
      { label: "load_inline", kind: vscode.QuickPickItemKind.Separator },
      {
        action: "build",
        label: "$(tools) Build with load_inline",
        description:
          "ninja, nvcc and c++ as torch runs them, then the build log (a minute or more)",
      },
      {
        action: "compile",
        label: "$(refresh) Compile again",
        description: "nvcc -ptx of the file's current text",
      },
    ];
    return pick(
      `${DISPLAY_NAME}: load_inline module ${module.name} (line ${module.call_line})`,
      "File to open beside the source",
      items,
      files.find((item) => item.file !== current) ?? items.find((item) => item.action === "build"),
    );
  }

  /**
   * Shows what the command was for: the PTX; else nvcc's errors (with the Problems view one
   * click away); else, for a module without cuda_sources, its main.cpp.
   */
  private async present(
    source: vscode.Uri,
    module: InlineModule,
    sourceVersion: number | undefined,
  ): Promise<void> {
    if (module.ptx !== null) {
      await this.open(source, module, "ptx", sourceVersion);
      return;
    }
    if (module.errors.length > 0) {
      const cuda = module.files["cuda.cu"] === null ? [] : ["Open cuda.cu"];
      void showError(`${DISPLAY_NAME}: ${problemsMessage(module)}`, "Show Problems", ...cuda).then(
        async (choice) => {
          if (choice === "Show Problems") {
            await vscode.commands.executeCommand(SHOW_PROBLEMS);
          } else if (choice === "Open cuda.cu") {
            await this.open(source, module, "cuda.cu", sourceVersion);
          }
        },
      );
      return;
    }
    await this.open(source, module, "main.cpp", sourceVersion);
    void showInformation(
      `${DISPLAY_NAME}: load_inline module ${module.name} has no cuda_sources, so no PTX: ` +
        "this is its main.cpp.",
    );
  }

  /** Opens one file of `module` beside the source; the PTX's lines are linked with the source's. */
  private async open(
    source: vscode.Uri,
    module: InlineModule,
    file: InlineFile,
    sourceVersion: number | undefined,
  ): Promise<void> {
    const text = inlineFileText(module, file);
    if (text === null) {
      return;
    }
    await this.views.show(
      source,
      { kind: "inline", source: source.toString(), module: module.name, file },
      {
        text,
        link: file === "ptx" ? assemblyLink(module.line_map) : new LineLink(),
        info: inlineInfo(module, file, Commands.openInlineFile),
        sourceVersion,
      },
    );
  }

  /** Builds the file's modules with load_inline, then opens `module`'s build log. */
  private async build(target: Target, module: InlineModule): Promise<void> {
    const compiled = await this.compile({ ...target, module: module.name }, true);
    const built =
      compiled === undefined ? undefined : findModule(compiled.modules, { name: module.name });
    if (compiled === undefined || built === undefined) {
      return;
    }
    if (built.build_log === null) {
      void showWarning(
        `${DISPLAY_NAME}: load_inline built ${built.name} but the server returned no build log.`,
      );
      return;
    }
    await this.open(target.source, built, "build.log", compiled.sourceVersion);
  }
}
