/**
 * The documents Kernel Lens opens beside the source (`virtualDocs.ts`), as VS Code sees them:
 * a read-only content provider on the `kernel-lens` scheme, a status bar item with the facts of
 * the view in sight (arch, registers, spills; eager vs compiled), and the line linking between
 * each view and its source (`lineMap.ts`): selecting lines on one side highlights the lines they
 * map to on the other and scrolls them into sight.
 *
 * The documents' text is exactly the server's, so the server's line numbers apply to it.
 */
import * as vscode from "vscode";
import { LINKED_LINE_COLOR } from "../constants";
import { selectedLines, type LineLink } from "./lineMap";
import {
  SCHEME,
  languageFor,
  parseViewQuery,
  placeholderText,
  viewUri,
  type View,
  type ViewInfo,
} from "./virtualDocs";

/** Views remembered (text and line link); showing one more forgets the least recently shown. */
export const MAX_VIEWS = 32;

/** What a view shows, as the server returned it, and how it links to its source. */
export interface ViewContent {
  /** The server's text, unchanged. */
  text: string;
  link: LineLink;
  info: ViewInfo;
  /**
   * Version of the source document the server read, when it was open; after an edit the line
   * numbers no longer match, and linking stops until the view is shown again.
   */
  sourceVersion: number | undefined;
}

interface Entry extends ViewContent {
  view: View;
  uri: vscode.Uri;
  source: vscode.Uri;
}

function sameUri(a: vscode.Uri, b: vscode.Uri): boolean {
  return a.toString() === b.toString();
}

function editorsOf(uri: vscode.Uri): vscode.TextEditor[] {
  return vscode.window.visibleTextEditors.filter((e) => sameUri(e.document.uri, uri));
}

/** The 1-based lines `editor`'s selections cover. */
function selected(editor: vscode.TextEditor): number[] {
  return editor.selections.flatMap((s) => selectedLines(s.start.line, s.end.line, s.end.character));
}

