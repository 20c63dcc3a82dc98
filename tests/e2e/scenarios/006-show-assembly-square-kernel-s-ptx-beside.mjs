/** Scenario 6 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { assert } from "../common.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "6. Show Assembly: square_kernel's PTX beside the source, lines linked both ways",
  async run(r) {
    const JIT = "@triton.jit";
    const LOAD = "x = tl.load(";
    const STORE = "tl.store(out_ptr";
    const ptx = r.editorIn(/\.ptx$/);
    const source = r.editorIn("triton_square.py");
    await r.step(
      "Show Assembly above square_kernel: a stage picker, PTX preselected",
      60_000,
      async () => {
        await r.hidePanel();
        await r.openFile("triton_square.py");
        await r.gotoLine(await r.lineIn("triton_square.py", "def square(x, BLOCK_SIZE"));
        await r.clickLensAbove(JIT, /^Show Assembly$/, 30_000);
        const picker = r.page.locator(".quick-input-widget");
        const seen = await r.until(
          "the stage picker of square_kernel",
          async () => {
            if (!(await picker.isVisible())) return null;
            const title = await picker.locator(".quick-input-title").innerText();
            const labels = await picker
              .locator(".quick-input-list .monaco-list-row .label-name")
              .allInnerTexts();
            const active = await picker
              .locator(".quick-input-list .monaco-list-row.focused .label-name")
              .allInnerTexts();
            return /Show Assembly of square_kernel/.test(title) && labels.length > 0
              ? { title, labels, active }
              : null;
          },
          15_000,
        );
        r.log(`    picker: ${seen.title}: ${seen.labels.join(", ")}; active: ${seen.active}`);
        for (const stage of ["TTIR", "TTGIR", "LLIR", "PTX", "SASS"]) {
          assert(seen.labels.includes(stage), `the stage picker lacks ${stage}: ${seen.labels}`);
        }
        assert(
          seen.active.length === 1 && seen.active[0] === "PTX",
          `PTX is not the preselected stage: ${JSON.stringify(seen.active)}`,
        );
        await r.shot("assembly-stage-picker");
        await r.page.keyboard.press("Enter");
      },
    );
    await r.step(
      "the PTX opens in a second editor group; the lens counts registers",
      120_000,
      async () => {
        const titles = await r.until(
          "an editor group showing square_kernel.ptx beside triton_square.py",
          async () => {
            const t = await r.groupTitles();
            return t.length >= 2 &&
              t.includes("triton_square.py") &&
              t.includes("square_kernel.ptx")
              ? t
              : null;
          },
          110_000,
        );
        r.log(`    editor groups: ${titles.join(" | ")}`);
        const top = await r.until(
          "the PTX text",
          async () => {
            const lines = await r.visibleLines(ptx);
            return lines.some((l) => /^\.target sm_\d+/.test(l.trim())) ? lines : null;
          },
          15_000,
        );
        r.log(`    ${top.find((l) => /\.target/.test(l)).trim()}`);
        const lens = await r.waitLensAbove(JIT, /PTX · \d+ regs · 0 spills · sm_\d+/, 15_000);
        r.log(`    lens: ${lens.text}`);
        await r.shot("assembly-ptx");
      },
    );
    await r.step(
      "cursor on the tl.load line: the PTX's ld.global lines light up",
      30_000,
      async () => {
        const before = await r.linkedLines(ptx);
        assert(
          !before.some((l) => /ld\.global/.test(l)),
          `an ld.global line was highlighted before the cursor moved: ${JSON.stringify(before)}`,
        );
        await r.clickInLine(LOAD, "tl.load", source);
        const lit = await r.until(
          "highlighted ld.global lines in the PTX",
          async () => {
            const lines = await r.linkedLines(ptx);
            return lines.some((l) => /ld\.global/.test(l)) ? lines : null;
          },
          10_000,
        );
        r.log(
          `    ${lit.length} highlighted PTX lines in sight, e.g. ${lit.find((l) => /ld\.global/.test(l)).trim()}`,
        );
        assert(
          !lit.some((l) => /st\.global/.test(l)),
          `the tl.load line highlights a store: ${JSON.stringify(lit)}`,
        );
        await r.shot("assembly-linked-source-to-ptx");
      },
    );
    await r.step(
      "cursor on an st.global line of the PTX: the tl.store line lights up",
      30_000,
      async () => {
        // Selecting the store line highlights its lines in the PTX and reveals the first; the
        // st.global lines further down may need a scroll.
        await r.clickInLine(STORE, "tl.store", source);
        await r.until(
          "highlighted st.global lines in the PTX",
          async () => {
            if ((await r.linkedLines(ptx)).some((l) => /st\.global/.test(l))) return true;
            if ((await r.visibleLines(ptx)).some((l) => /st\.global/.test(l))) return false;
            await r.scroll(ptx, 120);
            return false;
          },
          10_000,
          300,
        );
        assert(
          (await r.linkedLines(source)).length === 0,
          "the source has highlighted lines before a PTX line was selected",
        );
        await r.clickInLine("st.global", "st.global", ptx);
        const lit = await r.until(
          "the tl.store line highlighted in the source",
          async () => {
            const lines = await r.linkedLines(source);
            return lines.length > 0 ? lines : null;
          },
          10_000,
        );
        r.log(`    source lines highlighted: ${lit.map((l) => l.trim()).join(" | ")}`);
        assert(
          lit.length === 1 && lit[0].includes(STORE),
          `an st.global line should highlight the tl.store line only: ${JSON.stringify(lit)}`,
        );
        const status = await r.statusBarText();
        assert(/PTX · sm_\d+/.test(status), `no PTX facts in the status bar: ${status}`);
        r.log(`    status bar: ${status.match(/PTX · [^]*?spill\w*/)?.[0] ?? status}`);
        await r.shot("assembly-linked-ptx-to-source");
      },
    );
    await r.step("close the PTX editor", 15_000, async () => {
      await r.command("View: Close All Editor Groups");
    });
  },
};
