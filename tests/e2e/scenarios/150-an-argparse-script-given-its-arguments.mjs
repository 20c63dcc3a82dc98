/** Scenario 150 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import {
  DEF,
  LAYER,
  PROFILE_MS,
  SUMMARY,
  TRAIN,
  answerInputBox,
  assert,
  at1280,
  quickFix,
} from "../args.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "150. an argparse script given its arguments once (the palette), then the driver of a layer in another file with them",
  async run(r) {
    await r.step(
      "Script Arguments… on args_train.py: typed once, it runs with them",
      PROFILE_MS,
      async () => {
        await at1280(r);
        await r.closeEverything();
        await r.openFile(TRAIN);
        await r.gotoLine(1);
        await r.command("Kernel Lens: Script Arguments… (every run of this script)");
        await answerInputBox(r, "", "--width 48");
        const row = await r.waitLensAbove(
          '"""A training script with a required argument',
          /args: --width 48/,
          PROFILE_MS - 20_000,
        );
        r.log(`    script row: ${row.text}`);
        await r.waitLensAbove(
          '"""A training script with a required argument',
          /script · .* wall/,
          PROFILE_MS - 20_000,
        );
        await r.shot("args-script-ran");
      },
    );
    await r.step(
      "the layer's quick fix takes the inputs from args_train.py with --width 48",
      PROFILE_MS,
      async () => {
        await r.openFile(LAYER);
        await r.clickLensAbove(DEF, /^Profile$/, 30_000);
        await r.waitLensAbove(DEF, /Profile failed: inputs/, PROFILE_MS - 30_000);
        await quickFix(
          r,
          "Take the inputs from args_train.py --width 48 (args_train.py → args_layer.py)",
        );
        const row = await r.waitLensAbove(DEF, SUMMARY, PROFILE_MS - 30_000);
        r.log(`    row: ${row.text}`);
        assert(
          /inputs from args_train\.py --width 48/.test(row.text),
          `no driver in the row: ${row.text}`,
        );
        await r.shot("args-driver-with-arguments");
      },
    );
  },
};
