/** Scenario 45 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { PROFILE_MS, assert } from "../common.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "45. Profile Memory: what each line of a CPU function allocates, its peak, what is alive at it",
  async run(r) {
    const FILE = "memory.py";
    const GROW = "def grow(n: int = 4):";
    const PANEL = "Kernel Lens: grow";
    await r.step("Profile Memory from the palette, the cursor in grow", PROFILE_MS, async () => {
      await r.closeEverything();
      await r.openFile(FILE);
      await r.gotoLine(await r.lineIn(FILE, GROW));
      await r.clickInLine("c = torch.cat([a, b])", "cat");
      await r.command("Kernel Lens: Profile Memory of Function at Cursor");
      const row = await r.waitLensAbove(GROW, /peak 48 MiB at line \d+/, PROFILE_MS - 15_000);
      r.log(`    summary: ${row.text}`);
    });
    await r.step("each line: the bytes it allocated or freed, the live total", 30_000, async () => {
      // 4 Mi float32 = 16 MiB, 2 Mi = 8 MiB, their cat 24 MiB, then `del a` frees 16 MiB
      for (const [line, pattern] of [
        ["a = torch.ones(n * MIB", /CPU \+16 MiB · live 16 MiB/],
        ["b = torch.ones(n * MIB // 2", /CPU \+8 MiB · live 24 MiB/],
        ["c = torch.cat([a, b])", /CPU \+24 MiB · live 48 MiB/],
        ["del a", /CPU −16 MiB · live 32 MiB/],
      ]) {
        const lens = await r.waitLensAbove(line, pattern, 15_000);
        r.log(`    ${line}: ${lens.text}`);
      }
      await r.parkMouse();
      await r.shot("memory-lenses");
    });
    await r.step("the peak line's hover lists what was alive, by line", 30_000, async () => {
      await r.hoverOn("c = torch.cat([a, b])", "cat");
      const text = await r.until(
        "a hover with the peak",
        async () => {
          const hover = await r.hoverText();
          return hover?.includes("Peak") ? hover : null;
        },
        15_000,
      );
      for (const part of ["24 MiB from line", "16 MiB from line", "8 MiB from line"]) {
        assert(text.includes(part), `no "${part}" in the hover: ${text}`);
      }
      r.log(`    hover: ${text.replace(/\s+/g, " ").slice(0, 400)}`);
      await r.shot("memory-hover");
      await r.page.mouse.move(5, 400);
      await r.page.keyboard.press("Escape");
    });
    await r.step("the Report: the memory lane and the live-at-peak list", 45_000, async () => {
      await r.clickLensAbove(GROW, /^Report$/);
      const view = await r.waitWebview(
        "the report of grow with its memory",
        (v) =>
          v.mode === "report" && v.title === "grow" && /Memory · CPU · peak 48 MiB/.test(v.text),
        30_000,
      );
      const rows = await view.frame.locator("table.memory-live tbody tr").allInnerTexts();
      const norm = rows.map((t) => t.replace(/\s+/g, " ").trim());
      r.log(`    alive at the peak: ${norm.join(" | ")}`);
      assert(norm[0]?.startsWith("24 MiB"), `the largest group is not first: ${norm}`);
      assert((await view.frame.locator("svg.memory-lane path").count()) === 1, "no memory lane");
      await r.parkMouse();
      await r.shot("memory-report");
      await view.frame.getByRole("tab", { name: "Timeline" }).click();
      await r.until(
        "a memory lane in the timeline",
        async () =>
          (await view.frame.locator("section.timeline canvas.timeline-memory").count()) > 0
            ? true
            : null,
        15_000,
      );
      await r.parkMouse();
      await r.shot("memory-timeline");
      assert((await r.groupTitles()).includes(PANEL), `no "${PANEL}" editor`);
    });
  },
};
