/** Scenario 140 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "140. Show Assembly of a kernel in a workspace package: its package's imports resolve, the launch's types",
  async run(r) {
    const JIT = "@triton.jit";
    await r.step(
      "Show Assembly above gate_kernel (libpkg/ops/gate.py imports scale from libpkg.ops.utils)",
      60_000,
      async () => {
        await r.hidePanel();
        await r.openFile("gate.py");
        await r.gotoLine(await r.lineIn("libpkg/ops/gate.py", "def gate_norm(x"));
        await r.clickLensAbove(JIT, /^Show Assembly$/, 30_000);
        const picker = r.page.locator(".quick-input-widget");
        await r.until(
          "the stage picker of gate_kernel",
          async () =>
            (await picker.isVisible()) &&
            /Show Assembly of gate_kernel/.test(
              await picker.locator(".quick-input-title").innerText(),
            ),
          15_000,
        );
        await r.page.keyboard.press("Enter");
      },
    );
    await r.step(
      "the PTX opens beside it, and the lens counts its registers (no NameError)",
      150_000,
      async () => {
        const titles = await r.until(
          "an editor group showing gate_kernel.ptx beside gate.py",
          async () => {
            const t = await r.groupTitles();
            return t.includes("gate.py") && t.includes("gate_kernel.ptx") ? t : null;
          },
          140_000,
        );
        r.log(`    editor groups: ${titles.join(" | ")}`);
        const lens = await r.waitLensAbove(
          JIT,
          /PTX · \d+ regs · 0 spills · sm_\d+(?! · (types|suggested))/,
          15_000,
        );
        r.log(`    lens: ${lens.text}`);
        await r.shot("assembly-package-kernel");
      },
    );
  },
};
