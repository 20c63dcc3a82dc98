/** Scenario 5 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { assert, findFiles } from "../common.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "5. the Kernel Lens output channel shows the run's log",
  async run(r) {
    await r.step("Kernel Lens: Show Output", 30_000, async () => {
      await r.command("Kernel Lens: Show Output");
      const text = await r.until(
        "the output panel showing the Kernel Lens log",
        async () => {
          const panel = await r.panelText();
          return /\[timing\]/.test(panel) && /\[done\]/.test(panel) ? panel : null;
        },
        15_000,
      );
      const selected = await r.page
        .locator(".part.panel .monaco-select-box")
        .first()
        .evaluate((s) => s.selectedOptions?.[0]?.textContent ?? s.title ?? "")
        .catch(() => "");
      r.log(`    channel: ${selected}`);
      assert(/Kernel Lens/.test(selected), `the output panel shows "${selected}", not Kernel Lens`);
      r.log(`    last lines: ${text.trim().split("\n").slice(-3).join(" | ")}`);
      await r.shot("output-channel");
    });
    await r.step("the channel's log holds the whole session", 10_000, async () => {
      const files = await findFiles(path.join(r.dataDir, "logs"), (f) => /Kernel Lens/.test(f));
      assert(files.length > 0, `no "Kernel Lens" log under ${r.dataDir}/logs`);
      const log = (await Promise.all(files.map((f) => readFile(f, "utf8")))).join("\n");
      for (const needle of ["profile square_three_ways", "[timing]", "[done]"]) {
        assert(log.includes(needle), `the Kernel Lens log lacks "${needle}" (${files.join(", ")})`);
      }
      r.logFiles = files;
    });
  },
};
