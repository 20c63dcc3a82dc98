/** Scenario 170 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { HAS_CUDA, PROFILE_MS, assert } from "../common.mjs";
import { standalone } from "../walk41.mjs";

const FILE = "lecture_square.py";
const FIRST = '"""Shaped like GPU MODE';
const COMMAND =
  "Kernel Lens: Profile Script (Light): every line's kernel time for a whole run (CUDA)";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "170. Profile Script (Light): beside Profile Script, in its More… and the palette; without a CUDA GPU it says so and offers Profile Script",
  async run(r) {
    await r.step("a trusted workspace (standalone: open it and trust it)", 120_000, () =>
      standalone(r),
    );
    await r.step("Light and More… beside Profile Script", 90_000, async () => {
      await r.closeEverything();
      await r.openFile(FILE);
      await r.gotoLine(1);
      // Light beside Profile Script before a run; More… beside Re-run Script after one (30)
      const row = await r.waitLensAbove(
        FIRST,
        /Profile Script.*Light.*More…|Re-run Script.*More…/,
        60_000,
      );
      r.log(`    script row: ${row.text}`);
      await r.clickLensAbove(FIRST, /^More…$/, 10_000);
      const items = await r.until(
        "the script's More… quick pick",
        async () => {
          const texts = await r.page.locator(".quick-input-list .monaco-list-row").allInnerTexts();
          const flat = texts.map((t) => t.replace(/\s+/g, " "));
          // (a row is filled in after it is added: wait for both)
          const light = flat.some((t) => /Profile Script \(Light\).*no op names/.test(t));
          const window = flat.some((t) => t.includes("Deep Trace of a Window…"));
          return light && window ? flat : null;
        },
        10_000,
      );
      r.log(`    More…: ${items.join(" | ")}`);
      await r.shot("light-more");
      // The deep trace of a window, from More…: the window command's own question, for this file
      await r.page
        .locator(".quick-input-list .monaco-list-row")
        .filter({ hasText: "Deep Trace of a Window…" })
        .first()
        .click();
      const asked = await r.until(
        "the window's input box",
        async () => {
          const title = r.page.locator(".quick-input-widget .quick-input-title");
          const text = (await title.isVisible()) ? await title.innerText() : "";
          return /a window of the script's run/.test(text) ? text : null;
        },
        10_000,
      );
      r.log(`    window: ${asked}`);
      await r.shot("light-more-window");
      await r.page.keyboard.press("Escape");
    });
    await r.step(
      "the palette's Profile Script (Light) without a CUDA GPU: said, and Profile Script offered",
      PROFILE_MS + 60_000,
      async () => {
        if (HAS_CUDA) {
          r.log("    (skipped: a CUDA GPU is here; tests/gpu/test_gpu_light_lsp.py runs it)");
          return;
        }
        await r.command(COMMAND);
        const said = await r.until(
          "the no-CUDA message",
          async () => (await r.toastTexts()).find((t) => /needs a CUDA GPU/.test(t)) ?? null,
          PROFILE_MS,
        );
        r.log(`    toast: ${said}`);
        assert(/Profile Script Instead/.test(said), `no Profile Script offered: ${said}`);
        const row = await r.waitLensAbove(FIRST, /Light profile: needs a CUDA GPU/, 15_000);
        r.log(`    script row: ${row.text}`);
        await r.shot("light-no-cuda");
        await r.page
          .locator(".notifications-toasts .notification-toast")
          .filter({ hasText: /needs a CUDA GPU/ })
          .first()
          .getByRole("button", { name: "Profile Script Instead" })
          .click();
        await r.parkMouse();
        const deep = await r.waitLensAbove(FIRST, /script · .* wall, one run/, PROFILE_MS);
        r.log(`    after Profile Script: ${deep.text}`);
        assert(!/Light profile/.test(deep.text), `the light failure stayed: ${deep.text}`);
        await r.shot("light-then-profile-script");
      },
    );
  },
};
