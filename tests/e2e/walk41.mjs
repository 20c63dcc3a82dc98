/**
 * Issue 41's editor checks at a 1280×800 window: Argument Types… from a failed compile (162),
 * and every lens action and Report column on screen with the explorer open and the Report beside
 * (163) — asserted on the elements' bounds, not on their text only.
 */
import { existsSync } from "node:fs";

const HAS_CUDA = existsSync("/dev/nvidiactl") || existsSync("/dev/nvidia0");
const SMALL = { width: 1280, height: 800 };
/** The window size of the other scenarios (`run.mjs`), put back after these. */
const USUAL = { width: 1400, height: 900 };
const PROFILE_MS = 90_000;

function assert(condition, message) {
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
async function rowOnScreen(r, lineText, pattern, timeoutMs) {
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
async function standalone(r) {
  if (r.page.url().startsWith("http")) return;
  await r.open(r.url);
  await r.until(
    "the workspace trust dialog",
    async () => /trust the authors/.test((await r.dialogText()) ?? ""),
    60_000,
  );
  await r.dialogButton("Yes, I trust the authors");
}

async function sidebarOpen(r) {
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

export const WALK41_SCENARIOS = [
  {
    name: "162. Argument Types… from a failed compile: offered in the failure's toast and the palette, prefilled with the guess",
    needs: () => (HAS_CUDA ? "a GPU machine runs the launch itself (exact types)" : null),
    async run(r) {
      const JIT = "@triton.jit";
      const FILE = "grouped_gather.py";
      await r.page.setViewportSize(SMALL);
      try {
        await r.step("a trusted workspace (standalone: open it and trust it)", 120_000, () =>
          standalone(r),
        );
        await r.step(
          "Show Assembly above gather_rows_kernel: the guess fails",
          150_000,
          async () => {
            await r.closeEverything();
            await r.command("Notifications: Clear All Notifications");
            await r.openFile(FILE);
            await r.gotoLine(await r.lineIn(FILE, "def gather_rows(a"));
            await r.clickLensAbove(JIT, /^Show Assembly$/, 30_000);
            await r.until("the stage picker", () =>
              r.page.locator(".quick-input-widget").isVisible(),
            );
            await r.page.keyboard.press("Enter");
            const toast = await r.until(
              "the failure's notification",
              async () =>
                (await r.toastTexts()).find((t) => /could not compile gather_rows_kernel/.test(t)),
              140_000,
            );
            r.log(`    toast: ${toast.slice(0, 200)}`);
            const box = r.page
              .locator(".notifications-toasts .notification-toast:visible")
              .filter({ hasText: "could not compile" })
              .first();
            const button = box.getByRole("button", { name: "Argument Types…" });
            assert((await button.count()) === 1, `no Argument Types… button: ${toast}`);
            assert(
              (await box.getByRole("button", { name: "Show details" }).count()) === 1,
              "no Show details button",
            );
            await r.shot("asm-failed-argument-types");
            await button.click();
          },
        );
        const picker = r.page.locator(".quick-input-widget");
        const row = (label) =>
          picker
            .locator(".quick-input-list .monaco-list-row")
            .filter({ has: r.page.locator(".label-name", { hasText: label }) })
            .first();
        await r.step(
          "the picker lists the types tried; indices_ptr → *i32 compiles",
          120_000,
          async () => {
            await r.until(
              "the parameter list with indices_ptr",
              () => row("indices_ptr").isVisible(),
              15_000,
            );
            const texts = await picker
              .locator(".quick-input-list .monaco-list-row")
              .evaluateAll((ns) => ns.map((n) => (n.textContent ?? "").replace(/\s+/g, " ")));
            r.log(`    items: ${JSON.stringify(texts)}`);
            assert(
              texts.some((t) => /indices_ptr.*\*fp32/.test(t)),
              `indices_ptr not prefilled with the guess *fp32: ${JSON.stringify(texts)}`,
            );
            assert(
              texts.some((t) => /BLOCK.*128/.test(t)),
              `no BLOCK = 128: ${JSON.stringify(texts)}`,
            );
            await r.shot("asm-failed-picker");
            await row("indices_ptr").click();
            await r.until("the pointer types", () => row("*i32").isVisible(), 15_000);
            await row("*i32").click();
            await r.until(
              "an editor group showing gather_rows_kernel.ptx",
              async () =>
                (await r.groupTitles()).includes("gather_rows_kernel.ptx") ? true : null,
              110_000,
            );
            const status = await r.until(
              "the status bar's 'types picked'",
              async () => {
                const text = await r.statusBarText();
                return /types picked/.test(text) ? text : null;
              },
              15_000,
            );
            r.log(`    status bar: ${status.match(/PTX[^$]*?picked/)?.[0] ?? status}`);
            await r.shot("asm-failed-then-picked");
          },
        );
        await r.step(
          "the palette's Argument Types… on the Python file: the pick kept",
          60_000,
          async () => {
            await r.openFile(FILE);
            await r.command("Kernel Lens: Argument Types…");
            await r.until("the parameter list", () => row("indices_ptr").isVisible(), 15_000);
            const texts = await picker
              .locator(".quick-input-list .monaco-list-row")
              .evaluateAll((ns) => ns.map((n) => (n.textContent ?? "").replace(/\s+/g, " ")));
            r.log(`    items: ${JSON.stringify(texts)}`);
            assert(
              texts.some((t) => /indices_ptr.*\*i32/.test(t)),
              `the pick is not shown: ${JSON.stringify(texts)}`,
            );
            await r.shot("asm-palette-argument-types");
            await r.page.keyboard.press("Escape");
            await r.closeEverything();
          },
        );
      } finally {
        await r.page.setViewportSize(USUAL);
      }
    },
  },
  {
    name: "163. at 1280×800 with the explorer open and the Report beside: every lens action and per-line column on screen",
    async run(r) {
      const FILE = "memory.py";
      const GROW = "def grow(n: int = 4):";
      await r.page.setViewportSize(SMALL);
      try {
        await r.step("a trusted workspace (standalone: open it and trust it)", 120_000, () =>
          standalone(r),
        );
        await r.step("Profile Memory of grow, the explorer open", PROFILE_MS + 30_000, async () => {
          await r.closeEverything();
          await r.command("View: Show Explorer");
          await r.openFile(FILE);
          const width = await sidebarOpen(r);
          assert(width > 0, "the explorer is not open");
          r.log(`    explorer: ${Math.round(width)} px`);
          await r.gotoLine(await r.lineIn(FILE, GROW));
          await r.waitLensAbove(GROW, /Profile|ms ±/, 60_000); // the server is up
          await r.clickInLine("c = torch.cat([a, b])", "cat");
          await r.command("Kernel Lens: Profile Memory of Function at Cursor");
          const said = await waitRowSays(r, GROW, /peak 48 MiB/, PROFILE_MS);
          r.log(
            `    the peak, in the ${said.text.includes("peak") ? "row" : "hover"}: ${said.said}`,
          );
          await r.parkMouse();
          await rowOnScreen(r, GROW, /Report/, 10_000);
          await r.shot("narrow-memory-row");
        });
        await r.step(
          "the Report beside: the row's actions and the table's columns on screen",
          60_000,
          async () => {
            await r.clickLensAbove(GROW, /^Report$/);
            const view = await r.waitWebview(
              "the report of grow",
              (v) => v.mode === "report" && v.title === "grow",
              30_000,
            );
            await r.command("View: Show Explorer");
            assert((await sidebarOpen(r)) > 0, "the explorer closed");
            await r.page
              .locator(".editor-group-container")
              .first()
              .click({ position: { x: 200, y: 200 } });
            await r.parkMouse();
            const row = await rowOnScreen(r, GROW, /Report/, 15_000);
            for (const action of ["Report", "More…"]) {
              assert(
                row.links.some((l) => l.text === action),
                `no ${action} on the row: ${row.text}`,
              );
            }
            assert(
              row.links.some((l) => /^Re-profile/.test(l.text)),
              `no Re-profile: ${row.text}`,
            );
            const table = await view.frame
              .locator("section.summary > .table-scroll > table.lines")
              .first()
              .evaluate((t) => {
                const width = document.documentElement.clientWidth;
                const heads = [...t.querySelectorAll("thead th")].map((th) => {
                  const b = th.getBoundingClientRect();
                  return { text: (th.textContent ?? "").trim(), right: Math.round(b.right) };
                });
                const cells = [...t.querySelectorAll("tbody td")].map((td) =>
                  Math.round(td.getBoundingClientRect().right),
                );
                return { width, heads, right: Math.max(0, ...cells) };
              });
            r.log(`    report ${table.width} px: ${JSON.stringify(table.heads)}`);
            for (const name of ["Line", "Source", "Op", "Share", "Calls"]) {
              const head = table.heads.find((h) => h.text.startsWith(name));
              assert(head !== undefined, `no ${name} column: ${JSON.stringify(table.heads)}`);
              assert(
                head.right <= table.width + 1,
                `${name} ends at ${head.right} px, past ${table.width}`,
              );
            }
            assert(
              table.right <= table.width + 1,
              `a cell ends at ${table.right} px, past ${table.width}`,
            );
            await view.frame
              .locator("section.summary > .table-scroll")
              .first()
              .scrollIntoViewIfNeeded();
            await r.shot("narrow-report-beside");
          },
        );
        await r.step(
          "an edit inside grow: the outdated row keeps Re-profile on screen",
          30_000,
          async () => {
            await r.clickInLine("del a", "del a");
            await r.page.keyboard.press("End");
            await r.page.keyboard.type("  # edited");
            await r.parkMouse();
            await rowOnScreen(r, GROW, /outdated.*Re-profile/, 15_000);
            await r.shot("narrow-outdated-row");
            await r.page.keyboard.press("Control+z");
          },
        );
        await r.step(
          "a GPU-only failure: its reason and Profile on screen",
          PROFILE_MS,
          async () => {
            if (HAS_CUDA) {
              r.log("    (skipped: the step runs on a GPU machine)");
              return;
            }
            const DEF = "def step(x):";
            await r.openFile("gpu_only_step.py");
            await r.clickLensAbove(DEF, /^Profile$/, 30_000);
            await r.parkMouse();
            const row = await rowOnScreen(r, DEF, /Profile failed/, PROFILE_MS - 10_000);
            assert(/needs a GPU|NVIDIA GPU/.test(row.text), `the reason is cut: ${row.text}`);
            assert(
              row.links.some((l) => l.text === "Profile"),
              `no Profile: ${row.text}`,
            );
            await r.shot("narrow-gpu-only-row");
          },
        );
      } finally {
        await r.page.setViewportSize(USUAL);
      }
      await r.step("close the editors", 15_000, async () => {
        await r.closeEverything();
      });
    },
  },
];
