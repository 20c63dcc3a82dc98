/**
 * Scenario 160 (issue 35): inside the kernel, from a recorded Nsight Compute report (no GPU).
 *
 * `triton_fused_kernel.py` is Inductor's `triton_poi_fused_add_mul_relu_0` as the H200 report
 * `triton_fused_full.ncu-rep` embedded it (`--set full`, which has the SourceCounters section;
 * both copied into the workspace by `RECORDED_FILES`). **Kernel Lens: Kernel Lines from Nsight
 * Compute Report…** with the cursor in the kernel, the report picked:
 *
 * - after `tmp2 = triton_helpers.maximum(tmp1, tmp0)`: `71% of samples · long scoreboard
 *   (waiting on memory) · 19% of instructions · via maximum` (the inlined helper's instructions,
 *   which the line table gives to triton_helpers.py, folded onto its call);
 * - after the kernel's first line: `Kernel lines: 341 samples · 1 every 2,048 cycles …`;
 * - a heat bar in the gutter of the sampled lines;
 * - the hover of the hot line lists its SASS with samples (`FSETP.GEU.AND P0 … 239`);
 * - **Kernel Lens: Show Sampled SASS** opens the report's instructions beside, the hot one
 *   marked `◀ 239 samples (70%) · line 26`.
 *
 * Run with `KERNEL_LENS_E2E_SCENARIOS=1,160` (1 answers the trust prompt; reading a report runs
 * no user code, so trust is not needed for this one).
 */

function assert(condition, message) {
  if (!condition) throw new Error(message);
}

const KERNEL_FILE = "triton_fused_kernel.py";
const REPORT = "triton_fused_full.ncu-rep";
const HOT_LINE = "tmp2 = triton_helpers.maximum(tmp1, tmp0)";

