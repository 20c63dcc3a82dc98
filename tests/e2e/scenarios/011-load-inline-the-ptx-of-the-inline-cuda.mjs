/** Scenario 11 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { assert, hasNvcc } from "../common.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "11. load_inline: the PTX of the inline CUDA source beside the source",
  needs: () => (hasNvcc() ? null : "nvcc is not installed (CUDA_HOME, PATH, /usr/local/cuda)"),
  async run(r) {
    const CALL = "return load_inline(";
    await r.step(
      "the load_inline lens: nvcc compiles, with a progress notification",
      60_000,
      async () => {
        await r.openFile("inline_square.py");
        await r.gotoLine(await r.lineIn("inline_square.py", CALL));
        await r.clickLensAbove(CALL, /^load_inline: PTX, sources, nvcc$/, 30_000);
        const toast = await r.until(
          "an 'nvcc: compiling' notification (or already the PTX)",
          async () => {
            const shown = (await r.toastTexts()).find((t) => /nvcc: compiling/.test(t));
            if (shown) return shown;
            return (await r.groupTitles()).some((t) => t.endsWith(".ptx")) ? "(done)" : null;
          },
          30_000,
          100,
        );
        r.log(`    notification: ${toast}`);
        if (toast !== "(done)") await r.shot("load-inline-progress");
      },
    );
    await r.step("the PTX opens beside the source", 180_000, async () => {
      const titles = await r.until(
        "an editor group showing kernel_lens_inline_square.ptx",
        async () => {
          const t = await r.groupTitles();
          return t.includes("kernel_lens_inline_square.ptx") && t.includes("inline_square.py")
            ? t
            : null;
        },
        170_000,
        500,
      );
      r.log(`    editor groups: ${titles.join(" | ")}`);
      const ptx = r.editorIn("kernel_lens_inline_square.ptx");
      const top = await r.until(
        "the PTX's .target line",
        async () => {
          const lines = await r.visibleLines(ptx);
          return lines.find((l) => /^\.target sm_\d+/.test(l.trim()));
        },
        15_000,
      );
      r.log(`    ${top.trim()}`);
      await ptx.click({ position: { x: 300, y: 60 } });
      const status = await r.statusBarText();
      r.log(`    status bar: ${status}`);
      assert(
        /kernel_lens_inline_square\.ptx · sm_\d+/.test(status),
        `no PTX facts in the status bar: ${status}`,
      );
      const entry = await r.find("square_kernel");
      assert(/^\d+ of \d+$/.test(entry), `the PTX has no square_kernel: ${entry}`);
      const load = await r.find("ld.global");
      assert(/^\d+ of \d+$/.test(load), `the PTX has no ld.global: ${load}`);
      await r.closeFind();
    });
    await r.step(
      "cursor on the PTX's ld.global line: the CUDA line in the Python string lights up",
      30_000,
      async () => {
        const ptx = r.editorIn("kernel_lens_inline_square.ptx");
        const source = r.editorIn("inline_square.py");
        await r.clickInLine("ld.global", "ld.global", ptx);
        const lit = await r.until(
          "the load's line of CUDA_SOURCE highlighted",
          async () => {
            const lines = await r.linkedLines(source);
            return lines.length > 0 ? lines : null;
          },
          10_000,
        );
        r.log(`    source lines highlighted: ${lit.map((l) => l.trim()).join(" | ")}`);
        assert(
          lit.some((l) => l.includes("float v = in[i];")),
          `ld.global should highlight "float v = in[i];": ${JSON.stringify(lit)}`,
        );
        await r.shot("load-inline-ptx");
      },
    );
    await r.step("close the editors", 15_000, async () => {
      await r.command("View: Close All Editor Groups");
    });
  },
};
