/** Scenario 2 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { PROFILE_MS, SUMMARY } from "../common.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "2. hovers: x**2 names aten::pow; an unprofiled function offers Profile",
  async run(r) {
    await r.step("hover the x**2 expression", 30_000, async () => {
      await r.page.keyboard.press("Escape");
      await r.hoverOn("c = x**2", "**");
      const text = await r.until(
        "a hover naming aten::pow",
        async () => {
          const hover = await r.hoverText();
          return hover?.includes("aten::pow") ? hover : null;
        },
        15_000,
      );
      r.log(`    hover: ${text.replace(/\s+/g, " ").slice(0, 200)}`);
      await r.shot("hover-aten-pow");
      await r.page.mouse.move(5, 400);
      await r.page.keyboard.press("Escape");
    });
    await r.step(
      "the hover of a function not yet profiled offers a working Profile link",
      PROFILE_MS,
      async () => {
        await r.hoverOn("return x * x", "*");
        const link = r.page.locator(".monaco-hover:visible a", { hasText: "Profile square_mul" });
        await link.first().waitFor({ state: "visible", timeout: 15_000 });
        await r.shot("hover-profile-link");
        await link.first().click();
        const row = await r.waitLensAbove("def square_mul(x):", SUMMARY, PROFILE_MS - 10_000);
        await r.waitLensAbove("return x * x", /aten::mul/, 10_000);
        r.log(`    summary: ${row.text}`);
      },
    );
  },
};
