/** Scenario 153 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { DEF, LAYER, SUMMARY, assert, at1280 } from "../args.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "153. a baseline is pinned only explicitly: the summary's time is text; Set as Baseline toasts with Undo",
  async run(r) {
    await r.step("a click on the summary's time pins nothing", 60_000, async () => {
      await at1280(r);
      await r.openFile(LAYER);
      const row = await r.waitLensAbove(DEF, SUMMARY, 30_000);
      const found = await r.lensesAbove(DEF);
      assert(
        !found.links.some((l) => SUMMARY.test(l.text)),
        `the summary is still a link: ${JSON.stringify(found.links)}`,
      );
      await r
        .editor()
        .locator(".codelens-decoration span")
        .filter({ hasText: /ms ±/ })
        .first()
        .click({ force: true });
      await r.page.waitForTimeout(1_500);
      const toasts = await r.toastTexts();
      assert(!toasts.some((t) => /baseline/.test(t)), `a click pinned: ${JSON.stringify(toasts)}`);
      const after = await r.lensesAbove(DEF);
      assert(
        !/pinned|baseline/.test(after.text),
        `pinned by a click: ${after.text} (was ${row.text})`,
      );
    });
    await r.step("More… → Set as Baseline: a toast with Undo; Undo unpins", 60_000, async () => {
      await r.clickLensAbove(DEF, /^More…$/);
      const item = r.page
        .locator(".quick-input-list .monaco-list-row")
        .filter({ hasText: "Set as Baseline" })
        .first();
      await r.until("Set as Baseline in More…", () => item.isVisible(), 10_000);
      await item.click();
      const toast = r.page
        .locator(".notifications-toasts .notification-toast")
        .filter({ hasText: "is its baseline" });
      await toast.first().waitFor({ state: "visible", timeout: 20_000 });
      await r.waitLensAbove(DEF, /baseline/, 20_000);
      await r.shot("baseline-pinned-toast");
      await toast.first().getByRole("button", { name: "Undo" }).click();
      await r.until(
        "the toast saying the baseline is undone",
        async () => (await r.toastTexts()).some((t) => /no baseline again/.test(t)) || null,
        20_000,
      );
      await r.until(
        "the row without the baseline",
        async () => !/baseline/.test((await r.lensesAbove(DEF))?.text ?? "baseline") || null,
        20_000,
      );
      await r.shot("baseline-undone");
    });
  },
};
