/**
 * The documents of the History tab's diff editor: a run's function text and the function's text
 * now, as read-only virtual documents (`kernel-lens-history:` URIs), opened side by side with
 * VS Code's `vscode.diff`.
 */
import * as vscode from "vscode";
import { HISTORY_SCHEME, diffTitle, historyDocPath } from "./historyModel";

/** Documents kept (the oldest go first): each diff adds two. */
const MAX_DOCS = 40;

export class HistoryDocs implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly texts = new Map<string, string>();
  private readonly registration: vscode.Disposable;
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  /** A document shown before got new text (the current text, after an edit). */
  readonly onDidChange = this.changed.event;

  constructor() {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(HISTORY_SCHEME, this);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return (
      this.texts.get(uri.toString()) ??
      "# Kernel Lens: this run's text is no longer held; open the diff again from the History tab.\n"
    );
  }

  /**
   * Opens the diff editor: `fn`'s text in run `run` (left) against `current` (right).
   *
   * Args: `key` tells apart functions of the same name in different files (e.g. a hash of the
   * file's URI).
   */
  async openDiff(
    fn: string,
    run: string,
    runText: readonly string[],
    current: readonly string[],
    key: string,
  ): Promise<void> {
    const left = this.put(historyDocPath(fn, run, key), runText);
    const right = this.put(historyDocPath(fn, null, key), current);
    await vscode.commands.executeCommand("vscode.diff", left, right, diffTitle(fn, run), {
      preview: false,
    });
  }

  private put(path: string, lines: readonly string[]): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: HISTORY_SCHEME, path });
    const key = uri.toString();
    const text = lines.join("\n") + "\n";
    const before = this.texts.get(key);
    this.texts.delete(key);
    this.texts.set(key, text);
    if (before !== undefined && before !== text) {
      this.changed.fire(uri);
    }
    while (this.texts.size > MAX_DOCS) {
      const oldest = this.texts.keys().next().value;
      if (oldest === undefined) {
        break;
      }
      this.texts.delete(oldest);
    }
    return uri;
  }

  dispose(): void {
    this.registration.dispose();
    this.changed.dispose();
    this.texts.clear();
  }
}
