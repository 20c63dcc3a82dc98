/** Scenario 152 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { DEF, LAYER, PROFILE_MS, assert, at1280, rowFits } from "../args.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "152. the driver and its arguments are kept after Reload Window",
  async run(r) {
    await r.step(
      "Reload Window, then args_layer.py: still from kv_bench.py --device=cpu",
      150_000,
      async () => {
        await at1280(r);
        await r.reloadWindow();
        await r.openFile(LAYER);
        const row = await r.waitLensAbove(DEF, /inputs from kv_bench\.py --device=cpu/, 90_000);
        r.log(`    row after reload: ${row.text}`);
        // the driver is on screen at 1280 px with the explorer open (element bounds)
        const fits = await rowFits(r, DEF);
        const driver = fits.rights.find((x) => /inputs from/.test(x.text));
        r.log(
          `    editor right ${Math.round(fits.width)}; driver lens right ${Math.round(driver?.right ?? -1)}`,
        );
        assert(
          driver !== undefined && driver.right <= fits.width,
          `the driver lens is cut: ${JSON.stringify(fits)}`,
        );
        await r.shot("driver-after-reload");
        await r.clickLensAbove(DEF, /Re-profile|^Profile$/, 30_000);
        const again = await r.until(
          "the row profiled again",
          async () => {
            const now = await r.lensesAbove(DEF);
            // a narrow row may fold the summary's tail into its hover (lensFit): its time and
            // spread stay first
            const timed = now && /\d (ms|µs) ±[\d.]+%/.test(now.text);
            return timed && now.text !== row.text ? now.text : null;
          },
          PROFILE_MS - 60_000,
        );
        // the driver's lens may be the row's longest and so the one shortened (its arguments
        // then in its hover): its script is named either way
        assert(
          /inputs from kv_bench\.py( --device=cpu|…)/.test(again),
          `lost its driver: ${again}`,
        );
        r.log(`    profiled again: ${again}`);
      },
    );
  },
};
