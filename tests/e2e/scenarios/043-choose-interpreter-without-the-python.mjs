/** Scenario 43 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { assert } from "../common.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "43. Choose Interpreter without the Python extension: the interpreters found, with their torch",
  async run(r) {
    await r.step(
      "the picker lists interpreters with their Python and torch versions",
      60_000,
      async () => {
        await r.closeEverything();
        await r.command("Kernel Lens: Choose Interpreter");
        const picker = r.page.locator(".quick-input-widget");
        const rows = await r.until(
          "interpreters in the picker",
          async () => {
            if (!(await picker.isVisible())) return null;
            const texts = await picker
              .locator(".quick-input-list .monaco-list-row")
              .allInnerTexts();
            return texts.some((t) =>
              /Python \d+\.\d+\.\d+ · (torch [\w.+]+|no torch) · (workspace|conda|PATH)/.test(t),
            )
              ? texts
              : null;
          },
          30_000,
        );
        r.log(`    ${rows.map((t) => t.replace(/\s+/g, " ")).join(" | ")}`);
        assert(
          rows.some((t) => /Browse for an interpreter/.test(t)),
          "no Browse entry",
        );
        await r.shot("choose-interpreter");
        await r.page.keyboard.press("Escape");
      },
    );
  },
};
