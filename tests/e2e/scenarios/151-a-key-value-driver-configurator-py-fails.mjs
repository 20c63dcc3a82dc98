/** Scenario 151 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import {
  DEF,
  LAYER,
  PROFILE_MS,
  SUMMARY,
  answerInputBox,
  assert,
  at1280,
  quickFix,
  rowFits,
} from "../args.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "151. a --key=value driver (configurator.py) fails on the GPU it was not given: Ctrl+. gives it --device=cpu, the driver changed from the palette",
  async run(r) {
    await r.step(
      "Take the Inputs from… kv_bench.py (palette): it needs a GPU",
      PROFILE_MS,
      async () => {
        await at1280(r);
        await r.closeEverything();
        await r.openFile(LAYER);
        await r.clickInLine(DEF, "forward");
        await r.command("Kernel Lens: Take the Inputs from…");
        const item = r.page
          .locator(".quick-input-list .monaco-list-row")
          .filter({ hasText: "kv_bench.py" })
          .first();
        await r.until("kv_bench.py in the driver picker", () => item.isVisible(), 30_000);
        await r.shot("driver-picker");
        await item.click();
        const failed = await r.waitLensAbove(DEF, /failed/, PROFILE_MS - 30_000);
        r.log(`    failed row: ${failed.text}`);
        assert(
          /^\W*inputs from kv_bench\.py/.test(failed.text),
          `the failed row does not start with its driver: ${failed.text}`,
        );
        await r.shot("kv-driver-failed");
      },
    );
    await r.step(
      "Ctrl+.: Run kv_bench.py on the CPU, prefilled with its own form",
      PROFILE_MS,
      async () => {
        await quickFix(r, "Run kv_bench.py on the CPU");
        await answerInputBox(r, "--device=cpu --compile=False", null);
        const row = await r.waitLensAbove(DEF, SUMMARY, PROFILE_MS - 30_000);
        r.log(`    row: ${row.text}`);
        assert(/inputs from kv_bench\.py --device=cpu/.test(row.text), `the row: ${row.text}`);
        const fits = await rowFits(r, DEF);
        r.log(
          `    editor right ${fits.width}; lens rights ${JSON.stringify(fits.rights.map((x) => Math.round(x.right)))}`,
        );
        await r.shot("kv-driver-on-cpu");
      },
    );
  },
};
