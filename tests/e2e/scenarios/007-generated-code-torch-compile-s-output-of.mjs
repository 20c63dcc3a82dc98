/** Scenario 7 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { assert } from "../common.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "7. Generated Code: torch.compile's output of matmul_relu beside the source",
  async run(r) {
    const FN = "def matmul_relu(x, y):";
    const generated = r.editorIn("matmul_relu.compiled.py");
    await r.step("Generated Code above matmul_relu: a progress notification", 60_000, async () => {
      await r.openFile("fusion.py");
      await r.gotoLine(await r.lineIn("fusion.py", FN));
      await r.clickLensAbove(FN, /^Generated Code$/, 30_000);
      const toast = await r.until(
        "a 'torch.compile matmul_relu' notification (or already the code)",
        async () => {
          const toasts = await r.toastTexts();
          const shown = toasts.find((t) => /torch\.compile matmul_relu/.test(t));
          if (shown) return shown;
          return (await r.groupTitles()).includes("matmul_relu.compiled.py") ? "(done)" : null;
        },
        30_000,
        100,
      );
      r.log(`    notification: ${toast}`);
      if (toast !== "(done)") await r.shot("generated-code-progress");
    });
    await r.step("the generated Python opens beside the source", 240_000, async () => {
      await r.until(
        "an editor group showing matmul_relu.compiled.py",
        async () => (await r.groupTitles()).includes("matmul_relu.compiled.py"),
        230_000,
        500,
      );
      await generated.click({ position: { x: 200, y: 100 } });
      const status = await r.statusBarText();
      r.log(`    status bar: ${status}`);
      assert(/Python/.test(status), `the generated code is not Python: ${status}`);
      assert(
        /matmul_relu: .* eager → .* compiled/.test(status),
        `no eager → compiled facts in the status bar: ${status}`,
      );
      for (const needle of ["extern_kernels.mm", "cpp_fused_"]) {
        const count = await r.find(needle);
        r.log(`    find ${needle}: ${count}`);
        assert(/^\d+ of \d+$/.test(count), `the generated code has no "${needle}": ${count}`);
      }
      await r.closeFind();
    });
    await r.step("cursor on the relu line: the fused C++ kernel lights up", 30_000, async () => {
      const source = r.editorIn("fusion.py");
      await r.clickInLine("z = torch.relu(z)", "relu", source);
      const lit = await r.until(
        "a highlighted cpp_fused_ line in the generated code",
        async () => {
          const lines = await r.linkedLines(generated);
          return lines.some((l) => /cpp_fused_/.test(l)) ? lines : null;
        },
        10_000,
      );
      r.log(`    highlighted: ${lit.map((l) => l.trim()).join(" | ")}`);
      await r.shot("generated-code");
    });
    await r.step("close the generated code", 15_000, async () => {
      await r.command("View: Close All Editor Groups");
    });
  },
};
