/**
 * Scenarios 60-62 (issue 46): inside a Triton kernel under Triton's interpreter.
 *
 * 60. **Show Values** above `scale_kernel` (triton_inside.py): each body line gets its values
 *     after it (`offs: int32[1024] 0 1 2 … 1023`), the `def` line says `program (0, 0, 0) of
 *     4 × 1 × 1 · Triton interpreter`; hovering the `x = tl.load(…)` line shows the block whole
 *     (a grid, a heat map). The lens, now `Values: program (0, 0, 0) …`, opens the program-id
 *     picker; **Last program** shows program (3, 0, 0) and `mask: bool[1024] · 24 lanes masked`.
 * 61. **Show Values** above `shift_kernel` (triton_oob.py, a planted unmasked load one past the
 *     end): the Problems panel has `out-of-bounds load of in_ptr … program (3, 0, 0) lane 1023
 *     reads offset 4096, past its end`, and the lens counts it.
 * 62. **Debug Kernel** above `scale_kernel`: a debugpy session stops on the kernel's first body
 *     line (the Call Stack names `scale_kernel`); after two steps the Variables view shows
 *     `offs` as `int32[1024] 0 1 2 … 1023`, and expanded, its `block` (an ndarray).
 *
 * Run with `KERNEL_LENS_E2E_SCENARIOS=1,60,61,62` (1 trusts the workspace).
 */

function assert(condition, message) {
  if (!condition) throw new Error(message);
}

const INSIDE = "triton_inside.py";
const OOB = "triton_oob.py";
/** The first program's run: starts the agent, imports torch and triton. */
const VALUES_MS = 120_000;

/**
 * The after-line texts of the visible lines of the active editor: `[{line, after}]` (VS Code
 * draws a decoration's `after.contentText` as a `::after` pseudo-element of a span in the line).
 */
async function afterTexts(r) {
  return r.editor().evaluate((node) => {
    const out = [];
    for (const line of node.querySelectorAll(".view-line")) {
      const texts = [];
      for (const span of line.querySelectorAll("span")) {
        const content = getComputedStyle(span, "::after").content;
        if (content && content !== "none" && content !== "normal") {
          texts.push(content.replace(/^"|"$/g, "").replace(/\\"/g, '"'));
        }
      }
      if (texts.length > 0) {
        out.push({ line: line.textContent.replace(/\u00a0/g, " "), after: texts.join(" ") });
      }
    }
    return out;
  });
}

/** Waits until the line containing `lineText` has an after-text matching `pattern`. */
async function waitAfter(r, lineText, pattern, timeoutMs) {
  return r.until(
    `values matching ${pattern} after "${lineText}"`,
    async () => {
      const found = (await afterTexts(r)).find((t) => t.line.includes(lineText));
      return found !== undefined && pattern.test(found.after) ? found.after : null;
    },
    timeoutMs,
  );
}

/** @type {{name: string, run: (r: import('./ui.mjs').Run) => Promise<void>}[]} */
export const INTERP_SCENARIOS = [
  {
    name: "60. Show Values: each kernel line's values for a program, the hover's block, the program-id picker",
    async run(r) {
      await r.step(
        "Show Values above scale_kernel: values after each line",
        VALUES_MS,
        async () => {
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
        },
      );
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
        assert(
          /program \(0, 0, 0\) of grid 4 × 1 × 1/.test(hover),
          `hover: ${hover.slice(0, 300)}`,
        );
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
    },
  },
  {
    name: "61. an unmasked load past the end: a diagnostic on its line with program, lane and offset",
    async run(r) {
      await r.step(
        "Show Values above shift_kernel: the out-of-bounds load in Problems",
        VALUES_MS,
        async () => {
          await r.hidePanel();
          await r.command("View: Close All Editor Groups");
          await r.openFile(OOB);
          await r.clickLensAbove("def shift_kernel", /^Show Values$/, 30_000);
          await r.waitLensAbove("def shift_kernel", /1 out of bounds/, VALUES_MS - 20_000);
          await r.command("View: Focus Problems (Errors, Warnings, Infos)");
          const text = await r.until(
            "the out-of-bounds problem",
            async () => {
              const panel = await r.panelText();
              return /out-of-bounds load of in_ptr/.test(panel) ? panel.replace(/\s+/g, " ") : null;
            },
            15_000,
          );
          assert(
            /program \(3, 0, 0\) lane 1023 reads offset 4096, past its end/.test(text),
            `the problem lacks the program, lane or offset: ${text.slice(0, 400)}`,
          );
          const line = await r.lineIn(OOB, "x = tl.load(in_ptr + offs + 1)");
          assert(
            text.includes(`[Ln ${line}`),
            `the problem is not on line ${line}: ${text.slice(0, 400)}`,
          );
          r.log(`    problems: ${text.slice(0, 300)}`);
          await r.shot("values-out-of-bounds");
          await r.hidePanel();
        },
      );
    },
  },
  {
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
  },
];
