/** Scenario 48 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { existsSync } from "node:fs";
import path from "node:path";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "48. an interpreter without torch, then fixed: the first-run notification goes with the problem",
  async run(r) {
    const { mkdir, writeFile } = await import("node:fs/promises");
    const folder = path.join(r.workspace, ".vscode");
    const settings = path.join(folder, "settings.json");
    const bare = ["/usr/bin/python3", "/bin/python3"].find((p) => existsSync(p));
    if (bare === undefined) throw new Error("no system python3 without torch on this machine");
    await mkdir(folder, { recursive: true });
    try {
      await r.step(
        `kernelLens.python = ${bare}: the notification names what is missing`,
        90_000,
        async () => {
          await r.closeEverything();
          await writeFile(settings, JSON.stringify({ "kernelLens.python": bare }, null, 2));
          const toast = await r.until(
            "the first-run notification",
            async () =>
              (await r.toastTexts()).find((t) =>
                /has (neither torch|no torch)|not installed in/.test(t),
              ) ?? null,
            80_000,
          );
          r.log(`    notification: ${toast}`);
          await r.shot("first-run-notification");
        },
      );
      await r.step(
        "the setting removed: the server starts and the notification is gone",
        120_000,
        async () => {
          await writeFile(settings, "{}\n");
          await r.until(
            "the server running again and the notification withdrawn",
            async () => {
              const stale = (await r.toastTexts()).some((t) =>
                /has (neither torch|no torch)|not installed in/.test(t),
              );
              const status = await r.statusBarText();
              return !stale && /Kernel Lens/.test(status) && !/unavailable/i.test(status)
                ? status
                : null;
            },
            110_000,
            500,
          );
          await r.shot("first-run-fixed");
        },
      );
    } finally {
      await writeFile(settings, "{}\n");
    }
  },
};
