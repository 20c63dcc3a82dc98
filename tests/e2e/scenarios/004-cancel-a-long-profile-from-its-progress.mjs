/** Scenario 4 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { PROFILE_MS, SUMMARY } from "../common.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "4. cancel a long profile from its progress notification; the next profile works",
  async run(r) {
    const SLOW = "def sleep_a_minute():";
    const QUICK = "def quick_add(x):";
    await r.step("profile sleep_a_minute in slow.py", 30_000, async () => {
      await r.openFile("slow.py");
      await r.clickLensAbove(SLOW, /^Profile$/, 20_000);
      await r.waitLensAbove(SLOW, /Profiling/, 10_000);
    });
    await r.step("Cancel in the 'Profiling sleep_a_minute' notification", 30_000, async () => {
      const toast = r.page
        .locator(".notifications-toasts .notification-toast")
        .filter({ hasText: "Profiling sleep_a_minute" });
      try {
        await toast.first().waitFor({ state: "visible", timeout: 15_000 });
      } catch {
        throw new Error(
          "no notification 'Profiling sleep_a_minute' appeared; status bar: " +
            (await r.statusBarText()),
        );
      }
      await r.shot("cancellable-progress");
      await toast.first().getByRole("button", { name: "Cancel" }).click();
      const row = await r.waitLensAbove(SLOW, /Profile cancelled/, 20_000);
      r.log(`    lens: ${row.text}`);
      await r.shot("profile-cancelled");
    });
    await r.step("profile quick_add: the fresh agent answers", PROFILE_MS, async () => {
      await r.clickLensAbove(QUICK, /^Profile$/);
      const row = await r.waitLensAbove(QUICK, SUMMARY, PROFILE_MS - 10_000);
      await r.waitLensAbove("return x + 1", /aten::add/, 10_000);
      r.log(`    summary: ${row.text}`);
      await r.shot("after-cancel-profiled");
    });
  },
};
