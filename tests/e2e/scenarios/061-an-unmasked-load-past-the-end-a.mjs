/** Scenario 61 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { OOB, VALUES_MS, assert } from "../interp.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "61. an unmasked load past the end: a diagnostic on its line with program, lane and offset",
  async run(r) {
    await r.step(
      "Show Values above shift_kernel: the out-of-bounds load in Problems",
      VALUES_MS,
      async () => {
        await r.hidePanel();
        await r.command("View: Close All Editor Groups");
        await r.openFile(OOB);
        await r.clickLensAbove("def shift_kernel", /^Show Values$/, 30_000);
        await r.waitLensAbove("def shift_kernel", /1 out of bounds/, VALUES_MS - 20_000);
        await r.command("View: Focus Problems (Errors, Warnings, Infos)");
        const text = await r.until(
          "the out-of-bounds problem",
          async () => {
            const panel = await r.panelText();
            return /out-of-bounds load of in_ptr/.test(panel) ? panel.replace(/\s+/g, " ") : null;
          },
          15_000,
        );
        assert(
          /program \(3, 0, 0\) lane 1023 reads offset 4096, past its end/.test(text),
          `the problem lacks the program, lane or offset: ${text.slice(0, 400)}`,
        );
        const line = await r.lineIn(OOB, "x = tl.load(in_ptr + offs + 1)");
        assert(
          text.includes(`[Ln ${line}`),
          `the problem is not on line ${line}: ${text.slice(0, 400)}`,
        );
        r.log(`    problems: ${text.slice(0, 300)}`);
        await r.shot("values-out-of-bounds");
        await r.hidePanel();
      },
    );
  },
};
