/** Scenario 32 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { assert } from "../common.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
  name: "32. a large trace file (300k events): progress while it is read, then its timeline",
  async run(r) {
    const name = "big_step.pt.trace.json";
    await r.step("write a 300k-event trace into the workspace", 60_000, async () => {
      // The recorded H200 step repeated end to end, ids kept apart (benchmarks/trace_synth.py).
      const base = JSON.parse(
        await readFile(path.join(r.workspace, "matmul_relu.pt.trace.json"), "utf8"),
      );
      const timed = base.traceEvents.filter((e) => e.ph !== "M" && e.cat !== "Trace");
      const stamps = timed.filter((e) => typeof e.ts === "number");
      const t0 = Math.min(...stamps.map((e) => e.ts));
      const t1 = Math.max(...stamps.map((e) => e.ts + (e.dur ?? 0)));
      const period = t1 - t0 + 10;
      const ids = ["External id", "correlation", "Record function id", "Ev Idx", "Python id"];
      const out = base.traceEvents.filter((e) => e.ph === "M" || e.cat === "Trace");
      for (let k = 0; out.length < 300_000; k++) {
        for (const e of timed) {
          const c = { ...e, ts: typeof e.ts === "number" ? e.ts + k * period : e.ts };
          if (typeof e.id === "number") c.id = e.id + k * 1_000_000;
          if (e.args && typeof e.args === "object") {
            c.args = { ...e.args };
            for (const key of ids) {
              if (Number.isInteger(c.args[key])) c.args[key] += k * 1_000_000;
            }
          }
          out.push(c);
        }
      }
      const { writeFile } = await import("node:fs/promises");
      await writeFile(path.join(r.workspace, name), JSON.stringify({ ...base, traceEvents: out }));
      r.log(`    ${out.length} events written to ${name}`);
    });
    await r.step(
      "open it: the viewer says it is reading, then draws the timeline",
      180_000,
      async () => {
        await r.openFromExplorer(name);
        const loading = await r.waitWebview(
          "the trace viewer reading the file",
          (v) => v.mode === "trace" && /Reading big_step/.test(v.text),
          30_000,
        );
        r.log(`    ${loading.text.split("\n").find((l) => /Reading big_step/.test(l))}`);
        await r.shot("big-trace-loading");
        const seen = new Set();
        const view = await r.until(
          "the timeline of the big trace",
          async () => {
            for (const v of await r.webviews()) {
              if (v.mode !== "trace") continue;
              const line = v.text.split("\n").find((l) => /Reading big_step.*%/.test(l));
              if (line) seen.add(line);
              if (/events shown/.test(v.text)) return v;
            }
            return null;
          },
          150_000,
          200,
        );
        r.log(`    progress seen: ${[...seen].slice(0, 4).join(" | ") || "(none caught)"}`);
        assert(view.tab === "Timeline", `the big trace opened on "${view.tab}", not Timeline`);
        r.log(`    ${view.text.split("\n").find((l) => /events shown/.test(l))}`);
        const drawn = await r.until(
          "a GPU stream lane drawn",
          async () => {
            const texts = await r.canvasText(view.frame);
            return texts.some((t) => /GPU \d+ · stream \d+/.test(t)) ? texts : null;
          },
          15_000,
        );
        r.log(`    ${drawn.length} texts drawn`);
        // Each lane's header names where its time goes, even where no event is wide enough
        // to carry its name.
        const most = drawn.filter((t) => /most time: .+ \d+%/.test(t));
        assert(most.length >= 3, `no "most time" in the lane headers: ${drawn.join(" | ")}`);
        r.log(`    ${most.map((t) => t.trim()).join("\n    ")}`);
        await r.shot("big-trace-timeline");
      },
    );
    await r.step("close the viewer", 15_000, async () => {
      await r.command("View: Close All Editor Groups");
    });
  },
};
