/** Scenario 42 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { HAS_CUDA, PROFILE_MS, assert } from "../common.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "42. a GPU-only step on a CPU machine: the whole error from its lens, the setting that fixes it one click away",
  needs: () => (HAS_CUDA ? "the step runs on a GPU machine" : null),
  async run(r) {
    const DEF = "def step(x):";
    await r.step("Profile step: the lens says it failed, clipped", PROFILE_MS, async () => {
      await r.closeEverything();
      await r.openFile("gpu_only_step.py");
      await r.clickLensAbove(DEF, /^Profile$/, 30_000);
      const lens = await r.waitLensAbove(DEF, /Profile failed: unsupported/, PROFILE_MS - 5_000);
      r.log(`    lens: ${lens.text}`);
    });
    await r.step(
      "its click: the whole message and the actions, in one dialog",
      30_000,
      async () => {
        await r.clickLensAbove(DEF, /Profile failed: unsupported/, 10_000);
        const text = await r.until("the error dialog", () => r.dialogText(), 10_000);
        r.log(`    dialog: ${text}`);
        assert(/profiling step failed \(unsupported\)/.test(text), `no title: ${text}`);
        assert(/needs an NVIDIA GPU/.test(text), `the message is not whole: ${text}`);
        for (const label of ["Run on a GPU Machine…", "Go to Line 7", "Show Output"]) {
          assert(text.includes(label), `no ${label} button: ${text}`);
        }
        await r.shot("error-dialog");
        await r.dialogButton("Run on a GPU Machine…");
      },
    );
    await r.step(
      "the button opens kernelLens.agentCommand in the Settings editor",
      30_000,
      async () => {
        const found = await r.until(
          "the Settings editor on kernelLens.agentCommand",
          async () => {
            const body = await r.page.locator(".settings-editor").first();
            if (!(await body.isVisible().catch(() => false))) return null;
            const text = (await body.innerText()).replace(/\s+/g, " ");
            return /Agent Command/.test(text) ? text : null;
          },
          20_000,
        );
        r.log(`    settings: ${found.match(/Kernel Lens: Agent Command[^.]*\./)?.[0] ?? "shown"}`);
        await r.shot("error-action-setting");
        await r.closeEverything();
      },
    );
  },
};
