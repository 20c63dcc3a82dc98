/** Scenario 33 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import {
  NOTEBOOK,
  PROFILE_MS,
  SUMMARY,
  assert,
  clickLensAbove,
  notebookArea,
  notebookJson,
  waitLensAbove,
} from "../notebook.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
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
