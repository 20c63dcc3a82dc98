/** Scenario 70 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import path from "node:path";
import { PROFILE_MS, assert } from "../common.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "70. a model from an installed package: Attribute inside it, then its file shows its lines",
  async run(r) {
    const FILE = "tiny_train.py";
    const CALL = "out = model(x)";
    const OFFER = /% inside tinymodel · Attribute inside tinymodel/;
    await r.step(
      "Profile Script: the call line says its time is inside tinymodel",
      PROFILE_MS,
      async () => {
        await r.closeEverything();
        await r.openFile(FILE);
        await r.clickLensAbove("import torch", /Profile Script/, 30_000);
        const offer = await r.waitLensAbove(CALL, OFFER, PROFILE_MS - 15_000);
        r.log(`    call line: ${offer.text}`);
        await r.shot("package-offer");
      },
    );
    await r.step(
      "Attribute inside tinymodel: run again, offered for the settings",
      PROFILE_MS,
      async () => {
        await r.clickLensAbove(CALL, OFFER, 15_000);
        const toast = await r.until(
          "the offer to add tinymodel to the setting",
          async () =>
            (await r.toastTexts()).find((t) => /attribute inside tinymodel in every run/.test(t)) ??
            null,
          20_000,
        );
        r.log(`    notification: ${toast}`);
        await r.shot("package-rerun");
      },
    );
    await r.step(
      "the package's file (opened by path): its lines, read-only",
      PROFILE_MS,
      async () => {
        const layers = path.join(
          r.workspace,
          "..",
          "env",
          "site-packages",
          "tinymodel",
          "layers.py",
        );
        await r.command("File: Open File...");
        const input = r.page.locator(".quick-input-widget input").first();
        // The simple file dialog fills in its folder once it has read it: type the path after
        // that (and again if it was overwritten) before pressing Enter.
        await r.until(
          "the Open File dialog with the path typed",
          async () => {
            if ((await input.inputValue()) === layers) return true;
            if ((await input.inputValue()) !== "") await input.fill(layers);
            return null;
          },
          15_000,
          300,
        );
        await input.press("Enter");
        // VS Code's own question for a file outside the trusted folder: opened (as Go to
        // Definition into site-packages asks it too).
        const asked = await r
          .until(
            "VS Code's question about a file outside the workspace",
            () => r.dialogText(),
            5_000,
          )
          .catch(() => null);
        if (asked !== null) {
          r.log(`    VS Code asks: ${asked.replace(/\s+/g, " ").slice(0, 100)}`);
          await r.shot("package-file-untrusted-question");
          await r.dialogButton("Open");
        }
        await r.page
          .locator(".tabs-container .tab.active", { hasText: "layers.py" })
          .waitFor({ timeout: 15_000 });
        // (the lenses come once the run started from tiny_train.py has ended)
        const head = await r.waitLens(
          /tinymodel \(read-only\) · from tiny_train\.py/,
          PROFILE_MS - 30_000,
        );
        r.log(`    header: ${head}`);
        const proj = await r.waitLensAbove("h = self.proj(x)", /linear/, 15_000);
        r.log(`    h = self.proj(x): ${proj.text}`);
        const texts = await r.lensTexts();
        assert(
          !texts.some((t) => /^Profile$|Profile Script|Re-profile/.test(t)),
          `a lens that would run the package's file: ${texts.join(" | ")}`,
        );
        await r.shot("package-file-lenses");
      },
    );
    await r.step(
      "a function profiled inside tinymodel: the Report says where the time is, by file",
      PROFILE_MS + 60_000,
      async () => {
        const DEF = "def step(x):";
        await r.closeEverything();
        await r.openFile("tiny_step.py");
        await r.gotoLine(await r.lineIn("tiny_step.py", DEF));
        await r.clickLensAbove(DEF, /^Profile$/, 30_000);
        await r.clickLensAbove(CALL, OFFER, PROFILE_MS - 30_000);
        await r.until(
          "the call line without the offer (the model's lines are in the package)",
          async () => {
            const row = await r.lensesAbove(CALL);
            return row !== null && /ops|fwd|µs/.test(row.text) && !OFFER.test(row.text)
              ? row.text
              : null;
          },
          PROFILE_MS - 30_000,
          500,
        );
        await r.clickLensAbove(DEF, /^Report$/, 30_000);
        const view = await r.waitWebview(
          "the report of step with its By file section",
          (v) => /step/.test(v.title) && /By file/.test(v.text),
          30_000,
        );
        const byFile = /tinymodel \d+% · workspace \d+%|workspace \d+% · tinymodel \d+%/.exec(
          view.text,
        );
        assert(
          byFile !== null,
          `no package/workspace split in the report: ${view.text.slice(0, 400)}`,
        );
        r.log(`    by file: ${byFile[0]}`);
        assert(/layers\.py/.test(view.text), "the report does not name layers.py");
        await r.shot("package-report-by-file");
      },
    );
  },
};
