/** Scenario 147 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { assert, hasNvcc } from "../common.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "147. Compare Assembly from a kernel's PTX view: the diff editor with each side's summary, normalised ↔ original",
  async run(r) {
    const JIT = "@triton.jit";
    const diff = r.page.locator(".monaco-diff-editor").first();
    const picker = r.page.locator(".quick-input-widget");
    const row = (label) =>
      picker
        .locator(".quick-input-list .monaco-list-row")
        .filter({ has: r.page.locator(".label-name", { hasText: label }) })
        .first();
    await r.step("Show Assembly above square_kernel, PTX", 150_000, async () => {
      await r.closeEverything();
      await r.openFile("triton_square.py");
      await r.gotoLine(await r.lineIn("triton_square.py", "def square(x, BLOCK_SIZE"));
      await r.clickLensAbove(JIT, /^Show Assembly$/, 30_000);
      await r.until("the stage picker", () => picker.isVisible(), 15_000);
      await r.page.keyboard.press("Enter");
      await r.until(
        "an editor group showing square_kernel.ptx",
        async () => ((await r.groupTitles()).includes("square_kernel.ptx") ? true : null),
        120_000,
      );
    });
    await r.step(
      "Compare Assembly… from the PTX view: PTX, then the same kernel at BLOCK_SIZE=64",
      30_000,
      async () => {
        await r.editorIn("square_kernel.ptx").click({ position: { x: 300, y: 80 } });
        await r.command("Kernel Lens: Compare Assembly…");
        await r.until("the stage picker (PTX first)", () => row("PTX").isVisible(), 15_000);
        await r.page.keyboard.press("Enter");
        const title = await r.until(
          "the 'compare square_kernel with…' picker",
          async () => {
            if (!(await row("with other constexprs").isVisible())) return null;
            return picker.locator(".quick-input-title").innerText();
          },
          20_000,
        );
        const labels = await picker
          .locator(".quick-input-list .monaco-list-row .label-name")
          .allInnerTexts();
        r.log(`    ${title}: ${labels.join(" | ")}`);
        assert(/compare square_kernel with/.test(title), `picker title: ${title}`);
        await r.shot("asm-diff-picker");
        await row("with other constexprs").click();
        const input = picker.locator(".quick-input-box input");
        await r.until("the NAME=VALUE input", () => input.isVisible(), 10_000);
        await input.fill("BLOCK_SIZE=64");
        await input.press("Enter");
      },
    );
    await r.step(
      "the diff editor opens, each side headed by its summary and what differs most",
      150_000,
      async () => {
        const tab = await r.until(
          "a diff editor titled square_kernel · BLOCK_SIZE=1024 ↔ square_kernel · BLOCK_SIZE=64",
          async () => {
            const titles = await r.groupTitles();
            return titles.find((t) => /↔/.test(t)) ?? null;
          },
          140_000,
        );
        r.log(`    tab: ${tab}`);
        assert(
          /BLOCK_SIZE=1024 ↔ square_kernel · BLOCK_SIZE=64 · PTX \(normalised\)/.test(tab),
          `tab: ${tab}`,
        );
        // Side by side or inline (a narrow group): the lines of both sides, top to bottom.
        const lines = await r.until(
          "both sides' summaries",
          async () => {
            const seen = await r.visibleLines(diff);
            return seen.some((l) => /^\/\/ A: square_kernel/.test(l)) &&
              seen.some((l) => /^\/\/ B: square_kernel/.test(l))
              ? seen
              : null;
          },
          15_000,
        );
        for (const l of lines.filter((x) => x.startsWith("//")).slice(0, 12)) r.log(`    ${l}`);
        const has = (re) => lines.some((l) => re.test(l));
        assert(
          has(/^\/\/ A: square_kernel · Triton · triton_square\.py · BLOCK_SIZE=1024 · PTX sm_\d+/),
          "no A title (BLOCK_SIZE=1024)",
        );
        assert(
          has(/^\/\/ B: square_kernel · Triton · triton_square\.py · BLOCK_SIZE=64 · PTX sm_\d+/),
          "no B title (BLOCK_SIZE=64)",
        );
        assert(
          has(/global loads 2 × 128-bit/) && has(/global loads 1 × 32-bit/),
          "the summaries do not give the load widths",
        );
        assert(
          has(
            /differs most: A loads 128 bits per thread per instruction, B 32: B issues 4× the load/,
          ),
          "no 'differs most' line",
        );
        assert(has(/^\s*ld\.param\.b64 %rd0, \[param_0\];/), "no normalised PTX in sight");
        assert(!has(/^\s*\.loc\s/), "the normalised PTX still has .loc lines");
        // the status item follows the active editor: it may come a moment after the text
        const status = await r.until(
          "the diff's summary in the status bar",
          async () => {
            const text = await r.statusBarText();
            return /A loads 128 bits per thread/.test(text) ? text : null;
          },
          10_000,
        );
        r.log(`    status bar: ${status.match(/A loads[^$]*?instructions/)?.[0] ?? status}`);
        await r.shot("asm-diff");
      },
    );
    await r.step(
      "Normalised ↔ Original: the PTX as compiled, the summary kept",
      30_000,
      async () => {
        await diff.click({ position: { x: 200, y: 300 } });
        await r.command("Kernel Lens: Normalised ↔ Original");
        const tab = await r.until(
          "the diff retitled (original)",
          async () => (await r.groupTitles()).find((t) => /↔.*\(original\)/.test(t)) ?? null,
          15_000,
        );
        const lines = await r.until(
          "the original PTX (its LLVM banner) under the summary",
          async () => {
            const seen = await r.visibleLines(diff);
            return seen.some((l) => /Generated by LLVM NVPTX Back-End/.test(l)) ? seen : null;
          },
          15_000,
        );
        r.log(`    tab: ${tab}`);
        assert(
          lines.some((l) => /^\/\/ A: square_kernel/.test(l)),
          "no summary above the original",
        );
        await r.shot("asm-diff-original");
      },
    );
    if (hasNvcc()) {
      await r.step(
        "against the load_inline CUDA square (nvcc): B loads 32 bits, block 1024 from the launch",
        300_000,
        async () => {
          await r.page.keyboard.press("Escape");
          // The cursor in square_kernel, in the source's own editor (group 1).
          await r.clickInLine("x = tl.load(", "tl.load", r.editorIn("triton_square.py"));
          await r.command("Kernel Lens: Compare Assembly…");
          await r.until("the stage picker", () => row("PTX").isVisible(), 15_000);
          await r.page.keyboard.press("Enter");
          const cuda = picker
            .locator(".quick-input-list .monaco-list-row")
            .filter({ hasText: "CUDA · load_inline · inline_square.py" })
            .first();
          await r.until(
            "the load_inline CUDA kernel in the picker",
            () => cuda.isVisible(),
            20_000,
          );
          await cuda.click();
          const lines = await r.until(
            "a diff of the Triton square against the CUDA square",
            async () => {
              const titles = await r.groupTitles();
              if (!titles.some((t) => /BLOCK_SIZE=1024 ↔ square_kernel · PTX/.test(t))) return null;
              const seen = await r.visibleLines(diff);
              return seen.some((l) => /^\/\/ B: square_kernel · CUDA \(load_inline/.test(l))
                ? seen
                : null;
            },
            280_000,
            1_000,
          );
          for (const l of lines.filter((x) => x.startsWith("// B") || /differs/.test(x))) {
            r.log(`    ${l}`);
          }
          const has = (re) => lines.some((l) => re.test(l));
          assert(has(/block 1024 threads \(the launch: threads = 1024\)/), "no CUDA block size");
          assert(has(/global loads 1 × 32-bit/), "no 32-bit CUDA load");
          assert(
            has(/differs most: A loads 128 bits per thread per instruction, B 32/),
            "no 'differs most' line",
          );
          await r.shot("asm-diff-cuda");
        },
      );
    }
    await r.step("close the editors", 15_000, async () => {
      await r.command("View: Close All Editor Groups");
    });
  },
};
