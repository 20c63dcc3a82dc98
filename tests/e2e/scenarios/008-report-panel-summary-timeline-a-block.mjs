/** Scenario 8 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { PROFILE_MS, THREE_WAYS, assert, profileFresh } from "../common.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "8. Report panel: summary, timeline; a BLOCK_SIZE sweep, applied and undone",
  async run(r) {
    const PANEL = "Kernel Lens: square_three_ways";
    const reportOf = (fn) => (v) => v.mode === "report" && v.title === fn;
    await r.step(
      "the Report lens above square_three_ways opens the panel",
      PROFILE_MS,
      async () => {
        await r.openFile("square.py");
        await r.gotoLine(await r.lineIn("square.py", THREE_WAYS));
        await r.waitLensAbove(THREE_WAYS, /Re-profile|Profile/, 20_000);
        // A fresh run (the row may show a result restored from the history, without its trace).
        const row = await profileFresh(r, THREE_WAYS, PROFILE_MS - 30_000);
        r.log(`    summary: ${row.text}`);
        await r.clickLensAbove(THREE_WAYS, /^Report$/);
        await r.until(
          `a "${PANEL}" editor beside square.py`,
          async () => {
            const t = await r.groupTitles();
            return t.length >= 2 && t.includes("square.py") && t.includes(PANEL) ? t : null;
          },
          15_000,
        );
      },
    );
    await r.step("Summary tab: the per-line table names aten::mul", 30_000, async () => {
      const view = await r.waitWebview(
        "the report of square_three_ways with its per-line table",
        (v) => reportOf("square_three_ways")(v) && /aten::mul/.test(v.text),
        25_000,
      );
      assert(view.tab === "Summary", `the report opened on "${view.tab}", not Summary`);
      const rows = await view.frame.locator("table.lines tbody tr").allInnerTexts();
      const norm = rows.map((t) => t.replace(/\s+/g, " ").trim());
      r.log(`    ${norm.length} rows: ${norm.join(" | ")}`);
      for (const [line, op] of [
        ["torch.square(x)", "aten::square"],
        ["x * x", "aten::mul"],
        ["x**2", "aten::pow"],
      ]) {
        assert(
          norm.some((t) => t.includes(line) && t.includes(op)),
          `no row with ${line} → ${op}: ${JSON.stringify(norm)}`,
        );
      }
      await r.parkMouse();
      await r.shot("report-summary");
    });
    await r.step("Timeline tab: lanes drawn, legend shown", 30_000, async () => {
      const view = await r.waitWebview("the report", reportOf("square_three_ways"));
      await view.frame.getByRole("tab", { name: "Timeline" }).click();
      await r.parkMouse();
      const facts = await r.until(
        "the timeline's events line",
        async () => {
          const text = await view.frame.locator("section.timeline .toolbar").innerText();
          return /\d+ of \d+ events shown/.test(text) ? text.replace(/\s+/g, " ") : null;
        },
        15_000,
      );
      r.log(`    toolbar: ${facts}`);
      for (const label of ["source line", "ATen op"]) {
        assert(facts.includes(label), `the legend lacks "${label}": ${facts}`);
      }
      const box = await view.frame.locator("canvas.timeline-body").boundingBox();
      assert(
        box && box.width > 100 && box.height > 40,
        `the timeline canvas is ${JSON.stringify(box)}`,
      );
      // The lane titles are drawn on the canvas, not in the DOM.
      const drawn = await r.until(
        "a CPU thread lane title drawn on the timeline",
        async () => {
          const texts = await r.canvasText(view.frame);
          return texts.some((t) => /CPU thread \d+/.test(t)) ? texts : null;
        },
        10_000,
      );
      r.log(
        `    lane titles drawn: ${[...new Set(drawn.filter((t) => /^[▾▸] /.test(t)))].join(" | ")}`,
      );
      await r.shot("report-timeline");
    });
    const SQUARE = "def square(x, BLOCK_SIZE=";
    let best;
    await r.step(
      "Sweep BLOCK_SIZE above square in triton_square.py: the Sweep tab",
      180_000,
      async () => {
        // The panel has the focus since its tab was clicked: open the file in the first group.
        await r.command("View: Focus First Editor Group");
        await r.openFile("triton_square.py");
        await r.gotoLine(await r.lineIn("triton_square.py", SQUARE));
        await r.clickLensAbove(SQUARE, /^Sweep BLOCK_SIZE$/);
        const view = await r.waitWebview(
          "the report of square on its Sweep tab with a result",
          (v) =>
            reportOf("square")(v) &&
            v.tab === "Sweep" &&
            /Best BLOCK_SIZE = \d+|Interpreter-mode sweep of BLOCK_SIZE/.test(v.text),
          170_000,
        );
        // Without a GPU the kernel runs under Triton's interpreter: its times say nothing of a
        // GPU, so the sweep is labelled and offers no value to apply (issue 16).
        const interpreted = /Interpreter-mode sweep of BLOCK_SIZE/.test(view.text);
        const titles = await r.groupTitles();
        assert(titles.includes("Kernel Lens: square"), `the panel's title: ${titles.join(" | ")}`);
        const table = await view.frame.locator("table.sweep-table tbody tr").allInnerTexts();
        const rows = table.map((t) => t.replace(/\s+/g, " ").trim());
        r.log(`    ${rows.join(" | ")}`);
        const bestRows = await view.frame
          .locator("table.sweep-table tbody tr.best")
          .allInnerTexts();
        assert(bestRows.length === (interpreted ? 0 : 1), `${bestRows.length} rows marked best`);
        if (!interpreted) {
          best = Number(bestRows[0].trim().split(/\s+/)[0]);
          assert(/\bbest\b/.test(bestRows[0]), `the best row does not say best: ${bestRows[0]}`);
        }
        const canvas = await view.frame.locator("section.sweep canvas").boundingBox();
        assert(
          canvas && canvas.width > 100 && canvas.height > 100,
          `the chart is ${JSON.stringify(canvas)}`,
        );
        const drawn = await r.canvasText(view.frame);
        assert(
          drawn.some((t) => /BLOCK_SIZE \(log2 scale\)/.test(t)),
          `the chart's axis title was not drawn: ${JSON.stringify(drawn.slice(0, 40))}`,
        );
        if (interpreted) {
          const applies = await view.frame.getByRole("button", { name: /^Apply / }).count();
          assert(applies === 0, "an interpreter-mode sweep offers Apply");
          r.log("    interpreter-mode sweep: labelled, no Apply");
        } else {
          const apply = view.frame.getByRole("button", { name: `Apply BLOCK_SIZE = ${best}` });
          await apply.waitFor({ state: "visible", timeout: 5_000 });
          r.log(`    best BLOCK_SIZE = ${best}`);
        }
        await r.parkMouse();
        await r.shot("report-sweep");
      },
    );
    await r.step(
      "Apply BLOCK_SIZE: the default in the source changes; undo restores it",
      30_000,
      async () => {
        if (best === undefined) {
          r.log("    (an interpreter-mode sweep has nothing to apply: needs a GPU)");
          return;
        }
        const source = r.editorIn("triton_square.py");
        const view = await r.waitWebview(
          "the Sweep tab",
          (v) => reportOf("square")(v) && v.tab === "Sweep",
        );
        await view.frame.getByRole("button", { name: `Apply BLOCK_SIZE = ${best}` }).click();
        const edited = await r.until(
          `def square(x, BLOCK_SIZE=${best}) in the editor`,
          async () =>
            (await r.visibleLines(source)).find((l) =>
              l.includes(`def square(x, BLOCK_SIZE=${best}):`),
            ),
          15_000,
        );
        r.log(`    after Apply: ${edited.trim()}`);
        await r.shot("sweep-applied");
        await r.clickInLine(SQUARE, "def", source);
        await r.page.keyboard.press("Control+Z");
        const restored = await r.until(
          "def square(x, BLOCK_SIZE=1024) again",
          async () =>
            (await r.visibleLines(source)).find((l) =>
              l.includes("def square(x, BLOCK_SIZE=1024):"),
            ),
          10_000,
        );
        r.log(`    after undo: ${restored.trim()}`);
        const dirty = await r.page
          .locator(".tabs-container .tab.dirty .label-name", { hasText: "triton_square.py" })
          .count();
        assert(dirty === 0, "triton_square.py is still modified after the undo");
      },
    );
    await r.step("close the editors", 15_000, async () => {
      await r.command("View: Close All Editor Groups");
    });
  },
};