/** `[{line, after}]`: the after-line texts of the visible lines of `editor`. */
async function afterTexts(editor) {
  return editor.evaluate((node) => {
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

async function waitAfter(r, lineText, pattern, timeoutMs, editor = r.editor()) {
  return r.until(
    `${pattern} after "${lineText}"`,
    async () => {
      const found = (await afterTexts(editor)).find((t) => t.line.includes(lineText));
      return found !== undefined && pattern.test(found.after) ? found.after : null;
    },
    timeoutMs,
  );
}

/** How many gutter icons (the heat bars: SVG data URIs) the editor's margin draws. */
async function heatBars(editor) {
  return editor.evaluate((node) => {
    let n = 0;
    // glyph-margin decorations: in the margin's overlays, or (newer VS Code) its widgets
    for (const el of node.querySelectorAll(".margin div, .glyph-margin-widgets div")) {
      if (getComputedStyle(el).backgroundImage.includes("data:image/svg+xml")) n += 1;
    }
    return n;
  });
}

/** @type {{name: string, run: (r: import('./ui.mjs').Run) => Promise<void>}[]} */
export const KERNEL_LINES_SCENARIOS = [
  {
    name: "160. Kernel Lines from a recorded report: shares and stalls on the kernel's lines, heat bars, the SASS hover, the sampled instructions marked",
    async run(r) {
      await r.step("Kernel Lines from the recorded report", 90_000, async () => {
        await r.hidePanel();
        await r.command("View: Close All Editor Groups");
        await r.openFile(KERNEL_FILE);
        await r.gotoLine(await r.lineIn(KERNEL_FILE, HOT_LINE), 5);
        await r.command("Kernel Lens: Kernel Lines from Nsight Compute Report…");
        const pick = r.page
          .locator(".quick-input-list .monaco-list-row")
          .filter({ hasText: REPORT })
          .first();
        await r.until(`the picker to list ${REPORT}`, () => pick.isVisible(), 15_000);
        await pick.click();
        await r.parkMouse();
        const hot = await waitAfter(
          r,
          HOT_LINE,
          /^71% of samples · long scoreboard \(waiting on memory\) · 19% of instructions · via maximum$/,
          60_000,
        );
        r.log(`    hot line: ${hot}`);
        const load = await waitAfter(r, "tmp0 = tl.load(in_ptr0", /of samples/, 5_000);
        r.log(`    load line: ${load}`);
        await r.gotoLine(await r.lineIn(KERNEL_FILE, "@triton_heuristics.pointwise("));
        const header = await waitAfter(
          r,
          "@triton_heuristics.pointwise(",
          /^⟵ Kernel lines: 341 samples · 1 every 2,048 cycles per SM sub-partition · 1 launch · 4\.16 µs per launch · hottest: line 26/,
          10_000,
        );
        r.log(`    header: ${header}`);
        await r.gotoLine(await r.lineIn(KERNEL_FILE, HOT_LINE), 5);
        const bars = await r.until(
          "heat bars in the gutter",
          async () => {
            const n = await heatBars(r.editor());
            return n >= 5 ? n : null;
          },
          10_000,
        );
        r.log(`    heat bars: ${bars}`);
        await r.shot("kernel-lines");
      });
      await r.step("the hot line's hover: its SASS with samples", 30_000, async () => {
        await r.hoverOn(HOT_LINE, "maximum");
        const hover = await r.until(
          "the kernel-line hover",
          async () => {
            const text = await r.hoverText();
            return text !== null && /FSETP\.GEU\.AND P0/.test(text) ? text : null;
          },
          15_000,
        );
        assert(/239/.test(hover), `the hover lacks the 239 samples: ${hover.slice(0, 300)}`);
        assert(/Folded here from maximum/.test(hover), `no helper named: ${hover.slice(0, 300)}`);
        r.log(`    hover: ${hover.split("\n").slice(0, 3).join(" / ")}`);
        await r.shot("kernel-lines-hover");
        await r.parkMouse();
        await r.page.keyboard.press("Escape");
      });
      await r.step("Show Sampled SASS: the hot instruction marked", 30_000, async () => {
        await r.command("Kernel Lens: Show Sampled SASS");
        const sass = r.editorIn(/\.sass$/);
        await sass.locator(".view-lines").waitFor({ timeout: 15_000 });
        const mark = await waitAfter(
          r,
          "FSETP.GEU.AND P0, PT, R2, RZ, PT",
          /^◀ 239 samples \(70%\) · line 26$/,
          15_000,
          sass,
        );
        r.log(`    mark: ${mark}`);
        await r.shot("kernel-lines-sass");
      });
    },
  },
  {
    name: "164. the blame from a recorded report: the strided load's line causes the stalls the store's line shows, and the assembly links them",
    async run(r) {
      const FILE = "tl_strided.py";
      const STRIDED = "y = tl.load(y_ptr + offs * STRIDE, mask=mask)";
      const STORE = "tl.store(out_ptr + offs, x + y, mask=mask)";
      await r.step("Kernel Lines from the recorded report, blamed", 90_000, async () => {
        await r.hidePanel();
        await r.command("View: Close All Editor Groups");
        await r.openFile(FILE);
        await r.gotoLine(await r.lineIn(FILE, STRIDED), 5);
        await r.command("Kernel Lens: Kernel Lines from Nsight Compute Report…");
        const pick = r.page
          .locator(".quick-input-list .monaco-list-row")
          .filter({ hasText: "tl_strided.ncu-rep" })
          .first();
        await r.until("the picker to list tl_strided.ncu-rep", () => pick.isVisible(), 15_000);
        await pick.click();
        await r.parkMouse();
        // both figures: where the warps waited (few samples here) and what they waited for
        const strided = await waitAfter(
          r,
          STRIDED,
          /^causes [89]\d% of stalls · global load, 32 sectors per request \(uncoalesced; ideal 4\) · \d+% of samples/,
          60_000,
        );
        r.log(`    strided load: ${strided}`);
        const store = await waitAfter(r, STORE, /9\d% of samples · drain/, 5_000);
        r.log(`    store: ${store}`);
        assert(!/causes [5-9]\d% of stalls/.test(store), `the store line causes: ${store}`);
        await r.shot("kernel-lines-blame");
      });
      await r.step(
        "the assembly links the waiting instruction and its culprit",
        30_000,
        async () => {
          await r.command("Kernel Lens: Show Sampled SASS");
          const sass = r.editorIn(/\.sass$/);
          await sass.locator(".view-lines").waitFor({ timeout: 15_000 });
          const marks = await r.until(
            "the blame's marks",
            async () => {
              const found = await afterTexts(sass);
              const culprit = found.find((t) => /causes [\d,]+ stalls: global load/.test(t.after));
              const waiter = found.find((t) => /waits on 0x[0-9a-f]{4}/.test(t.after));
              return culprit && waiter ? { culprit, waiter } : null;
            },
            15_000,
          );
          r.log(`    culprit: ${marks.culprit.after}`);
          r.log(`    waiter: ${marks.waiter.after}`);
          await r.shot("kernel-lines-blame-sass");
        },
      );
    },
  },
];
