/** Scenario 60 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { PROFILE_MS } from "../common.mjs";
import { INSIDE, VALUES_MS, assert, waitAfter } from "../interp.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "60. Show Values: each kernel line's values for a program, the hover's block, the program-id picker",
  async run(r) {
    await r.step("Show Values above scale_kernel: values after each line", VALUES_MS, async () => {
      await r.hidePanel();
      await r.command("View: Close All Editor Groups");
      await r.openFile(INSIDE);
      await r.gotoLine(await r.lineIn(INSIDE, "def scale(x"));
      await r.clickLensAbove("def scale_kernel", /^Show Values$/, 30_000);
      const offs = await waitAfter(
        r,
        "offs = pid * BLOCK",
        /^offs: int32\[1024\] 0 1 2 … 1023$/,
        VALUES_MS - 20_000,
      );
      r.log(`    offs line: ${offs}`);
      const header = await waitAfter(
        r,
        "def scale_kernel",
        /program \(0, 0, 0\) of 4 × 1 × 1/,
        5_000,
      );
      assert(
        /Triton interpreter/.test(header),
        `the header does not name the interpreter: ${header}`,
      );
      const mask = await waitAfter(
        r,
        "mask = offs < n",
        /mask: bool\[1024\] · all lanes on/,
        5_000,
      );
      const x = await waitAfter(
        r,
        "x = tl.load(in_ptr",
        /^x: float32\[1024\] min −?[\d.]+ max [\d.]+$/,
        5_000,
      );
      r.log(`    ${header} | ${mask} | ${x}`);
      await r.shot("values-first-program");
    });
    await r.step("hover on the tl.load line: the whole block, a heat map", 30_000, async () => {
      await r.hoverOn("x = tl.load(in_ptr", "tl.load");
      const hover = await r.until(
        "the values hover",
        async () => {
          const text = await r.hoverText();
          return text !== null && /heat map/.test(text) ? text : null;
        },
        15_000,
      );
      assert(/program \(0, 0, 0\) of grid 4 × 1 × 1/.test(hover), `hover: ${hover.slice(0, 300)}`);
      assert(
        /Triton interpreter/.test(hover),
        "the hover does not say it ran under the interpreter",
      );
      assert(/\[1016\]/.test(hover), "the hover's grid does not reach lane 1016");
      r.log(`    hover: ${hover.split("\n").slice(0, 4).join(" / ")}`);
      await r.shot("values-hover");
      await r.parkMouse();
      await r.page.keyboard.press("Escape");
    });
    await r.step("the lens opens the program-id picker; the last program", 90_000, async () => {
      const lens = await r.waitLensAbove(
        "def scale_kernel",
        /Values: program \(0, 0, 0\) of 4 × 1 × 1 · interpreter/,
        15_000,
      );
      r.log(`    lens: ${lens.text}`);
      await r.clickLensAbove("def scale_kernel", /^Values: program/);
      const picker = r.page.locator(".quick-input-widget");
      const labels = await r.until(
        "the program-id picker",
        async () => {
          if (!(await picker.isVisible())) return null;
          const rows = await picker.locator(".quick-input-list .monaco-list-row").allInnerTexts();
          return rows.length >= 3 ? rows.map((t) => t.replace(/\s+/g, " ")) : null;
        },
        15_000,
      );
      r.log(`    picker: ${labels.join(" | ")}`);
      assert(
        labels.some((l) => /Last program.*\(3, 0, 0\)/.test(l)),
        `no last program: ${labels}`,
      );
      await r.shot("values-picker");
      await picker
        .locator(".quick-input-list .monaco-list-row", { hasText: "Last program" })
        .click();
      await r.parkMouse();
      const mask = await waitAfter(r, "mask = offs < n", /24 lanes masked/, 80_000);
      const offs = await waitAfter(r, "offs = pid * BLOCK", /3072 3073 3074 … 4095/, 5_000);
      await waitAfter(r, "def scale_kernel", /program \(3, 0, 0\) of 4 × 1 × 1/, 5_000);
      r.log(`    last program: ${offs} | ${mask}`);
      await r.shot("values-last-program");
    });
    await r.step(
      "Profile above matmul: its kernel (tl.zeros) runs under the interpreter in a forked agent",
      PROFILE_MS,
      async () => {
        // The warm template the agents fork from imported triton before the interpreter was
        // on: triton.language's own @jit helpers (tl.zeros) must still run interpreted.
        await r.gotoLine(await r.lineIn(INSIDE, "def matmul(a, b):"));
        // A lens row that scrolled into view right after the file's lenses were refreshed (by
        // Show Values) can still carry the commands VS Code has disposed ("Actual command not
        // found"): clicked again once the row has been drawn anew.
        await r.until(
          "Profile above matmul clicked, and the profile started",
          async () => {
            await r.clickLensAbove("def matmul(a, b):", /^Profile$/, 30_000);
            return r
              .waitLensAbove("def matmul(a, b):", /profiling|ms|failed|Re-profile/i, 5_000)
              .catch(() => null);
          },
          60_000,
          0,
        );
        const row = await r.waitLensAbove(
          "matmul_kernel[grid](",
          /matmul_kernel|interpreted/,
          PROFILE_MS - 30_000,
        );
        r.log(`    launch line: ${row.text}`);
        const head = await r.lensesAbove("def matmul(a, b):");
        assert(!/failed/i.test(head?.text ?? ""), `the profile failed: ${head?.text}`);
        await r.shot("values-matmul-profiled");
      },
    );
  },
};
