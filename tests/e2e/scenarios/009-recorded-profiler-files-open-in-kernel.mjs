/** Scenario 9 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { assert } from "../common.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "9. recorded profiler files open in Kernel Lens's viewers (Chrome trace, Nsight Compute)",
  async run(r) {
    await r.step(
      "matmul_relu.pt.trace.json from the explorer: the timeline with a GPU lane",
      60_000,
      async () => {
        await r.openFromExplorer("matmul_relu.pt.trace.json");
        const view = await r.waitWebview(
          "the trace viewer with its timeline",
          (v) =>
            v.mode === "trace" &&
            v.title === "matmul_relu.pt.trace.json" &&
            /events shown/.test(v.text),
          45_000,
        );
        assert(view.tab === "Timeline", `the trace opened on "${view.tab}", not Timeline`);
        const drawn = await r.until(
          "a GPU stream lane title drawn on the timeline",
          async () => {
            const texts = await r.canvasText(view.frame);
            return texts.some((t) => /GPU \d+ · stream \d+/.test(t)) ? texts : null;
          },
          10_000,
        );
        const lanes = [...new Set(drawn.filter((t) => /^[▾▸] /.test(t)))];
        r.log(`    lane titles drawn: ${lanes.join(" | ")}`);
        assert(
          lanes.some((t) => /CPU thread \d+/.test(t)),
          `no CPU thread lane: ${lanes.join(" | ")}`,
        );
        r.log(`    ${view.text.split("\n").find((l) => /events shown/.test(l))}`);
        await r.shot("trace-file");
        await view.frame.getByRole("tab", { name: "Summary" }).click();
        const summary = await r.waitWebview(
          "the trace's Summary tab naming the GEMM kernel",
          (v) => v.mode === "trace" && v.tab === "Summary" && /sm80_xmma_gemm/.test(v.text),
          10_000,
        );
        r.log(`    summary: ${summary.text.replace(/\s+/g, " ").slice(0, 240)}`);
        await r.shot("trace-file-summary");
      },
    );
    await r.step(
      "triton_fused_full.ncu-rep from the explorer: kernel, GPU and hints",
      60_000,
      async () => {
        await r.openFromExplorer("triton_fused_full.ncu-rep");
        const view = await r.waitWebview(
          "the Nsight Compute viewer showing triton_poi_fused_add_mul_relu_0",
          (v) =>
            v.mode === "ncu" &&
            v.title === "triton_fused_full.ncu-rep" &&
            /triton_poi_fused_add_mul_relu_0/.test(v.text),
          45_000,
        );
        const hints = await view.frame.locator("ol.hints > li .hint-head strong").allInnerTexts();
        r.log(`    hints: ${hints.join(" | ")}`);
        assert(
          hints[0] === "Low Utilization",
          `the first hint is "${hints[0]}", not Low Utilization`,
        );
        const metrics = await view.frame.locator(".metrics").first().innerText();
        r.log(`    metrics: ${metrics.replace(/\s+/g, " ")}`);
        await r.shot("ncu-file");
        // The report says which GPU ran the kernel (the server sends it as `device`).
        assert(
          /NVIDIA H200/.test(view.text),
          "the Nsight Compute viewer does not show the GPU (NVIDIA H200) the report was recorded on",
        );
      },
    );
    await r.step("close the viewers", 15_000, async () => {
      await r.command("View: Close All Editor Groups");
    });
  },
};
