/** Scenario 164 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { afterTexts, assert, waitAfter } from "../kernelLines.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "164. the blame from a recorded report: the strided load's line causes the stalls the store's line shows, and the assembly links them",
  async run(r) {
    const FILE = "tl_strided.py";
    const STRIDED = "y = tl.load(y_ptr + offs * STRIDE, mask=mask)";
    const STORE = "tl.store(out_ptr + offs, x + y, mask=mask)";
    await r.step("Kernel Lines from the recorded report, blamed", 90_000, async () => {
      await r.hidePanel();
      await r.command("View: Close All Editor Groups");
      await r.openFile(FILE);
      await r.gotoLine(await r.lineIn(FILE, STRIDED), 5);
      await r.command("Kernel Lens: Kernel Lines from Nsight Compute Report…");
      const pick = r.page
        .locator(".quick-input-list .monaco-list-row")
        .filter({ hasText: "tl_strided.ncu-rep" })
        .first();
      await r.until("the picker to list tl_strided.ncu-rep", () => pick.isVisible(), 15_000);
      await pick.click();
      await r.parkMouse();
      // both figures: where the warps waited (few samples here) and what they waited for
      const strided = await waitAfter(
        r,
        STRIDED,
        /^causes [89]\d% of stalls · global load, 32 sectors per request \(uncoalesced; ideal 4\) · \d+% of samples/,
        60_000,
      );
      r.log(`    strided load: ${strided}`);
      const store = await waitAfter(r, STORE, /9\d% of samples · drain/, 5_000);
      r.log(`    store: ${store}`);
      assert(!/causes [5-9]\d% of stalls/.test(store), `the store line causes: ${store}`);
      await r.shot("kernel-lines-blame");
    });
    await r.step("the assembly links the waiting instruction and its culprit", 30_000, async () => {
      await r.command("Kernel Lens: Show Sampled SASS");
      const sass = r.editorIn(/\.sass$/);
      await sass.locator(".view-lines").waitFor({ timeout: 15_000 });
      const marks = await r.until(
        "the blame's marks",
        async () => {
          const found = await afterTexts(sass);
          const culprit = found.find((t) => /causes [\d,]+ stalls: global load/.test(t.after));
          const waiter = found.find((t) => /waits on 0x[0-9a-f]{4}/.test(t.after));
          return culprit && waiter ? { culprit, waiter } : null;
        },
        15_000,
      );
      r.log(`    culprit: ${marks.culprit.after}`);
      r.log(`    waiter: ${marks.waiter.after}`);
      await r.shot("kernel-lines-blame-sass");
    });
  },
};
