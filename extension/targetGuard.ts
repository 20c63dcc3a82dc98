/**
 * {@link targetProblem} against the editor's workspace folders and open documents.
 */
import * as vscode from "vscode";
import { realPath } from "./install";
import { targetProblem } from "./targets";

/**
 * Why `uri` is not a target Kernel Lens acts on (undefined when it is): a `file:` URI inside a
 * workspace folder, or with `allowOpen` a document open in the editor.
 */
export function targetRefusal(uri: unknown, allowOpen: boolean): string | undefined {
  return targetProblem(uri, {
    folders: (vscode.workspace.workspaceFolders ?? [])
      .filter((f) => f.uri.scheme === "file")
      .map((f) => f.uri.fsPath),
    openDocuments: [
      ...vscode.workspace.textDocuments.map((d) => d.uri.toString()),
      ...vscode.workspace.notebookDocuments.map((d) => d.uri.toString()),
    ],
    allowOpen,
    real: realPath,
  });
}
