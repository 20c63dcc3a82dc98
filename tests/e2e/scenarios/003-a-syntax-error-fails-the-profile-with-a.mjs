/** Scenario 3 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { PROFILE_LINK, PROFILE_MS, SQUARE_POW, SUMMARY } from "../common.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "3. a syntax error fails the profile with a diagnostic; fixed, it profiles",
  async run(r) {
    const line = await r.lineIn("square.py", SQUARE_POW);
    await r.step("delete the ':' of def square_pow", 30_000, async () => {
      await r.gotoLine(line, SQUARE_POW.length + 1);
      await r.page.keyboard.press("End");
      await r.page.keyboard.press("Backspace");
      await r.waitLensAbove("def square_pow(x)", /syntax error/, 20_000);
      await r.shot("syntax-error-typed");
    });
    await r.step(
      "Kernel Lens: Profile Function at Cursor fails with 'syntax'",
      30_000,
      async () => {
        await r.command("Kernel Lens: Profile Function at Cursor");
        const row = await r.waitLensAbove("def square_pow(x)", /Profile failed: syntax/, 20_000);
        r.log(`    lens: ${row.text}`);
      },
    );
    await r.step("the Problems panel shows the error", 30_000, async () => {
      await r.command("View: Focus Problems (Errors, Warnings, Infos)");
      const text = await r.until(
        "a Kernel Lens syntax problem",
        async () => {
          const panel = await r.panelText();
          return /Profile failed \(syntax\)/.test(panel) ? panel : null;
        },
        15_000,
      );
      r.log(`    problems: ${text.replace(/\s+/g, " ").slice(0, 200)}`);
      await r.shot("syntax-error-problems");
    });
    await r.step("undo the edit and profile square_pow from its lens", PROFILE_MS, async () => {
      await r.gotoLine(line);
      await r.page.keyboard.press("Control+Z");
      await r.waitLensAbove(SQUARE_POW, PROFILE_LINK, 20_000);
      await r.clickLensAbove(SQUARE_POW, /^Profile$/);
      await r.waitLensAbove(SQUARE_POW, SUMMARY, PROFILE_MS - 10_000);
      await r.waitLensAbove("return x**2", /aten::pow/, 10_000);
      await r.until(
        "the syntax problem to clear",
        async () => !/Profile failed \(syntax\)/.test(await r.panelText()),
        10_000,
      );
      await r.shot("syntax-fixed-profiled");
    });
  },
};
