/**
 * Scenario 33 (issue 13): a Jupyter notebook in code-server. VS Code's built-in `ipynb` extension
 * opens `.ipynb` files as `jupyter-notebook` documents (no Jupyter extension, no kernel needed:
 * its .vsix cannot be fetched here), which is all notebook-document sync needs. The lenses live
 * in the cells' own editors, so the helpers below give `Run.waitLensAbove`/`clickLensAbove` the
 * whole notebook as their scope, not the active cell's `.monaco-editor`.
 *
 * The scenarios themselves are files of tests/e2e/scenarios/ (listed by its index.mjs); this
 * module keeps the helpers they share.
 */

export const NOTEBOOK = "lecture_notebook.ipynb";
export const SUMMARY = /\d (ms|µs) ±[\d.]+%.*CPU/;
export const PROFILE_MS = 120_000;

export function assert(condition, message) {
  if (!condition) throw new Error(message);
}

function cell(source) {
  const lines = source.split("\n");
  return {
    cell_type: "code",
    execution_count: null,
    metadata: {},
    outputs: [],
    source: lines.map((l, i) => (i < lines.length - 1 ? `${l}\n` : l)),
  };
}

/** A small lecture-style notebook: a function in one cell, its call in a later one. */
export function notebookJson() {
  return JSON.stringify(
    {
      cells: [
        cell("import torch"),
        { cell_type: "markdown", metadata: {}, source: ["# Scaling a tensor"] },
        cell("def scale(x):\n    y = x * 3\n    return y.sum()"),
        cell("%matplotlib inline\na = torch.randn(64, 64)\nb = scale(a)"),
      ],
      metadata: {
        kernelspec: { display_name: "Python 3", language: "python", name: "python3" },
        language_info: { name: "python" },
      },
      nbformat: 4,
      nbformat_minor: 5,
    },
    null,
    1,
  );
}

/**
 * Where the notebook's cell editors are: VS Code draws a notebook editor in an overlay outside
 * the editor group's element, so the whole workbench is searched (the other editors are closed).
 */
export function notebookArea(r) {
  return r.page.locator(".monaco-workbench").first();
}

/** `Run.waitLensAbove` over the notebook's cell editors. */
export function waitLensAbove(r, lineText, pattern, timeoutMs) {
  return r.waitLensAbove(lineText, pattern, timeoutMs, notebookArea(r));
}

/** `Run.clickLensAbove` over the notebook's cell editors, then the mouse out of the way. */
export async function clickLensAbove(r, lineText, pattern, timeoutMs) {
  const link = await r.clickLensAbove(lineText, pattern, timeoutMs, notebookArea(r));
  await r.parkMouse();
  return link;
}
