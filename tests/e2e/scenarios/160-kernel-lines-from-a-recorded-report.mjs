/** Scenario 160 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { HOT_LINE, KERNEL_FILE, REPORT, assert, heatBars, waitAfter } from "../kernelLines.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "160. Kernel Lines from a recorded report: shares and stalls on the kernel's lines, heat bars, the SASS hover, the sampled instructions marked",
  async run(r) {
    await r.step("Kernel Lines from the recorded report", 90_000, async () => {
      await r.hidePanel();
      await r.command("View: Close All Editor Groups");
      await r.openFile(KERNEL_FILE);
      await r.gotoLine(await r.lineIn(KERNEL_FILE, HOT_LINE), 5);
      await r.command("Kernel Lens: Kernel Lines from Nsight Compute Report…");
      const pick = r.page
        .locator(".quick-input-list .monaco-list-row")
        .filter({ hasText: REPORT })
        .first();
      await r.until(`the picker to list ${REPORT}`, () => pick.isVisible(), 15_000);
      await pick.click();
      await r.parkMouse();
      const hot = await waitAfter(
        r,
        HOT_LINE,
        /^71% of samples · long scoreboard \(waiting on memory\) · 19% of instructions · via maximum$/,
        60_000,
      );
      r.log(`    hot line: ${hot}`);
      const load = await waitAfter(r, "tmp0 = tl.load(in_ptr0", /of samples/, 5_000);
      r.log(`    load line: ${load}`);
      await r.gotoLine(await r.lineIn(KERNEL_FILE, "@triton_heuristics.pointwise("));
      const header = await waitAfter(
        r,
        "@triton_heuristics.pointwise(",
        /^⟵ Kernel lines: 341 samples · 1 every 2,048 cycles per SM sub-partition · 1 launch · 4\.16 µs per launch · hottest: line 26/,
        10_000,
      );
      r.log(`    header: ${header}`);
      await r.gotoLine(await r.lineIn(KERNEL_FILE, HOT_LINE), 5);
      const bars = await r.until(
        "heat bars in the gutter",
        async () => {
          const n = await heatBars(r.editor());
          return n >= 5 ? n : null;
        },
        10_000,
      );
      r.log(`    heat bars: ${bars}`);
      await r.shot("kernel-lines");
    });
    await r.step("the hot line's hover: its SASS with samples", 30_000, async () => {
      await r.hoverOn(HOT_LINE, "maximum");
      const hover = await r.until(
        "the kernel-line hover",
        async () => {
          const text = await r.hoverText();
          return text !== null && /FSETP\.GEU\.AND P0/.test(text) ? text : null;
        },
        15_000,
      );
      assert(/239/.test(hover), `the hover lacks the 239 samples: ${hover.slice(0, 300)}`);
      assert(/Folded here from maximum/.test(hover), `no helper named: ${hover.slice(0, 300)}`);
      r.log(`    hover: ${hover.split("\n").slice(0, 3).join(" / ")}`);
      await r.shot("kernel-lines-hover");
      await r.parkMouse();
      await r.page.keyboard.press("Escape");
    });
    await r.step("Show Sampled SASS: the hot instruction marked", 30_000, async () => {
      await r.command("Kernel Lens: Show Sampled SASS");
      const sass = r.editorIn(/\.sass$/);
      await sass.locator(".view-lines").waitFor({ timeout: 15_000 });
      const mark = await waitAfter(
        r,
        "FSETP.GEU.AND P0, PT, R2, RZ, PT",
        /^◀ 239 samples \(70%\) · line 26$/,
        15_000,
        sass,
      );
      r.log(`    mark: ${mark}`);
      await r.shot("kernel-lines-sass");
    });
  },
};
