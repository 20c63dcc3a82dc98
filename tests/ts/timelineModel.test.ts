/**
 * The report webview's DOM-free maths: the timeline's time <-> pixel mapping, zoom around a
 * point, panning, tick steps and labels, lane layout, culling and hit testing (also on the
 * recorded H200 timeline); the sweep chart's series and the values box; number formatting.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import type { SweepResult, Timeline, TimelineEvent } from "../../extension/generated/wire";
import {
  formatBytes,
  formatCount,
  formatGbs,
  formatMs,
  formatPct,
  formatUs,
  significant,
} from "../../extension/report/webview/format";
import { log2Ticks, parseValues, sweepSeries } from "../../extension/report/webview/sweepData";
import {
  DEFAULT_METRICS,
  MIN_SPAN_US,
  categoryColor,
  clampView,
  covers,
  describeEvent,
  detailWindow,
  fitText,
  fullView,
  hitTest,
  layoutLanes,
  mergedAlpha,
  needsDetail,
  niceStep,
  reducedScale,
  legendFor,
  panBy,
  tickLabel,
  ticks,
  TOP_NAME_CHARS,
  timeToX,
  topText,
  visibleBoxes,
  visibleRange,
  wheelZoomFactor,
  withDetail,
  xToTime,
  zoomAround,
} from "../../extension/report/webview/timelineModel";

const ROOT = path.resolve(__dirname, "..", "..");
const RECORDED = JSON.parse(
  readFileSync(path.join(ROOT, "tests", "data", "report", "matmul_relu_timeline.json"), "utf8"),
) as Timeline;

const close = (actual: number, expected: number, eps = 1e-9): void =>
  assert.ok(Math.abs(actual - expected) <= eps, `${actual} != ${expected}`);

function ev(start: number, dur: number, extra: Partial<TimelineEvent> = {}): TimelineEvent {
  return {
    start,
    dur,
    depth: 0,
    name: `e${start}`,
    short: `e${start}`,
    cat: "kernel",
    line: null,
    ...extra,
  };
}

function timelineOf(...lanes: TimelineEvent[][]): Timeline {
  const all = lanes.flat();
  return {
    span_us: Math.max(...all.map((e) => e.start + e.dur)),
    event_count: all.length,
    kept: all.length,
    lanes: lanes.map((events, i) => ({ id: `l${i}`, title: `lane ${i}`, kind: "gpu", events })),
  };
}

describe("timeline: time and pixels", () => {
  const view = { start: 100, end: 300 };

  it("maps time to x and back", () => {
    assert.equal(timeToX(100, view, 800), 0);
    assert.equal(timeToX(300, view, 800), 800);
    assert.equal(timeToX(150, view, 800), 200);
    assert.equal(xToTime(200, view, 800), 150);
    for (const t of [100, 123.456, 299.9]) {
      close(xToTime(timeToX(t, view, 640), view, 640), t);
    }
  });

  it("starts on the whole trace with a 1% margin", () => {
    assert.deepEqual(fullView(1000), { start: -10, end: 1010 });
  });

  it("zooms around the pointer: the time under it stays under it", () => {
    const bounds = fullView(10_000);
    const start = { start: 0, end: 10_000 };
    const anchor = 2500;
    const x = timeToX(anchor, start, 1000);
    const zoomed = zoomAround(start, anchor, 0.5, bounds);
    close(zoomed.end - zoomed.start, 5000);
    close(timeToX(anchor, zoomed, 1000), x);
    const back = zoomAround(zoomed, anchor, 2, bounds);
    close(back.start, 0, 1e-6);
    close(back.end, 10_000, 1e-6);
  });

  it("stops zooming at 50 ns and at the whole trace", () => {
    const bounds = fullView(10_000);
    let view = bounds;
    for (let i = 0; i < 100; i += 1) {
      view = zoomAround(view, 1234, 0.5, bounds);
    }
    close(view.end - view.start, MIN_SPAN_US);
    assert.ok(view.start <= 1234 && 1234 <= view.end);
    const out = zoomAround({ start: 10, end: 20 }, 15, 1e6, bounds);
    assert.deepEqual(out, bounds);
  });

  it("keeps a zoomed view inside the trace near its edges", () => {
    const bounds = { start: 0, end: 1000 };
    const view = zoomAround({ start: 0, end: 100 }, 0, 3, bounds);
    assert.deepEqual(view, { start: 0, end: 300 });
    assert.deepEqual(clampView({ start: 950, end: 1050 }, bounds), { start: 900, end: 1000 });
    assert.deepEqual(clampView({ start: -50, end: 50 }, bounds), { start: 0, end: 100 });
  });

  it("pans with the drag and stops at the edges", () => {
    const bounds = { start: 0, end: 1000 };
    const view = { start: 400, end: 500 };
    assert.deepEqual(panBy(view, 100, 1000, bounds), { start: 390, end: 490 });
    assert.deepEqual(panBy(view, -100, 1000, bounds), { start: 410, end: 510 });
    assert.deepEqual(panBy(view, 1e6, 1000, bounds), { start: 0, end: 100 });
  });

  it("zooms by wheel symmetrically, in pixels, lines or pages", () => {
    close(wheelZoomFactor(100, 0) * wheelZoomFactor(-100, 0), 1);
    assert.ok(wheelZoomFactor(100, 0) > 1 && wheelZoomFactor(-100, 0) < 1);
    close(wheelZoomFactor(3, 1), wheelZoomFactor(48, 0));
    assert.ok(Number.isFinite(wheelZoomFactor(1e9, 2)));
  });
});

describe("timeline: axis", () => {
  it("rounds steps up to 1, 2 or 5 times a power of ten", () => {
    assert.equal(niceStep(1), 1);
    assert.equal(niceStep(1.2), 2);
    assert.equal(niceStep(2), 2);
    assert.equal(niceStep(3), 5);
    assert.equal(niceStep(7), 10);
    assert.equal(niceStep(180), 200);
    close(niceStep(0.031), 0.05);
  });

  it("labels ticks in the unit of the step, with the decimals it needs", () => {
    assert.equal(tickLabel(4200, 200), "4.2 ms");
    assert.equal(tickLabel(4000, 1000), "4 ms");
    assert.equal(tickLabel(4250, 50), "4250 µs");
    assert.equal(tickLabel(1.5, 0.5), "1.5 µs");
    assert.equal(tickLabel(0.15, 0.05), "150 ns");
    assert.equal(tickLabel(2e6, 5e5), "2.0 s");
    assert.equal(tickLabel(-1e-12, 10), "0 µs");
  });

  it("puts ticks at round times at least 90 px apart", () => {
    const view = { start: 0, end: 5170 };
    const list = ticks(view, 1000);
    assert.deepEqual(
      list.map((t) => t.label),
      [
        "0.0 ms",
        "0.5 ms",
        "1.0 ms",
        "1.5 ms",
        "2.0 ms",
        "2.5 ms",
        "3.0 ms",
        "3.5 ms",
        "4.0 ms",
        "4.5 ms",
        "5.0 ms",
      ],
    );
    for (let i = 1; i < list.length; i += 1) {
      assert.ok((list[i]?.x ?? 0) - (list[i - 1]?.x ?? 0) >= 90);
    }
    assert.deepEqual(ticks(view, 0), []);
    const fine = ticks({ start: 4310.3, end: 4310.5 }, 800);
    assert.ok(fine.length >= 2);
    assert.ok(fine.every((t) => t.label.endsWith(" ns")));
  });
});

describe("timeline: layout, culling and hits", () => {
  const nested = timelineOf(
    [
      ev(0, 100, { depth: 0, cat: "cpu_op" }),
      ev(10, 20, { depth: 1, cat: "cpu_op" }),
      ev(50, 10, { depth: 1 }),
    ],
    [ev(5, 1), ev(40, 2, { line: 11 })],
  );

  it("gives each lane a header band and each depth a row", () => {
    const { lanes, rows, height } = layoutLanes(nested);
    const { header, row } = DEFAULT_METRICS;
    assert.deepEqual(
      lanes.map((l) => l.y),
      [0, header + 2 * row],
    );
    assert.deepEqual(
      rows.map((r) => [r.lane, r.depth, r.y, r.events.length]),
      [
        [0, 0, header, 1],
        [0, 1, header + row, 2],
        [1, 0, 2 * header + 2 * row, 2],
      ],
    );
    assert.equal(height, 2 * header + 3 * row);
  });

  it("lays out the recorded H200 timeline: CPU threads, runtime, one GPU stream", () => {
    const { lanes, rows } = layoutLanes(RECORDED);
    assert.deepEqual(
      lanes.map((l) => l.kind),
      ["cpu", "cpu", "runtime", "gpu"],
    );
    assert.equal(
      rows.reduce((n, r) => n + r.events.length, 0),
      RECORDED.kept,
    );
    const gpu = rows.find((r) => lanes[r.lane]?.kind === "gpu");
    assert.deepEqual(
      gpu?.events.map((e) => e.line),
      [10, 11, 11],
    );
    // Each lane's header says where its time goes (the server's own-time ranking).
    assert.equal(
      lanes.find((l) => l.kind === "gpu")?.top,
      "most time: sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize1… 93% · " +
        "vectorized_elementwise_kernel 7%",
    );
    assert.match(
      lanes.find((l) => l.kind === "runtime")?.top ?? "",
      /^most time: cudaLaunchKernelExC 48% · /,
    );
  });

  it("a lane's 'most time' line: shares rounded, <1% and 100% said so, long names cut", () => {
    assert.equal(topText(undefined), "");
    assert.equal(topText([]), "");
    assert.equal(
      topText([
        { name: "aten::addmm", us: 50, share: 0.416_7 },
        { name: "x".repeat(TOP_NAME_CHARS + 5), us: 1, share: 0.004 },
      ]),
      `most time: aten::addmm 42% · ${"x".repeat(TOP_NAME_CHARS - 1)}… <1%`,
    );
    assert.equal(topText([{ name: "k", us: 9, share: 0.999 }]), "most time: k 100%");
    // Lanes without the field (an older server) have no line.
    assert.equal(layoutLanes(timelineOf([ev(0, 1)])).lanes[0]?.top, "");
  });

  it("culls to the visible range with binary searches, long events included", () => {
    const events = [ev(0, 1000), ...Array.from({ length: 10_000 }, (_, i) => ev(1000 + i * 10, 5))];
    const { rows } = layoutLanes(timelineOf(events));
    const row = rows[0];
    assert.ok(row !== undefined);
    // An event that started long before the view but is still running is drawn.
    assert.deepEqual(visibleRange(row, { start: 500, end: 600 }), { from: 0, to: 1 });
    const { from, to } = visibleRange(row, { start: 50_000, end: 50_100 });
    assert.ok(to - from <= 12, `${to - from} events`);
    assert.ok(
      row.events.slice(from, to).every((e) => e.start <= 50_100 && e.start + e.dur >= 50_000 - 10),
    );
    assert.deepEqual(
      visibleRange(row, { start: 1e9, end: 2e9 }).to -
        visibleRange(row, { start: 1e9, end: 2e9 }).from,
      0,
    );
  });

  it("folds events under a pixel wide into a few boxes", () => {
    const events = Array.from({ length: 10_000 }, (_, i) => ev(i, 0.5));
    const { rows } = layoutLanes(timelineOf(events));
    const row = rows[0];
    assert.ok(row !== undefined);
    const boxes = visibleBoxes(row, { start: 0, end: 10_000 }, 500);
    assert.ok(boxes.length <= 500, `${boxes.length} boxes for 500 px`);
    assert.equal(
      boxes.reduce((n, b) => n + 1 + b.hidden, 0),
      10_000,
    );
    assert.ok(boxes.every((b) => b.w >= 1));
    // Zoomed in, every event gets its own box.
    const near = visibleBoxes(row, { start: 100, end: 110 }, 1000);
    assert.equal(near.length, 11);
    assert.ok(near.every((b) => b.hidden === 0));
  });

  it("finds the event under the pointer, with a few pixels of slop for thin ones", () => {
    const { rows } = layoutLanes(nested);
    const view = { start: 0, end: 100 };
    const { header, row } = DEFAULT_METRICS;
    const at = (t: number, y: number) =>
      hitTest(rows, DEFAULT_METRICS, view, 1000, timeToX(t, view, 1000), y);
    assert.equal(at(20, header + row + 5)?.name, "e10");
    assert.equal(at(20, header + 5)?.name, "e0");
    assert.equal(at(45, header + row + 5), undefined);
    const gpuY = 2 * header + 2 * row + 5;
    assert.equal(at(41, gpuY)?.line, 11);
    // 0.2 µs past the 1 µs kernel's end is 2 px at this zoom: still a hit.
    assert.equal(at(6.2, gpuY)?.name, "e5");
    assert.equal(at(30, gpuY), undefined);
    assert.equal(hitTest(rows, DEFAULT_METRICS, view, 1000, 10, 10_000), undefined);
  });

  it("colours categories with the theme's chart colours", () => {
    assert.equal(categoryColor("kernel"), "--vscode-charts-blue");
    assert.equal(categoryColor("cpu_op"), "--vscode-charts-green");
    assert.equal(categoryColor("cuda_runtime"), "--vscode-charts-red");
    assert.equal(categoryColor("something new"), "--vscode-charts-lines");
  });

  it("cuts labels to fit, with an ellipsis", () => {
    const measure = (s: string) => s.length * 7;
    assert.equal(
      fitText("vectorized_elementwise_kernel", 1000, measure),
      "vectorized_elementwise_kernel",
    );
    assert.equal(fitText("vectorized_elementwise_kernel", 70, measure), "vectorize…");
    assert.equal(fitText("vectorized", 10, measure), "");
  });

  it("describes an event, a merged block and its line for the tooltip", () => {
    const kernel = ev(4310.4, 56.513, { name: "void k<4, F<float> >(int)", line: 10 });
    assert.deepEqual(describeEvent(kernel, formatUs), [
      "void k<4, F<float> >(int)",
      "56.5 µs · starts at 4.31 ms",
      "kernel · line 10",
    ]);
    const merged = ev(0, 3, { name: "12 events", merged: true, count: 12, cat: "cpu_op" });
    assert.equal(describeEvent(merged, formatUs)[0], "12 events (merged)");
  });
});

describe("timeline: detail when zoomed in", () => {
  const merged = (start: number, dur: number, count: number): TimelineEvent =>
    ev(start, dur, { merged: true, count, name: `${count} events` });

  it("asks for detail only where merged blocks could be told apart", () => {
    const overview = { ...timelineOf([ev(0, 4000), merged(5000, 3, 12), ev(10_000, 10)]) };
    // 10 ms over 1000 px: 10 µs a pixel; the 2.5 µs merge threshold is finer.
    assert.equal(needsDetail(overview, { start: 0, end: 10_000 }, 1000), false);
    // 1 µs a pixel: the merged events could be seen apart.
    assert.equal(needsDetail(overview, { start: 4500, end: 5500 }, 1000), true);
    const plain = timelineOf([ev(0, 4000), ev(10_000, 10)]);
    assert.equal(needsDetail(plain, { start: 4500, end: 5500 }, 1000), false);
    const detail = { ...overview, window: [4000, 6000] as [number, number] };
    assert.equal(reducedScale(detail), 2000);
    assert.equal(needsDetail(detail, { start: 4500, end: 5500 }, 1000), false);
  });

  it("asks for the view and half its width each side, inside the trace", () => {
    assert.deepEqual(detailWindow({ start: 4500, end: 5500 }, 10_000), [4000, 6000]);
    assert.deepEqual(detailWindow({ start: -10, end: 90 }, 10_000), [0, 140]);
    assert.deepEqual(detailWindow({ start: 9950, end: 10_010 }, 10_000), [9920, 10_000]);
  });

  it("uses a detail window while it covers the view", () => {
    assert.equal(covers([4000, 6000], { start: 4500, end: 5500 }, 10_000), true);
    assert.equal(covers([4000, 6000], { start: 3900, end: 5500 }, 10_000), false);
    // The margins beyond the trace's ends need no events.
    assert.equal(covers([0, 140], { start: -10, end: 90 }, 10_000), true);
  });

  it("puts the detail's events in the overview's rows, by lane and depth", () => {
    const overview = timelineOf(
      [ev(0, 100, { depth: 0 }), merged(10, 5, 3)].map((e, i) => ({ ...e, depth: i })),
      [merged(0, 50, 40)],
    );
    const { rows } = layoutLanes(overview);
    const detail: Timeline = {
      ...overview,
      window: [0, 60],
      lanes: [
        { id: "l1", title: "lane 1", kind: "gpu", events: [ev(20, 1), ev(2, 1)] },
        { id: "l0", title: "lane 0", kind: "gpu", events: [ev(11, 1, { depth: 1 })] },
      ],
    };
    const next = withDetail(rows, ["l0", "l1"], detail);
    assert.deepEqual(
      next.map((r) => [r.lane, r.depth, r.y]),
      rows.map((r) => [r.lane, r.depth, r.y]),
    );
    assert.deepEqual(
      next.map((r) => r.events.map((e) => e.start)),
      [[], [11], [2, 20]],
    );
    assert.deepEqual(next[2]?.maxEnd, [3, 21]);
  });
});

describe("sweep chart data", () => {
  const sweep: SweepResult = {
    param: "BLOCK_SIZE",
    current: 1024,
    rows: [
      {
        value: 1024,
        median_ms: 0.3,
        spread_pct: 0.5,
        reps: 40,
        bytes: 8e6,
        gb_per_s: 26.7,
        error: null,
      },
      {
        value: 128,
        median_ms: 0.5,
        spread_pct: 0.5,
        reps: 40,
        bytes: 8e6,
        gb_per_s: 16,
        error: null,
      },
      {
        value: 256,
        median_ms: 0.2,
        spread_pct: 0.4,
        reps: 40,
        bytes: 8e6,
        gb_per_s: 40,
        error: null,
      },
      { value: 8192, error: "CompilationError: out of resources" },
    ],
    best: { value: 256, median_ms: 0.2 },
    method: "cuda-events",
    device: "NVIDIA H200",
  };

  it("sorts the timed values, keeps the failures apart and marks the best", () => {
    const series = sweepSeries(sweep);
    assert.deepEqual(
      series.points.map((p) => p.value),
      [128, 256, 1024],
    );
    assert.deepEqual(series.failed, [{ value: 8192, error: "CompilationError: out of resources" }]);
    assert.equal(series.points[series.best]?.value, 256);
    assert.equal(series.bestIsCurrent, false);
    assert.deepEqual(series.ticks, [128, 256, 1024]);
  });

  it("knows when the best value is already the current one", () => {
    assert.equal(sweepSeries({ ...sweep, current: 256 }).bestIsCurrent, true);
    assert.equal(
      sweepSeries({ ...sweep, rows: [sweep.rows[3] ?? { value: 1, error: "x" }] }).best,
      -1,
    );
  });

  it("puts log2 ticks on every value, or on thinned powers of two when there are many", () => {
    assert.deepEqual(log2Ticks([64, 32, 64, 0]), [32, 64]);
    const many = Array.from({ length: 20 }, (_, i) => 2 ** i);
    const list = log2Ticks(many);
    assert.ok(list.length <= 12);
    assert.equal(list[0], 1);
    assert.ok(list.every((v) => Number.isInteger(Math.log2(v))));
  });

  it("parses the values box", () => {
    assert.deepEqual(parseValues(""), { ok: true, values: null });
    assert.deepEqual(parseValues("  "), { ok: true, values: null });
    assert.deepEqual(parseValues("64, 128 256;512,128"), { ok: true, values: [64, 128, 256, 512] });
    assert.equal(parseValues("64, -1").ok, false);
    assert.equal(parseValues("64, 1e3").ok, false);
    assert.equal(parseValues("0").ok, false);
    assert.equal(parseValues("12.5").ok, false);
    assert.equal(parseValues(Array.from({ length: 70 }, (_, i) => i + 1).join(",")).ok, false);
  });
});

describe("number formatting", () => {
  it("formats durations in the unit that suits them", () => {
    assert.equal(formatUs(0), "0 µs");
    assert.equal(formatUs(0.812), "812 ns");
    assert.equal(formatUs(189.44), "189 µs");
    assert.equal(formatUs(56.513), "56.5 µs");
    assert.equal(formatUs(4.16), "4.16 µs");
    assert.equal(formatUs(1234.5), "1.23 ms");
    assert.equal(formatUs(2.5e6), "2.5 s");
    assert.equal(formatMs(0.5765919983386993), "0.577 ms");
    assert.equal(formatMs(12.34), "12.3 ms");
    assert.equal(formatMs(0.0189), "18.9 µs");
  });

  it("keeps three significant digits", () => {
    assert.equal(significant(189.44), "189");
    assert.equal(significant(1.2345), "1.23");
    assert.equal(significant(1.2), "1.2");
    assert.equal(significant(0.00123), "0.00123");
    assert.equal(significant(1234.5), "1235");
  });

  it("formats percentages, counts, bandwidths and bytes", () => {
    assert.equal(formatPct(66.87985518320389), "66.9 %");
    assert.equal(formatPct(null), "–");
    assert.equal(formatCount(2048), "2048");
    assert.equal(formatCount(1048576), "1\u2009048\u2009576");
    assert.equal(formatCount(undefined), "–");
    assert.equal(formatGbs(4160.2), "4160 GB/s");
    assert.equal(formatGbs(12.34), "12.3 GB/s");
    assert.equal(formatBytes(4 * 1024 * 1024), "4 MiB");
    assert.equal(formatBytes(512), "512 B");
  });
});

describe("merged blocks of a big trace", () => {
  it("are drawn more opaque where more events share a pixel (density)", () => {
    assert.equal(mergedAlpha(1, 10), 0.25);
    assert.equal(mergedAlpha(10, 10), 0.25);
    const sparse = mergedAlpha(20, 10);
    const dense = mergedAlpha(2000, 10);
    assert.ok(0.25 < sparse && sparse < dense && dense <= 0.95, `${sparse} ${dense}`);
    assert.equal(mergedAlpha(1_000_000, 1), 0.95);
    assert.equal(mergedAlpha(5, 0), mergedAlpha(5, 1)); // a block narrower than a pixel
  });
});

describe("legendFor", () => {
  it("lists only the categories the timeline draws (a CPU run: no CUDA categories)", () => {
    const cpu = [{ events: [{ cat: "user_annotation" }, { cat: "cpu_op" }] }];
    assert.deepEqual(
      legendFor(cpu).map((e) => e.label),
      ["source line", "ATen op"],
    );
    const gpu = [
      { events: [{ cat: "cpu_op" }, { cat: "cuda_driver" }] },
      { events: [{ cat: "kernel" }] },
    ];
    assert.deepEqual(
      legendFor(gpu).map((e) => e.cat),
      ["cpu_op", "cuda_runtime", "kernel"],
    );
    assert.equal(legendFor([]).length, 7); // nothing to go by: the whole legend
  });
});
