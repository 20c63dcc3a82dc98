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
 *
 * The scenarios themselves are files of tests/e2e/scenarios/ (listed by its index.mjs); this
 * module keeps the helpers they share.
 */

export function assert(condition, message) {
  if (!condition) throw new Error(message);
}

export const INSIDE = "triton_inside.py";
export const OOB = "triton_oob.py";
/** The first program's run: starts the agent, imports torch and triton. */
export const VALUES_MS = 120_000;

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
export async function waitAfter(r, lineText, pattern, timeoutMs) {
  return r.until(
    `values matching ${pattern} after "${lineText}"`,
    async () => {
      const found = (await afterTexts(r)).find((t) => t.line.includes(lineText));
      return found !== undefined && pattern.test(found.after) ? found.after : null;
    },
    timeoutMs,
  );
}
