/**
 * Scenario 33 (issue 13): a Jupyter notebook in code-server. VS Code's built-in `ipynb` extension
 * opens `.ipynb` files as `jupyter-notebook` documents (no Jupyter extension, no kernel needed:
 * its .vsix cannot be fetched here), which is all notebook-document sync needs. The lenses live
 * in the cells' own editors, so the helpers below give `Run.waitLensAbove`/`clickLensAbove` the
 * whole notebook as their scope, not the active cell's `.monaco-editor`.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";

const NOTEBOOK = "lecture_notebook.ipynb";
const SUMMARY = /\d (ms|µs) ±[\d.]+%.*CPU/;
const PROFILE_MS = 120_000;

function assert(condition, message) {
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
function notebookArea(r) {
  return r.page.locator(".monaco-workbench").first();
}

/** `Run.waitLensAbove` over the notebook's cell editors. */
function waitLensAbove(r, lineText, pattern, timeoutMs) {
  return r.waitLensAbove(lineText, pattern, timeoutMs, notebookArea(r));
}

/** `Run.clickLensAbove` over the notebook's cell editors, then the mouse out of the way. */
async function clickLensAbove(r, lineText, pattern, timeoutMs) {
  const link = await r.clickLensAbove(lineText, pattern, timeoutMs, notebookArea(r));
  await r.parkMouse();
  return link;
}

/** @type {{name: string, run: (r: import('./ui.mjs').Run) => Promise<void>}} */
export const NOTEBOOK_SCENARIO = {
  name: "33. a Jupyter notebook: Profile on a function in a cell (inputs from a later cell), Profile Cell",
  async run(r) {
    await r.step(
      "open a .ipynb: Profile Cell on code cells, Profile on the def",
      60_000,
      async () => {
        await writeFile(path.join(r.workspace, NOTEBOOK), notebookJson());
        await r.closeEverything();
        // Written now: opened from the explorer, which lists it (Quick Open's index may lag).
        await r.openFromExplorer(NOTEBOOK);
        await notebookArea(r)
          .locator(".view-line", { hasText: "import torch" })
          .first()
          .waitFor({ timeout: 30_000 });
        const first = await waitLensAbove(r, "import torch", /Profile Cell/, 45_000);
        r.log(`    first cell: ${first.text}`);
        const def = await waitLensAbove(r, "def scale(x):", /Profile Cell.*Profile/, 15_000);
        r.log(`    def cell: ${def.text}`);
        assert(
          !/Profile Script/.test(def.text),
          `a notebook cell offers Profile Script: ${def.text}`,
        );
        await r.shot("notebook-lenses");
      },
    );
    await r.step(
      "Profile scale: inputs from the later cell's call, ops on the cell's lines",
      PROFILE_MS,
      async () => {
        await clickLensAbove(r, "def scale(x):", /^Profile$/, 15_000);
        const row = await waitLensAbove(r, "def scale(x):", SUMMARY, PROFILE_MS - 20_000);
        r.log(`    summary: ${row.text}`);
        const mul = await waitLensAbove(r, "y = x * 3", /aten::mul/, 10_000);
        r.log(`    line: ${mul.text}`);
        await r.shot("notebook-profiled-function");
      },
    );
    await r.step("Report on the function defined in a cell", 60_000, async () => {
      await clickLensAbove(r, "def scale(x):", /^Report$/, 15_000);
      const view = await r.waitWebview(
        "the report of scale",
        (v) => v.mode === "report" && v.text.includes("aten::mul"),
        45_000,
      );
      r.log(`    report: ${view.title}`);
      await r.shot("notebook-report");
      await r.closeEverything();
      await r.openFromExplorer(NOTEBOOK);
      await waitLensAbove(r, "def scale(x):", SUMMARY, 30_000);
    });
    await r.step("Profile Cell: the cells above and this one, once", PROFILE_MS, async () => {
      await clickLensAbove(r, "%matplotlib inline", /Profile Cell/, 15_000);
      const row = await waitLensAbove(
        r,
        "%matplotlib inline",
        /cell · .* wall with the 2 code cells above/,
        PROFILE_MS - 20_000,
      );
      r.log(`    cell: ${row.text}`);
      // In the row, or in its hover when the row is too long for the editor (issue 41).
      assert(
        /1 IPython line skipped/.test(`${row.text} ${row.hover}`),
        `no note of the magic: ${row.text} (hover: ${row.hover})`,
      );
      await waitLensAbove(r, "a = torch.randn(64, 64)", /aten::randn/, 10_000);
      await waitLensAbove(r, "b = scale(a)", /aten::mul/, 10_000);
      await r.shot("notebook-profiled-cell");
      await r.closeEverything();
    });
  },
};
