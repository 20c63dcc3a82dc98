/** Scenario 1 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import {
  ANY_RESULT,
  FIRST_PROFILE_MS,
  PROFILE_LINK,
  SUMMARY,
  THREE_WAYS,
  assert,
} from "../common.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "1. untrusted workspace, then trust and profile square_three_ways",
  async run(r) {
    await r.step("the workbench asks whether to trust the folder", 90_000, async () => {
      await r.open(r.url);
      await r.until(
        "the workspace trust dialog",
        async () => /trust the authors/.test((await r.dialogText()) ?? ""),
        60_000,
      );
      await r.shot("trust-prompt");
      await r.dialogButton("No, I don't trust the authors");
      await r.until("Restricted Mode in the status bar", async () =>
        (await r.statusBarText()).includes("Restricted Mode"),
      );
    });
    await r.step(
      "square.py in Restricted Mode: lenses ask for trust, nothing ran",
      90_000,
      async () => {
        await r.openFile("square.py");
        await r.gotoLine(await r.lineIn("square.py", THREE_WAYS));
        await r.waitLensAbove(THREE_WAYS, /Kernel Lens: trust this workspace to profile/, 60_000);
        const lenses = await r.lensTexts();
        assert(
          lenses.every((t) => !ANY_RESULT.test(t) && !PROFILE_LINK.test(t)),
          `Restricted Mode shows a result or a Profile lens: ${JSON.stringify(lenses)}`,
        );
        await r.shot("untrusted-lenses");
      },
    );
    await r.step("trust the workspace from the lens", 30_000, async () => {
      await r.clickLensAbove(THREE_WAYS, /trust this workspace/);
      const editor = r.page.locator(".workspace-trust-editor");
      await editor.waitFor({ timeout: 15_000 });
      await r.shot("workspace-trust-editor");
      await editor.getByRole("button", { name: "Trust", exact: true }).click();
      await r.until(
        "Restricted Mode to end",
        async () => !(await r.statusBarText()).includes("Restricted Mode"),
      );
      await r.command("View: Close Editor");
    });
    await r.step("Profile lenses replace the trust lenses", 30_000, async () => {
      await r.openFile("square.py");
      await r.gotoLine(await r.lineIn("square.py", THREE_WAYS));
      await r.waitLensAbove(THREE_WAYS, PROFILE_LINK);
      await r.until(
        "every visible trust lens to turn into Profile",
        async () => {
          const lenses = await r.lensTexts();
          return lenses.length > 0 && lenses.every((t) => !/trust this workspace/.test(t));
        },
        10_000,
      );
      await r.shot("profile-lenses");
    });
    await r.step(
      "click Profile above square_three_ways: progress, then results",
      FIRST_PROFILE_MS,
      async () => {
        await r.clickLensAbove(THREE_WAYS, /^Profile$/);
        // The job shows as a spinning "Profiling…" lens and in the status bar until it is done.
        const progress = await r.until(
          "the Profiling… lens (or already the result)",
          async () => {
            const row = await r.lensesAbove(THREE_WAYS);
            return /Profiling…|(ms|µs) ±/.test(row?.text ?? "") ? row.text : null;
          },
          30_000,
          50,
        );
        if (/Profiling…/.test(progress)) {
          r.log(`    lens: ${progress}; status bar: ${await r.statusBarText()}`);
          await r.shot("profiling");
        } else {
          r.log(`    the result came before a Profiling… lens was seen: ${progress}`);
        }
        const summary = await r.waitLensAbove(THREE_WAYS, SUMMARY, FIRST_PROFILE_MS - 10_000);
        assert(/3 ops/.test(summary.text), `summary lens lacks "3 ops": ${summary.text}`);
        assert(/Re-profile/.test(summary.text), `no Re-profile lens: ${summary.text}`);
        for (const [line, op] of [
          ["a = torch.square(x)", "aten::square"],
          ["b = x * x", "aten::mul"],
          ["c = x**2", "aten::pow"],
        ]) {
          // On a CPU the lens names the op; its time under the profiler is in the hover.
          const row = await r.waitLensAbove(line, new RegExp(`${op}\\b.*CPU`), 10_000);
          r.log(`    ${line}  ←  ${row.text}`);
        }
        r.log(`    summary: ${summary.text}`);
        await r.shot("profiled-square-three-ways");
      },
    );
  },
};
