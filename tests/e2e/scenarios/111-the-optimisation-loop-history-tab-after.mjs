/** Scenario 111 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { PROFILE_MS, assert, profileFresh } from "../common.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "111. the optimisation loop: History tab after two runs, a run's text in the diff editor",
  async run(r) {
    const SQ_MUL = "def square_mul(x):";
    const BODY = "return x * x";
    const EDITED = "return x * x * x";
    const PANEL = "Kernel Lens: square_mul";
    const DELTA = /≈ same|ambiguous|too noisy to tell|vs \d/;
    const profileAgain = () => profileFresh(r, SQ_MUL, PROFILE_MS - 20_000);
    await r.step("profile square_mul (the first run kept)", PROFILE_MS, async () => {
      await r.command("View: Close All Editor Groups");
      await r.openFile("square.py");
      await r.gotoLine(await r.lineIn("square.py", SQ_MUL));
      const row = await profileAgain();
      r.log(`    summary: ${row.text}`);
    });
    await r.step(
      "edit its body (x * x * x), profile again: the lenses compare with the run before",
      PROFILE_MS,
      async () => {
        const source = r.editorIn("square.py");
        await r.clickInLine(BODY, "x * x", source);
        await r.page.keyboard.press("End");
        await r.page.keyboard.type(" * x");
        await r.until(
          "the edited line in the editor",
          async () => (await r.visibleLines(source)).find((l) => l.trim() === EDITED),
          10_000,
        );
        await profileAgain();
        const row = await r.waitLensAbove(SQ_MUL, DELTA, 10_000);
        r.log(`    summary: ${row.text}`);
        const line = await r.waitLensAbove(EDITED, /1 → 2 ops/, 10_000);
        r.log(`    line: ${line.text}`);
        await r.shot("history-delta-lens");
      },
    );
    await r.step("the Report's History tab: a chart and one row per run", 60_000, async () => {
      await r.clickLensAbove(SQ_MUL, /^Report$/);
      await r.until(
        `a "${PANEL}" editor`,
        async () => ((await r.groupTitles()).includes(PANEL) ? true : null),
        15_000,
      );
      const report = await r.waitWebview(
        "the report of square_mul",
        (v) => v.mode === "report" && v.title === "square_mul",
        30_000,
      );
      await report.frame.getByRole("tab", { name: "History" }).click();
      const view = await r.waitWebview(
        "the History tab with its runs",
        (v) => v.title === "square_mul" && v.tab === "History" && /runs? kept/.test(v.text),
        20_000,
      );
      const rows = await view.frame.locator("table.history-table tbody tr").allInnerTexts();
      const norm = rows.map((t) => t.replace(/\s+/g, " ").trim());
      r.log(`    ${norm.length} runs: ${norm.join(" | ")}`);
      assert(norm.length >= 2, `${norm.length} runs in the History tab`);
      assert(
        norm.slice(0, -1).every((t) => /≈ same|ambiguous|too noisy to tell|vs /.test(t)),
        `a run without its verdict: ${JSON.stringify(norm)}`,
      );
      assert(/first run/.test(norm[norm.length - 1] ?? ""), "the oldest run is not the first");
      const dots = await view.frame.locator("svg.history-chart circle").count();
      assert(dots === norm.length, `${dots} points on the chart for ${norm.length} runs`);
      await r.parkMouse();
      await r.shot("history-tab");
    });
    await r.step("Compare any two runs: the oldest against the newest", 30_000, async () => {
      const view = await r.waitWebview("the History tab", (v) => v.tab === "History");
      const picker = view.frame.getByRole("combobox", { name: "Compare against run" });
      const ids = await picker.locator("option").evaluateAll((o) => o.map((x) => x.value));
      const oldest = ids[ids.length - 1];
      await picker.selectOption(oldest);
      await view.frame
        .locator("table.history-table tbody tr")
        .first()
        .getByRole("button", { name: "Compare" })
        .click();
      const shown = await r.waitWebview(
        "the comparison of the newest run against the oldest",
        (v) =>
          v.tab === "History" &&
          // `against run 1`, or `against baseline (run 1)`: the run named once (issue 41)
          new RegExp(`Run ${ids[0]} against (run ${oldest}\\b|.*\\(run ${oldest}\\))`).test(v.text),
        15_000,
      );
      r.log(`    ${shown.text.match(/Run \d+ against[^\n]*/)?.[0] ?? ""}`);
      await r.shot("history-compare");
    });
    await r.step("Diff on the oldest run: VS Code's diff editor, run ↔ now", 30_000, async () => {
      const view = await r.waitWebview("the History tab", (v) => v.tab === "History");
      const oldest = view.frame.locator("table.history-table tbody tr").last();
      await oldest.getByRole("button", { name: "Diff" }).click();
      const title = await r.until(
        "a tab titled square_mul: run N ↔ now",
        async () => (await r.groupTitles()).find((t) => /^square_mul: run \d+ ↔ now$/.test(t)),
        15_000,
      );
      r.log(`    diff editor: ${title}`);
      const diff = r.page.locator(".monaco-diff-editor");
      await diff.first().waitFor({ state: "visible", timeout: 10_000 });
      // Its two sides fill in after the editor appears.
      const text = await r.until(
        "the diff editor's text",
        async () => {
          const shown = (await diff.first().innerText()).replace(/\u00a0/g, " ");
          return /def square_mul\(x\):/.test(shown) ? shown : null;
        },
        10_000,
      );
      assert(text.includes("x * x * x"), `the diff lacks the edited line: ${text.slice(0, 300)}`);
      await r.parkMouse();
      await r.shot("history-diff");
    });
    await r.step("undo the edit; close the editors", 30_000, async () => {
      await r.command("View: Focus First Editor Group");
      const source = r.editorIn("square.py");
      await r.clickInLine(EDITED, "x * x", source);
      // The typing is undone a word at a time: undo until the original body is back.
      await r.until(
        "the original body again",
        async () => {
          if ((await r.visibleLines(source)).some((l) => l.trim() === BODY)) return true;
          await r.page.keyboard.press("Control+Z");
          return null;
        },
        10_000,
        400,
      );
      const dirty = await r.page
        .locator(".tabs-container .tab.dirty .label-name", { hasText: "square.py" })
        .count();
      assert(dirty === 0, "square.py is still modified after the undo");
      await r.command("View: Close All Editor Groups");
    });
  },
};
