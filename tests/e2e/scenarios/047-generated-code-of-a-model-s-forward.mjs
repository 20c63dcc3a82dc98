/** Scenario 47 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { assert } from "../common.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "47. Generated Code of a model's forward whose inputs come from the script's own run",
  async run(r) {
    await r.step(
      "Show Generated Code with the cursor in MLP.forward (captured inputs)",
      240_000,
      async () => {
        await r.closeEverything();
        await r.openFile("train_step.py");
        await r.gotoLine((await r.lineIn("train_step.py", "h = self.fc1(x)")) + 0);
        await r.command("Kernel Lens: Show Generated Code");
        const titles = await r.until(
          "an editor group showing MLP.forward's generated code",
          async () => {
            const t = await r.groupTitles();
            return t.some((x) => /MLP\.forward\.compiled\.py$/.test(x)) ? t : null;
          },
          230_000,
          500,
        );
        r.log(`    editor groups: ${titles.join(" | ")}`);
        const toasts = await r.toastTexts();
        assert(!toasts.some((t) => /has no attribute/.test(t)), `an error: ${toasts.join(" / ")}`);
        await r.shot("generated-code-captured-inputs");
        await r.closeEverything();
      },
    );
  },
};