export class Views implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  /**
   * One entry per view URI, least recently shown first. A view's URI names its source, so this
   * is one link state per (source, view) pair.
   */
  private readonly entries = new Map<string, Entry>();
  private readonly decoration: vscode.TextEditorDecorationType;
  private readonly item: vscode.StatusBarItem;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor() {
    this.decoration = vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      backgroundColor: new vscode.ThemeColor(LINKED_LINE_COLOR),
      overviewRulerColor: new vscode.ThemeColor("editorOverviewRuler.findMatchForeground"),
      overviewRulerLane: vscode.OverviewRulerLane.Center,
    });
    this.item = vscode.window.createStatusBarItem(
      "kernelLens.view",
      vscode.StatusBarAlignment.Left,
      -1,
    );
    this.item.name = "Kernel Lens View";
    this.subscriptions.push(
      this.changed,
      this.decoration,
      this.item,
      vscode.workspace.registerTextDocumentContentProvider(SCHEME, this),
      vscode.window.onDidChangeTextEditorSelection((e) => this.onDidChangeSelection(e)),
      vscode.window.onDidChangeActiveTextEditor(() => this.render()),
      vscode.window.onDidChangeVisibleTextEditors(() => this.render()),
      vscode.workspace.onDidChangeTextDocument((e) => this.onDidChangeDocument(e)),
    );
  }

  /** The text of a view's document (VS Code asks on opening, and after `onDidChange`). */
  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.entries.get(uri.toString())?.text ?? placeholderText(parseViewQuery(uri.query));
  }

  /** The view a `kernel-lens:` document shows, if it is one. */
  viewOf(uri: vscode.Uri): View | undefined {
    return uri.scheme === SCHEME
      ? (this.entries.get(uri.toString())?.view ?? parseViewQuery(uri.query))
      : undefined;
  }

  /**
   * Shows a view beside the source (in its column if it is already open), read-only and without
   * taking the focus, and links it with the source; showing a view again refreshes its document.
   *
   * Args:
   *   source: the document the view was made from.
   *   view: what it shows; its source must be `source.toString()`.
   *   content: the server's text and what goes with it.
   */
  async show(source: vscode.Uri, view: View, content: ViewContent): Promise<void> {
    const uri = vscode.Uri.from(viewUri(view));
    const key = uri.toString();
    const refresh = this.entries.delete(key);
    const entry: Entry = { ...content, view, uri, source };
    this.entries.set(key, entry);
    for (const old of [...this.entries.keys()].slice(0, -MAX_VIEWS)) {
      this.entries.delete(old);
    }
    if (refresh) {
      this.changed.fire(uri);
    }
    let document = await vscode.workspace.openTextDocument(uri);
    const language = languageFor(view, document.languageId, await vscode.languages.getLanguages());
    if (language !== undefined) {
      document = await vscode.languages.setTextDocumentLanguage(document, language);
    }
    await vscode.window.showTextDocument(document, {
      viewColumn: this.columnFor(uri, source),
      preserveFocus: true,
      preview: false,
    });
    this.render();
    // After a refresh the document's new text arrives later; onDidChangeDocument links again.
    this.linkFromSource(entry);
  }

  /**
   * Where to show the view at `uri`: where it is already; else with the other views in sight
   * (the active one first, e.g. when its title bar ran the command), unless that is the
   * source's own column; else beside the active editor. Views gather in one column instead of
   * each opening a new one further right.
   */
  private columnFor(uri: vscode.Uri, source: vscode.Uri): vscode.ViewColumn {
    const open = editorsOf(uri)[0]?.viewColumn;
    if (open !== undefined) {
      return open;
    }
    const sourceColumns = new Set(editorsOf(source).map((e) => e.viewColumn));
    const active = vscode.window.activeTextEditor;
    const views = [
      ...(active === undefined ? [] : [active]),
      ...vscode.window.visibleTextEditors,
    ].filter((e) => e.document.uri.scheme === SCHEME && !sourceColumns.has(e.viewColumn));
    return views[0]?.viewColumn ?? vscode.ViewColumn.Beside;
  }

  dispose(): void {
    for (const subscription of this.subscriptions.splice(0).reverse()) {
      subscription.dispose();
    }
    this.entries.clear();
  }

  /** Whether the source still has the text the view was made from. */
  private current(entry: Entry): boolean {
    if (entry.sourceVersion === undefined) {
      return true;
    }
    const document = vscode.workspace.textDocuments.find((d) => sameUri(d.uri, entry.source));
    return document === undefined || document.version === entry.sourceVersion;
  }

  private onDidChangeSelection(event: vscode.TextEditorSelectionChangeEvent): void {
    // Selections set by VS Code itself (an editor opening, an edit) are not the user's pick.
    if (event.kind === undefined) {
      return;
    }
    const uri = event.textEditor.document.uri;
    const view = uri.scheme === SCHEME ? this.entries.get(uri.toString()) : undefined;
    if (view !== undefined) {
      this.linkFromView(view, event.textEditor);
    } else if (uri.scheme !== SCHEME) {
      for (const entry of this.entries.values()) {
        if (sameUri(entry.source, uri)) {
          this.linkFromSource(entry, event.textEditor);
        }
      }
    }
  }

  /** Highlights, in the source, the lines that the selection in `editor` (a view) came from. */
  private linkFromView(entry: Entry, editor: vscode.TextEditor): void {
    // The view's own highlight answered an earlier selection in the source: now stale.
    editor.setDecorations(this.decoration, []);
    const lines = this.current(entry) ? entry.link.sourceLines(selected(editor)) : [];
    for (const target of editorsOf(entry.source)) {
      this.highlight(target, lines);
    }
  }

  /**
   * Highlights, in the view, the lines made from the selection in the source editor (`editor`,
   * or the source's editor in sight).
   */
  private linkFromSource(entry: Entry, editor?: vscode.TextEditor): void {
    const active = vscode.window.activeTextEditor;
    const from =
      editor ??
      (active !== undefined && sameUri(active.document.uri, entry.source)
        ? active
        : editorsOf(entry.source)[0]);
    if (from === undefined) {
      return;
    }
    from.setDecorations(this.decoration, []);
    const lines = this.current(entry) ? entry.link.viewLines(selected(from)) : [];
    for (const target of editorsOf(entry.uri)) {
      this.highlight(target, lines);
    }
  }

  /**
   * Decorates the 1-based `lines` of `editor` and scrolls them into sight — all of them when they
   * fit in the editor's height, else the first; [] clears.
   */
  private highlight(editor: vscode.TextEditor, lines: readonly number[]): void {
    const count = editor.document.lineCount;
    const ranges = lines
      .filter((line) => line >= 1 && line <= count)
      .map((line) => new vscode.Range(line - 1, 0, line - 1, 0));
    editor.setDecorations(this.decoration, ranges);
    const first = ranges[0];
    const last = ranges[ranges.length - 1];
    if (first !== undefined && last !== undefined) {
      const visible = editor.visibleRanges[0];
      const height = visible === undefined ? 0 : visible.end.line - visible.start.line;
      const fits = last.start.line - first.start.line < height;
      editor.revealRange(
        fits ? new vscode.Range(first.start, last.end) : first,
        vscode.TextEditorRevealType.InCenterIfOutsideViewport,
      );
    }
  }

  private onDidChangeDocument(event: vscode.TextDocumentChangeEvent): void {
    const uri = event.document.uri;
    if (uri.scheme === SCHEME) {
      const entry = this.entries.get(uri.toString());
      if (entry !== undefined) {
        this.linkFromSource(entry);
      }
      return;
    }
    // An edit of a source moves its lines: drop the highlights its views placed there.
    for (const entry of this.entries.values()) {
      if (sameUri(entry.source, uri) && !this.current(entry)) {
        editorsOf(uri).forEach((e) => e.setDecorations(this.decoration, []));
        editorsOf(entry.uri).forEach((e) => e.setDecorations(this.decoration, []));
        this.render();
      }
    }
  }

  /**
   * Shows the facts of the active view, or of the most recently shown view in sight of the
   * active source; hides the item otherwise.
   */
  private render(): void {
    const active = vscode.window.activeTextEditor?.document.uri;
    let entry: Entry | undefined;
    if (active?.scheme === SCHEME) {
      entry = this.entries.get(active.toString());
    } else if (active !== undefined) {
      entry = [...this.entries.values()]
        .reverse()
        .find((e) => sameUri(e.source, active) && editorsOf(e.uri).length > 0);
    }
    if (entry === undefined) {
      this.item.hide();
      return;
    }
    const stale = this.current(entry)
      ? ""
      : "\nThe source has changed since: show the view again to link its lines.";
    this.item.text = entry.info.text;
    this.item.tooltip = entry.info.tooltip + stale;
    this.item.command =
      entry.info.command === undefined
        ? undefined
        : { title: entry.info.text, command: entry.info.command, arguments: [entry.uri] };
    this.item.backgroundColor =
      entry.info.warning || stale !== ""
        ? new vscode.ThemeColor("statusBarItem.warningBackground")
        : undefined;
    this.item.show();
  }
}
