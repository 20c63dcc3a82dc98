/** Scenario 162 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { HAS_CUDA, SMALL, USUAL, assert, standalone } from "../walk41.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "162. Argument Types… from a failed compile: offered in the failure's toast and the palette, prefilled with the guess",
  needs: () => (HAS_CUDA ? "a GPU machine runs the launch itself (exact types)" : null),
  async run(r) {
    const JIT = "@triton.jit";
    const FILE = "grouped_gather.py";
    await r.page.setViewportSize(SMALL);
    try {
      await r.step("a trusted workspace (standalone: open it and trust it)", 120_000, () =>
        standalone(r),
      );
      await r.step("Show Assembly above gather_rows_kernel: the guess fails", 150_000, async () => {
        await r.closeEverything();
        await r.command("Notifications: Clear All Notifications");
        await r.openFile(FILE);
        await r.gotoLine(await r.lineIn(FILE, "def gather_rows(a"));
        await r.clickLensAbove(JIT, /^Show Assembly$/, 30_000);
        await r.until("the stage picker", () => r.page.locator(".quick-input-widget").isVisible());
        await r.page.keyboard.press("Enter");
        const toast = await r.until(
          "the failure's notification",
          async () =>
            (await r.toastTexts()).find((t) => /could not compile gather_rows_kernel/.test(t)),
          140_000,
        );
        r.log(`    toast: ${toast.slice(0, 200)}`);
        const box = r.page
          .locator(".notifications-toasts .notification-toast:visible")
          .filter({ hasText: "could not compile" })
          .first();
        const button = box.getByRole("button", { name: "Argument Types…" });
        assert((await button.count()) === 1, `no Argument Types… button: ${toast}`);
        assert(
          (await box.getByRole("button", { name: "Show details" }).count()) === 1,
          "no Show details button",
        );
        await r.shot("asm-failed-argument-types");
        await button.click();
      });
      const picker = r.page.locator(".quick-input-widget");
      const row = (label) =>
        picker
          .locator(".quick-input-list .monaco-list-row")
          .filter({ has: r.page.locator(".label-name", { hasText: label }) })
          .first();
      await r.step(
        "the picker lists the types tried; indices_ptr → *i32 compiles",
        120_000,
        async () => {
          await r.until(
            "the parameter list with indices_ptr",
            () => row("indices_ptr").isVisible(),
            15_000,
          );
          const texts = await picker
            .locator(".quick-input-list .monaco-list-row")
            .evaluateAll((ns) => ns.map((n) => (n.textContent ?? "").replace(/\s+/g, " ")));
          r.log(`    items: ${JSON.stringify(texts)}`);
          assert(
            texts.some((t) => /indices_ptr.*\*fp32/.test(t)),
            `indices_ptr not prefilled with the guess *fp32: ${JSON.stringify(texts)}`,
          );
          assert(
            texts.some((t) => /BLOCK.*128/.test(t)),
            `no BLOCK = 128: ${JSON.stringify(texts)}`,
          );
          await r.shot("asm-failed-picker");
          await row("indices_ptr").click();
          await r.until("the pointer types", () => row("*i32").isVisible(), 15_000);
          await row("*i32").click();
          await r.until(
            "an editor group showing gather_rows_kernel.ptx",
            async () => ((await r.groupTitles()).includes("gather_rows_kernel.ptx") ? true : null),
            110_000,
          );
          const status = await r.until(
            "the status bar's 'types picked'",
            async () => {
              const text = await r.statusBarText();
              return /types picked/.test(text) ? text : null;
            },
            15_000,
          );
          r.log(`    status bar: ${status.match(/PTX[^$]*?picked/)?.[0] ?? status}`);
          await r.shot("asm-failed-then-picked");
        },
      );
      await r.step(
        "the palette's Argument Types… on the Python file: the pick kept",
        60_000,
        async () => {
          await r.openFile(FILE);
          await r.command("Kernel Lens: Argument Types…");
          await r.until("the parameter list", () => row("indices_ptr").isVisible(), 15_000);
          const texts = await picker
            .locator(".quick-input-list .monaco-list-row")
            .evaluateAll((ns) => ns.map((n) => (n.textContent ?? "").replace(/\s+/g, " ")));
          r.log(`    items: ${JSON.stringify(texts)}`);
          assert(
            texts.some((t) => /indices_ptr.*\*i32/.test(t)),
            `the pick is not shown: ${JSON.stringify(texts)}`,
          );
          await r.shot("asm-palette-argument-types");
          await r.page.keyboard.press("Escape");
          await r.closeEverything();
        },
      );
    } finally {
      await r.page.setViewportSize(USUAL);
    }
  },
};
