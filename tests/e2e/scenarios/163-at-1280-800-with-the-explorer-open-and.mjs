/** Scenario 163 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import {
  HAS_CUDA,
  PROFILE_MS,
  SMALL,
  USUAL,
  assert,
  rowOnScreen,
  sidebarOpen,
  standalone,
  waitRowSays,
} from "../walk41.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
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
        r.log(`    the peak, in the ${said.text.includes("peak") ? "row" : "hover"}: ${said.said}`);
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
      await r.step("a GPU-only failure: its reason and Profile on screen", PROFILE_MS, async () => {
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
      });
    } finally {
      await r.page.setViewportSize(USUAL);
    }
    await r.step("close the editors", 15_000, async () => {
      await r.closeEverything();
    });
  },
};
