/** Scenario 44 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { PROFILE_MS, SUMMARY, assert } from "../common.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "44. a layer of a model file profiled from its driver (the quick fix), then the model file's lines after a Profile Script of the driver",
  async run(r) {
    const MODEL = "attn_model.py";
    const BENCH = "attn_bench.py";
    const DEF = "def forward(self, x):";
    await r.step(
      "Profile Attention.forward: the model file never calls it",
      PROFILE_MS,
      async () => {
        await r.closeEverything();
        await r.openFile(MODEL);
        await r.clickLensAbove(DEF, /^Profile$/, 30_000);
        const failed = await r.waitLensAbove(DEF, /Profile failed: inputs/, PROFILE_MS - 15_000);
        r.log(`    lens: ${failed.text}`);
      },
    );
    await r.step(
      "the quick fix offers the driver that imports the module",
      PROFILE_MS,
      async () => {
        await r.clickInLine(DEF, "forward");
        await r.page.keyboard.press("Control+.");
        const fix = r.page
          .locator(".action-widget")
          .getByText("Take the inputs from attn_bench.py (attn_bench.py → attn_model.py)");
        await fix.first().waitFor({ state: "visible", timeout: 15_000 });
        await r.shot("driver-quick-fix");
        // The directive is the preferred fix (first, selected); the driver is the next one.
        await r.page.keyboard.press("ArrowDown");
        await r.page.keyboard.press("Enter");
        const row = await r.waitLensAbove(DEF, SUMMARY, PROFILE_MS - 30_000);
        r.log(`    summary: ${row.text}`);
        await r.waitLensAbove("q, k, v = self.qkv(x).split(C, dim=2)", /aten::linear/, 10_000);
        await r.shot("profiled-from-driver");
      },
    );
    await r.step("the hover names the driver's line and the call chain", 30_000, async () => {
      await r.hoverOn("q, k, v = self.qkv(x).split(C, dim=2)", "qkv");
      const text = await r.until(
        "a hover naming the driver",
        async () => {
          const hover = await r.hoverText();
          return hover?.includes("inputs from") ? hover : null;
        },
        15_000,
      );
      const call = await r.lineIn(BENCH, "y = layer(x)");
      assert(
        text.includes(`inputs from ${BENCH}:${call} (y = layer(x) → Attention.forward)`) &&
          text.includes("float32[2, 32, 64]"),
        `the hover does not say where the inputs came from: ${text}`,
      );
      r.log(`    hover: ${text.replace(/\s+/g, " ").slice(0, 240)}`);
      await r.shot("driver-inputs-hover");
      await r.page.mouse.move(5, 400);
      await r.page.keyboard.press("Escape");
    });
    await r.step(
      "Profile Script on the driver, then the model file shows its lines from that run",
      PROFILE_MS,
      async () => {
        await r.openFile(BENCH);
        await r.gotoLine(1);
        await r.clickLensAbove('"""The driver of attn_model.py', /Profile Script/, 30_000);
        await r.waitLensAbove(
          '"""The driver of attn_model.py',
          /script · .* wall, one run/,
          PROFILE_MS - 20_000,
        );
        // The work is inside main(): on its own lines, not on the main() call.
        await r.waitLensAbove("x = torch.randn(2, 32, 64)", /aten::randn/, 10_000);
        await r.shot("driver-script-deep");
        await r.openFile(MODEL);
        await r.gotoLine(1);
        const head = await r.waitLensAbove(
          '"""An attention layer kept in a model file',
          /from attn_bench\.py, \d\d:\d\d/,
          15_000,
        );
        r.log(`    model file: ${head.text}`);
        const sdpa = await r.waitLensAbove(
          "y = torch.nn.functional.scaled_dot_product_attention",
          /scaled_dot_product_attention/,
          10_000,
        );
        r.log(`    sdpa line: ${sdpa.text}`);
        // One row per line: the function's own profile wins where it has results…
        assert(!/×3/.test(sdpa.text), `two rows of results on one line: ${sdpa.text}`);
        // …and the run's lines show elsewhere: the layer's construction in main().
        const init = await r.waitLensAbove(
          "self.qkv = nn.Linear(dim, 3 * dim)",
          /aten::uniform_/,
          10_000,
        );
        r.log(`    __init__ line: ${init.text}`);
        await r.shot("model-lines-from-driver-run");
      },
    );
  },
};
