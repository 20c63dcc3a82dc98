/** Scenario 46 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "46. a training script that never ends: its progress says where it is; Cancel keeps the part that ran",
  async run(r) {
    await r.step(
      "Profile Script: the progress names the line and the seconds",
      60_000,
      async () => {
        await r.closeEverything();
        await r.openFile("train_forever.py");
        await r.clickLensAbove('"""A training loop', /Profile Script/, 30_000);
        const toast = r.page
          .locator(".notifications-toasts .notification-toast")
          .filter({ hasText: /line \d+ of train_forever\.py · \d+ s/ });
        await toast.first().waitFor({ state: "visible", timeout: 45_000 });
        r.log(`    progress: ${(await toast.first().innerText()).replace(/\s+/g, " ")}`);
        await r.shot("script-progress");
      },
    );
    await r.step("Cancel: the lens keeps the part that ran, labelled partial", 60_000, async () => {
      await r.until(
        "a few seconds of the run",
        async () => {
          const t = (await r.toastTexts()).find((x) =>
            /train_forever\.py · ([3-9]|\d\d) s/.test(x),
          );
          return t ?? null;
        },
        30_000,
      );
      const toast = r.page
        .locator(".notifications-toasts .notification-toast")
        .filter({ hasText: /train_forever\.py/ });
      await toast.first().getByRole("button", { name: "Cancel" }).click();
      // The seconds the run takes to stop are not silent (issue 41).
      const cancelling = await r.until(
        "a 'Cancelling' notification",
        async () => (await r.toastTexts()).find((t) => /Cancelling — /.test(t)),
        5_000,
      );
      r.log(`    ${cancelling}`);
      await r.shot("script-cancelling");
      const row = await r.waitLensAbove(
        '"""A training loop',
        /partial: the first .* cancelled/,
        45_000,
      );
      r.log(`    lens: ${row.text}`);
      const line = await r.waitLensAbove(
        "loss.backward()",
        /backward pass|AccumulateGrad|autograd|\d+%|µs|ms/,
        15_000,
      );
      r.log(`    backward line: ${line.text}`);
      await r.shot("script-cancelled-partial");
    });
  },
};
