import * as vscode from "vscode";

/**
 * A text after a document line (1-based `line`, clamped into the document), over the line's whole
 * text so that its hover shows wherever the line is pointed at: Show Values' and Kernel Lines'
 * per-line figures.
 */
export function lineDecoration(
  document: vscode.TextDocument,
  line: number,
  text: string,
  hover?: vscode.MarkdownString,
): vscode.DecorationOptions {
  const line0 = Math.min(Math.max(line - 1, 0), Math.max(document.lineCount - 1, 0));
  const row = document.lineAt(line0);
  const start = new vscode.Position(line0, row.firstNonWhitespaceCharacterIndex);
  return {
    range: new vscode.Range(start, row.range.end),
    renderOptions: { after: { contentText: text } },
    ...(hover === undefined ? {} : { hoverMessage: hover }),
  };
}
