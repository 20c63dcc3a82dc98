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
 *
 * The scenarios themselves are files of tests/e2e/scenarios/ (listed by its index.mjs); this
 * module keeps the helpers they share.
 */

export function assert(condition, message) {
  if (!condition) throw new Error(message);
}

export const KERNEL_FILE = "triton_fused_kernel.py";
export const REPORT = "triton_fused_full.ncu-rep";
export const HOT_LINE = "tmp2 = triton_helpers.maximum(tmp1, tmp0)";

/** `[{line, after}]`: the after-line texts of the visible lines of `editor`. */
export async function afterTexts(editor) {
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

export async function waitAfter(r, lineText, pattern, timeoutMs, editor = r.editor()) {
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
export async function heatBars(editor) {
  return editor.evaluate((node) => {
    let n = 0;
    // glyph-margin decorations: in the margin's overlays, or (newer VS Code) its widgets
    for (const el of node.querySelectorAll(".margin div, .glyph-margin-widgets div")) {
      if (getComputedStyle(el).backgroundImage.includes("data:image/svg+xml")) n += 1;
    }
    return n;
  });
}
