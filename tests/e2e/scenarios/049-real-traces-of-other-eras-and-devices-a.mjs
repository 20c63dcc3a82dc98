/** Scenario 49 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { assert } from "../common.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "49. real traces of other eras and devices: a PyTorch 1.8 trace (2021 schema) has its lanes; an MTIA trace names its device",
  async run(r) {
    await r.step(
      "resnet50_2021.pt.trace.json.gz (Kernel/Runtime/Operator categories): CPU, runtime and GPU lanes",
      60_000,
      async () => {
        await r.openFromExplorer("resnet50_2021.pt.trace.json.gz");
        const view = await r.waitWebview(
          "the trace viewer with its timeline",
          (v) =>
            v.mode === "trace" &&
            v.title === "resnet50_2021.pt.trace.json.gz" &&
            /events shown/.test(v.text),
          45_000,
        );
        const drawn = await r.until(
          "the GPU stream, runtime and CPU lane titles drawn",
          async () => {
            const texts = await r.canvasText(view.frame);
            const lanes = [...new Set(texts.filter((t) => /^[▾▸] /.test(t)))];
            return lanes.some((t) => /GPU 0 · stream 7/.test(t)) &&
              lanes.some((t) => /CUDA runtime/.test(t)) &&
              lanes.some((t) => /CPU thread/.test(t))
              ? lanes
              : null;
          },
          10_000,
        );
        r.log(`    lane titles drawn: ${drawn.join(" | ")}`);
        await r.shot("trace-2021-schema");
        await view.frame.getByRole("tab", { name: "Summary" }).click();
        const summary = await r.waitWebview(
          "its Summary tab: GPU busy time and the AddFunctor kernel",
          (v) =>
            v.mode === "trace" &&
            v.tab === "Summary" &&
            /GPU busy/.test(v.text) &&
            /vectorized_elementwise_kernel/.test(v.text),
          10_000,
        );
        r.log(`    summary: ${summary.text.replace(/\s+/g, " ").slice(0, 240)}`);
        await r.shot("trace-2021-schema-summary");
      },
    );
    await r.step(
      "mtia_inference.pt.trace.json.gz: MTIA lanes and an MTIA summary",
      60_000,
      async () => {
        await r.openFromExplorer("mtia_inference.pt.trace.json.gz");
        const view = await r.waitWebview(
          "the MTIA trace's timeline",
          (v) =>
            v.mode === "trace" &&
            v.title === "mtia_inference.pt.trace.json.gz" &&
            /events shown/.test(v.text),
          45_000,
        );
        const drawn = await r.until(
          "the MTIA device and runtime lane titles drawn",
          async () => {
            const texts = await r.canvasText(view.frame);
            const lanes = [...new Set(texts.filter((t) => /^[▾▸] /.test(t)))];
            return lanes.some((t) => /MTIA 17 · stream \d+/.test(t)) &&
              lanes.some((t) => /MTIA runtime/.test(t))
              ? lanes
              : null;
          },
          10_000,
        );
        r.log(`    lane titles drawn: ${drawn.join(" | ")}`);
        assert(!drawn.some((t) => /GPU \d/.test(t)), `a GPU lane in an MTIA trace: ${drawn}`);
        assert(
          /MTIA runtime/.test(view.text) && !/CUDA runtime/.test(view.text),
          "the timeline's legend does not name the MTIA runtime",
        );
        await view.frame.getByRole("tab", { name: "Summary" }).click();
        const summary = await r.waitWebview(
          "its Summary tab naming ARTEMIS (MTIA)",
          (v) => v.mode === "trace" && v.tab === "Summary" && /ARTEMIS \(MTIA\)/.test(v.text),
          10_000,
        );
        assert(/MTIA busy/.test(summary.text), "the summary does not say MTIA busy");
        r.log(`    summary: ${summary.text.replace(/\s+/g, " ").slice(0, 300)}`);
        await r.shot("trace-mtia-summary");
      },
    );
    await r.step("close the editors", 15_000, async () => {
      await r.command("View: Close All Editor Groups");
    });
  },
};
