/**
 * Issue 41's editor checks at a 1280×800 window: Argument Types… from a failed compile (162),
 * and every lens action and Report column on screen with the explorer open and the Report beside
 * (163) — asserted on the elements' bounds, not on their text only.
 *
 * The scenarios themselves are files of tests/e2e/scenarios/ (listed by its index.mjs); this
 * module keeps the helpers they share.
 */
import { existsSync } from "node:fs";

export const HAS_CUDA = existsSync("/dev/nvidiactl") || existsSync("/dev/nvidia0");
export const SMALL = { width: 1280, height: 800 };
/** The window size of the other scenarios (`run.mjs`), put back after these. */
export const USUAL = { width: 1400, height: 900 };
export const PROFILE_MS = 90_000;

export function assert(condition, message) {
  if (!condition) throw new Error(message);
}

/**
 * The lens row above the line containing `lineText` in the active editor, with each link's
 * bounds and the right edge of what the editor shows (its text area, left of the minimap).
 */
async function rowBounds(r, lineText) {
  return r.editor().evaluate((root, needle) => {
    const norm = (s) => s.replace(/\u00a0/g, " ").trim();
    const line = [...root.querySelectorAll(".view-line")].find((n) =>
      norm(n.textContent).includes(needle),
    );
    if (!line) return null;
    const top = line.getBoundingClientRect().top;
    const row = [...root.querySelectorAll(".codelens-decoration")]
      .map((d) => ({ d, r: d.getBoundingClientRect() }))
      .filter(({ r }) => r.bottom <= top + 2 && r.bottom > top - r.height * 1.5 - 2)
      .sort((a, b) => b.r.bottom - a.r.bottom)[0];
    if (!row) return null;
    const guard = root.querySelector(".overflow-guard") ?? root;
    const minimap = root.querySelector(".minimap");
    const mm = minimap?.getBoundingClientRect();
    let limit = guard.getBoundingClientRect().right;
    if (mm && mm.width > 0) limit = Math.min(limit, mm.left);
    return {
      text: norm(row.d.textContent),
      limit: Math.round(limit),
      links: [...row.d.querySelectorAll("a")].map((a) => {
        const b = a.getBoundingClientRect();
        return {
          text: norm(a.textContent),
          title: a.getAttribute("title") ?? "",
          left: Math.round(b.left),
          right: Math.round(b.right),
        };
      }),
    };
  }, lineText);
}

/** Waits for the row above `lineText` to match `pattern`, then asserts every link is on screen. */
export async function rowOnScreen(r, lineText, pattern, timeoutMs) {
  await r.waitLensAbove(lineText, pattern, timeoutMs);
  const row = await rowBounds(r, lineText);
  assert(row !== null, `no lens row above "${lineText}"`);
  const left = row.links[0]?.left ?? 0;
  const used = (row.links.at(-1)?.right ?? left) - left;
  r.log(`    row: ${used} of ${row.limit - left} px, ${row.text.length} characters: ${row.text}`);
  for (const link of row.links) {
    assert(
      link.right <= row.limit + 1,
      `"${link.text}" ends at ${link.right} px, past the editor's ${row.limit} px: ${row.text}`,
    );
  }
  return row;
}

/** Run alone (`KERNEL_LENS_E2E_SCENARIOS=163`): open the workbench and trust the folder. */
export async function standalone(r) {
  if (r.page.url().startsWith("http")) return;
  await r.open(r.url);
  await r.until(
    "the workspace trust dialog",
    async () => /trust the authors/.test((await r.dialogText()) ?? ""),
    60_000,
  );
  await r.dialogButton("Yes, I trust the authors");
}

export async function sidebarOpen(r) {
  const box = await r.page.locator(".part.sidebar").first().boundingBox();
  return box !== null && box.width > 100 ? box.width : 0;
}

/**
 * Waits for the row above `lineText` to say `pattern` in its text or in a link's hover (a row
 * too long for a narrow editor folds the rest of its first lens into that lens's tooltip).
 */
export async function waitRowSays(r, lineText, pattern, timeoutMs) {
  return r.until(
    `${pattern} in the row above "${lineText}" or its hover`,
    async () => {
      const row = await rowBounds(r, lineText);
      if (row === null) return null;
      const said = [row.text, ...row.links.map((l) => l.title)].find((t) => pattern.test(t));
      return said === undefined ? null : { ...row, said };
    },
    timeoutMs,
  );
}
