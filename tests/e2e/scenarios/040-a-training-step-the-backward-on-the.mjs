/** Scenario 40 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { PROFILE_MS, SUMMARY, assert } from "../common.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "40. a training step: the backward on the forward lines, the pass on loss.backward(), the context kept",
  async run(r) {
    const FILE = "train_step.py";
    const STEP = "def train_step(model, opt, x, y):";
    await r.step("Profile train_step: inputs from the script's run", PROFILE_MS, async () => {
      await r.closeEverything();
      await r.openFile(FILE);
      await r.gotoLine(await r.lineIn(FILE, STEP));
      await r.clickLensAbove(STEP, /^Profile$/, 30_000);
      const row = await r.waitLensAbove(STEP, SUMMARY, PROFILE_MS - 15_000);
      r.log(`    summary: ${row.text}`);
    });
    await r.step(
      "the forward line carries its backward; loss.backward() the pass",
      30_000,
      async () => {
        const fwd = await r.waitLensAbove("out = model(x)", /fwd \d+% · bwd \d+% · /, 15_000);
        r.log(`    forward line: ${fwd.text}`);
        const bwd = await r.waitLensAbove(
          "loss.backward()",
          /backward pass .* spread over lines \d+–\d+/,
          15_000,
        );
        r.log(`    backward line: ${bwd.text}`);
        assert(
          !/evaluate_function|AddmmBackward0/.test(bwd.text),
          `nodes left on loss.backward(): ${bwd.text}`,
        );
        await r.shot("training-step-lenses");
      },
    );
    await r.step("the hover lists the backward nodes the line caused", 30_000, async () => {
      await r.hoverOn("out = model(x)", "model");
      const text = await r.until(
        "a hover with the backward part",
        async () => {
          const hover = await r.hoverText();
          return hover?.includes("Backward caused by this line") ? hover : null;
        },
        15_000,
      );
      assert(text.includes("AddmmBackward0"), `no AddmmBackward0 in the hover: ${text}`);
      r.log(`    hover: ${text.replace(/\s+/g, " ").slice(0, 300)}`);
      await r.shot("training-step-hover");
      await r.page.mouse.move(5, 400);
      await r.page.keyboard.press("Escape");
    });
    await r.step(
      "forward_bf16 runs under the autocast the script called it in",
      PROFILE_MS,
      async () => {
        const DEF = "def forward_bf16(model, x):";
        // From the palette with the cursor in the function (the lens row above it can be
        // re-rendered under a click while the train_step lenses settle).
        await r.gotoLine(await r.lineIn(FILE, DEF));
        await r.clickInLine("h = model.fc1(x)", "fc1");
        await r.command("Kernel Lens: Profile Function at Cursor");
        await r.waitLensAbove(DEF, SUMMARY, PROFILE_MS - 30_000);
        await r.hoverOn("h = model.fc1(x)", "fc1");
        const text = await r.until(
          "a hover naming the calling context",
          async () => {
            const hover = await r.hoverText();
            return hover?.includes("captured at") ? hover : null;
          },
          15_000,
        );
        assert(
          text.includes("autocast cpu bfloat16 · no_grad"),
          `the hover does not say the calling context: ${text}`,
        );
        r.log(`    hover: ${text.replace(/\s+/g, " ").slice(0, 300)}`);
        await r.shot("captured-context-hover");
        await r.page.mouse.move(5, 400);
        await r.page.keyboard.press("Escape");
      },
    );
    await r.step(
      "train_step's Report at 1000, 1400 and 1920 px: tabs, source lines and calls all shown",
      90_000,
      async () => {
        const STEP = "def train_step(model, opt, x, y):";
        // From the palette with the cursor in it (a lens clicked while the row is re-rendered
        // after the last profile names a command VS Code has already dropped).
        await r.gotoLine((await r.lineIn(FILE, STEP)) + 1);
        await r.command("Kernel Lens: Show Report");
        const view = await r.waitWebview(
          "train_step's Report with its per-line table",
          (v) => v.mode === "report" && /train_step/.test(v.title) && /Per line/.test(v.text),
          45_000,
        );
        try {
          for (const width of [1000, 1400, 1920]) {
            await r.page.setViewportSize({ width, height: 900 });
            let last = null;
            const fit = await r.until(
              `the Report laid out at ${width} px`,
              async () => {
                const m = await view.frame.evaluate(() => {
                  const doc = document.documentElement.clientWidth;
                  const tabs = [...document.querySelectorAll('[role="tab"]')].map(
                    (t) => t.getBoundingClientRect().right,
                  );
                  const codes = [...document.querySelectorAll("table.lines td.source code")];
                  const ops = [...document.querySelectorAll("table.lines td.op")];
                  const heads = [...document.querySelectorAll("table.lines th")];
                  const calls = heads.find((h) => h.textContent === "Calls");
                  const scroller = document.querySelector(".table-scroll");
                  return {
                    doc,
                    tabsRight: Math.max(...tabs),
                    sourceMin: Math.min(...codes.map((c) => c.getBoundingClientRect().width)),
                    opMin: Math.min(...ops.map((c) => c.getBoundingClientRect().width)),
                    sourceLines: Math.max(
                      ...codes.map((c) => Math.round(c.getBoundingClientRect().height)),
                    ),
                    lineHeight: codes.length
                      ? parseFloat(getComputedStyle(codes[0]).lineHeight) || 18
                      : 18,
                    callsRight: calls ? calls.getBoundingClientRect().right : 0,
                    scrollable: scroller ? scroller.scrollWidth > scroller.clientWidth : false,
                  };
                });
                // Laid out once the panel's width holds still between two looks.
                const same = last !== null && last.doc === m.doc;
                last = m;
                return same && m.doc > 0 && m.callsRight > 0 ? m : null;
              },
              15_000,
            );
            r.log(`    ${width} px: ${JSON.stringify(fit)}`);
            assert(fit.tabsRight <= fit.doc + 1, `a tab is cut at ${width} px`);
            assert(fit.sourceMin >= 80, `the Source column is squeezed at ${width} px`);
            assert(fit.opMin >= 100, `the Op column is squeezed at ${width} px`);
            assert(
              fit.sourceLines <= fit.lineHeight * 1.6,
              `a source line wraps at ${width} px (${fit.sourceLines} px high)`,
            );
            // From 1400 px every column is in view; in the narrower panel the table scrolls.
            assert(
              fit.callsRight <= fit.doc + 1 || (width < 1400 && fit.scrollable),
              `the Calls column is cut at ${width} px`,
            );
            await r.shot(`report-width-${width}`);
          }
        } finally {
          await r.page.setViewportSize({ width: 1400, height: 900 });
        }
      },
    );
    await r.step(
      "Reload Window: the Report comes back on train_step, no empty editor group",
      150_000,
      async () => {
        await r.reloadWindow();
        const view = await r.waitWebview(
          "train_step's Report after the reload",
          (v) => v.mode === "report" && /train_step/.test(v.title) && /Per line/.test(v.text),
          120_000,
        );
        const titles = await r.groupTitles();
        r.log(`    editor groups: ${titles.join(" | ")}; report tab: ${view.tab}`);
        assert(!titles.includes(""), `an empty editor group after the reload: ${titles}`);
        await r.shot("report-restored-after-reload");
      },
    );
  },
};
