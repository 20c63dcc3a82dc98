/** Scenario 30 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { PROFILE_MS, SUMMARY, assert } from "../common.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "30. a lecture-style script, no set-up: inputs from its own run, Profile Script, the quick fix",
  async run(r) {
    const FILE = "lecture_square.py";
    await r.step(
      "Profile square_2: its inputs come from the script's own call",
      PROFILE_MS,
      async () => {
        await r.closeEverything();
        await r.openFile(FILE);
        await r.clickLensAbove("def square_2(a):", /^Profile$/, 30_000);
        const row = await r.waitLensAbove("def square_2(a):", SUMMARY, PROFILE_MS - 15_000);
        r.log(`    summary: ${row.text}`);
        await r.waitLensAbove("return a * a", /aten::mul/, 10_000);
      },
    );
    await r.step("the hover says where the inputs were captured", 30_000, async () => {
      await r.hoverOn("return a * a", "*");
      const text = await r.until(
        "a hover naming the captured inputs",
        async () => {
          const hover = await r.hoverText();
          return hover?.includes("captured at") ? hover : null;
        },
        15_000,
      );
      const call = await r.lineIn(FILE, "time_pytorch_function(square_2, b)");
      assert(
        text.includes(`captured at ${FILE}:${call}`) && text.includes("float32[256, 256]"),
        `the hover does not say where the inputs came from: ${text}`,
      );
      r.log(`    hover: ${text.replace(/\s+/g, " ").slice(0, 240)}`);
      await r.shot("captured-inputs-hover");
      await r.page.mouse.move(5, 400);
      await r.page.keyboard.press("Escape");
    });
    await r.step("the Report says where the inputs came from", 60_000, async () => {
      await r.clickLensAbove("def square_2(a):", /^Report$/, 15_000);
      const view = await r.waitWebview(
        "the report of square_2 with its inputs",
        (v) => v.mode === "report" && v.text.includes("captured at lecture_square.py"),
        45_000,
      );
      assert(view.text.includes("a: Tensor float32[256, 256] cpu"), view.text.slice(0, 600));
      await r.shot("report-inputs");
      await r.closeEverything();
      await r.openFile(FILE);
    });
    await r.step(
      "Profile Script: one run as __main__, ops on the module-level lines",
      PROFILE_MS,
      async () => {
        await r.gotoLine(1);
        await r.clickLensAbove('"""Shaped like GPU MODE', /Profile Script/, 30_000);
        const row = await r.waitLensAbove(
          '"""Shaped like GPU MODE',
          /script · .* wall, one run/,
          PROFILE_MS - 15_000,
        );
        r.log(`    script: ${row.text}`);
        assert(!/median|±/.test(row.text), `a script's one run shown as a median: ${row.text}`);
        await r.waitLensAbove("b = torch.randn(256, 256)", /aten::randn/, 10_000);
        await r.shot("profile-script");
      },
    );
    await r.step(
      "a function the script never calls: message on its def, then the quick fix",
      PROFILE_MS,
      async () => {
        await r.clickInLine("return a * a * a", "a * a * a");
        await r.command("Kernel Lens: Profile Function at Cursor");
        const failed = await r.waitLensAbove(
          "def cube(a):",
          /Profile failed: inputs/,
          PROFILE_MS - 30_000,
        );
        r.log(`    lens: ${failed.text}`);
        await r.clickInLine("def cube(a):", "cube");
        await r.page.keyboard.press("Control+.");
        // VS Code's Quick Fix menu lists the action, preselected (it is the preferred fix).
        const fix = r.page
          .locator(".action-widget")
          .getByText("Add an inputs directive above the def");
        await fix.first().waitFor({ state: "visible", timeout: 15_000 });
        await r.shot("inputs-quick-fix");
        await r.page.keyboard.press("Enter");
        await r.until(
          "the directive inserted above the def",
          async () =>
            (await r.visibleLines()).some((l) =>
              l.includes("# kernel-lens: inputs = (torch.randn(1024),)"),
            ),
          10_000,
        );
        await r.clickLensAbove("def cube(a):", /^Profile$/, 30_000);
        const row = await r.waitLensAbove("def cube(a):", SUMMARY, PROFILE_MS - 45_000);
        r.log(`    after the fix: ${row.text}`);
        await r.shot("after-quick-fix");
        await r.page.keyboard.press("Control+Z");
      },
    );
  },
};
