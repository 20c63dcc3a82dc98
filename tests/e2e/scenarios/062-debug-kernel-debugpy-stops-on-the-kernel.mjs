/** Scenario 62 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { INSIDE, assert } from "../interp.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "62. Debug Kernel: debugpy stops on the kernel's first line, blocks in Variables",
  async run(r) {
    await r.step(
      "Debug Kernel above scale_kernel: stopped on its first line",
      120_000,
      async () => {
        await r.command("View: Close All Editor Groups");
        await r.openFile(INSIDE);
        await r.gotoLine(await r.lineIn(INSIDE, "def scale(x"));
        await r.clickLensAbove("def scale_kernel", /^Debug Kernel$/, 30_000);
        const stack = await r.until(
          "the Call Stack to show scale_kernel",
          async () => {
            const text = await r.page.locator(".debug-pane, .debug-view-content").allInnerTexts();
            const joined = text.join(" ").replace(/\s+/g, " ");
            return /scale_kernel/.test(joined) && /Paused/i.test(joined) ? joined : null;
          },
          110_000,
          500,
        );
        const first = await r.lineIn(INSIDE, "pid = tl.program_id(axis=0)");
        assert(
          new RegExp(`triton_inside\\.py\\s*${first}:`).test(stack),
          `the top frame is not line ${first}: ${stack.slice(0, 400)}`,
        );
        r.log(`    call stack: ${stack.slice(0, 200)}`);
        await r.shot("debug-stopped");
      },
    );
    await r.step("two steps: offs in the Variables view, as an array", 60_000, async () => {
      for (let i = 0; i < 2; i++) {
        await r.page.keyboard.press("F10");
        await r.page.waitForTimeout(1_500);
      }
      const variables = r.page.locator(".debug-variables, .debug-pane .monaco-list");
      const row = await r.until(
        "offs in Variables",
        async () => {
          const texts = (await variables.allInnerTexts()).join("\n").replace(/\u00a0/g, " ");
          return /offs\s*[=:]?\s*int32\[1024\] 0 1 2 … 1023/.test(texts) ? texts : null;
        },
        40_000,
        500,
      );
      assert(/BLOCK/.test(row) && /in_ptr/.test(row), `Variables lacks the parameters: ${row}`);
      r.log(`    variables: ${row.replace(/\s+/g, " ").slice(0, 300)}`);
      await r.page.locator(".debug-pane .monaco-list-row", { hasText: "offs" }).first().click();
      await r.page.keyboard.press("ArrowRight");
      await r.until(
        "the block of offs, an ndarray",
        async () => /block/.test((await variables.allInnerTexts()).join("\n")),
        15_000,
      );
      await r.shot("debug-variables");
    });
    await r.step("stop debugging", 30_000, async () => {
      await r.page.keyboard.press("Shift+F5");
      await r.page.waitForTimeout(1_000);
    });
  },
};
