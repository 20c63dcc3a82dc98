/** Scenario 41 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { HAS_CUDA, assert } from "../common.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "41. Show Assembly on a GPU-only Triton tutorial without a GPU: types from its launch's text, Argument Types… picks fp16",
  needs: () => (HAS_CUDA ? "a GPU machine runs the launch itself (exact types)" : null),
  async run(r) {
    const JIT = "@triton.jit";
    const ptx = r.editorIn("add_kernel.ptx");
    await r.step("Show Assembly above add_kernel, PTX", 60_000, async () => {
      await r.closeEverything();
      await r.openFile("tutorial_add.py");
      await r.gotoLine(await r.lineIn("tutorial_add.py", "def add(x"));
      await r.clickLensAbove(JIT, /^Show Assembly$/, 30_000);
      await r.until("the stage picker", () => r.page.locator(".quick-input-widget").isVisible());
      await r.page.keyboard.press("Enter");
    });
    await r.step(
      "the PTX opens; the status bar says the types were read from the source",
      120_000,
      async () => {
        await r.until(
          "an editor group showing add_kernel.ptx",
          async () => ((await r.groupTitles()).includes("add_kernel.ptx") ? true : null),
          110_000,
        );
        const status = await r.until(
          "the status bar's 'types read from the source'",
          async () => {
            const text = await r.statusBarText();
            return /types read from the source/.test(text) ? text : null;
          },
          15_000,
        );
        r.log(`    status bar: ${status.match(/PTX[^$]*?source/)?.[0] ?? status}`);
        const lines = await r.visibleLines(ptx);
        assert(
          lines.some((l) => /^\.target sm_\d+/.test(l.trim())),
          "no .target line in the PTX",
        );
        await r.shot("assembly-gpu-only-text-types");
      },
    );
    await r.step(
      "Argument Types…: x_ptr → *fp16, compiled again with fp16 loads",
      120_000,
      async () => {
        await ptx.click({ position: { x: 300, y: 80 } });
        await r.command("Kernel Lens: Argument Types…");
        const picker = r.page.locator(".quick-input-widget");
        const row = (label) =>
          picker
            .locator(".quick-input-list .monaco-list-row")
            .filter({ has: r.page.locator(".label-name", { hasText: label }) })
            .first();
        await r.until("the parameter list with x_ptr", () => row("x_ptr").isVisible(), 15_000);
        const placeholder = await picker
          .locator(".quick-input-box input")
          .getAttribute("placeholder");
        r.log(`    picker: ${placeholder}`);
        assert(
          /assumed \*fp32 for x_ptr/.test(placeholder ?? ""),
          `no assumption said: ${placeholder}`,
        );
        await r.shot("assembly-argument-types");
        await row("x_ptr").click();
        await r.until("the pointer types", () => row("*fp16").isVisible(), 15_000);
        await row("*fp16").click();
        const status = await r.until(
          "the status bar's 'types picked'",
          async () => {
            const text = await r.statusBarText();
            return /types picked/.test(text) ? text : null;
          },
          100_000,
        );
        r.log(`    status bar: ${status.match(/PTX[^$]*?picked/)?.[0] ?? status}`);
        await r.find("ld.global.b16");
        const lines = await r.visibleLines(ptx);
        assert(
          lines.some((l) => /ld\.global(\.v\d)?\.b16/.test(l)),
          `no fp16 load in view: ${lines.slice(0, 5).join(" / ")}`,
        );
        await r.closeFind();
        await r.shot("assembly-fp16-picked");
      },
    );
  },
};
