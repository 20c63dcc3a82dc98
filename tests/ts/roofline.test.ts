/**
 * The Report's roofline (issue 25), its pure part: which kernels are placed (bytes and FLOPs
 * known), which are listed (bytes or FLOPs alone), the roofs and the axis, against values
 * computed by hand; and Kernel Lens's own failures said in the Report (issue 26): a trace not
 * saved where the timeline would be, the history's runs that could not be read.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KernelRoofline, ProfileTiming, ReportResult } from "../../extension/generated/wire";
import { unreadableText } from "../../extension/report/historyModel";
import { rooflineData } from "../../extension/report/webview/roofline";
import { noTimelineText, traceNotSaved } from "../../extension/report/webview/reportActions";
import { otherTimingWarnings, stabilityText } from "../../extension/report/webview/timingPolicy";

const H200 = "NVIDIA H200 SXM: measured copy bandwidth 4.3 TB/s; FP32 67 TFLOP/s (datasheet)";

function roof(over: Partial<KernelRoofline> & Pick<KernelRoofline, "name">): KernelRoofline {
  return {
    short_name: over.name,
    duration_us: 10,
    calls: 1,
    bytes: null,
    flops: null,
    source: "inductor",
    tb_per_s: null,
    tflop_per_s: null,
    bandwidth_pct: null,
    flop_pct: null,
    intensity: null,
    bound: null,
    peak_note: H200,
    peak_tbs: 4.3,
    peak_tflops: 67,
    text: over.name,
    ...over,
  };
}

/** A bf16 matmul (compute-bound), an fp32 fused pointwise kernel, and a copy with bytes only. */
const ROOFS: KernelRoofline[] = [
  roof({
    name: "triton_tem_fused_mm_0",
    intensity: 100,
    tflop_per_s: 300,
    tb_per_s: 3,
    peak_tflops: 989.5,
    math: "BF16 tensor",
    text: "triton_tem_fused_mm_0 0.458 ms · 3 TB/s · 300 TFLOP/s",
  }),
  roof({
    name: "triton_poi_fused_add_mul_relu_0",
    source: "ncu",
    intensity: 0.5,
    tflop_per_s: 0.5,
    tb_per_s: 1.0,
    text: "triton_poi_fused_add_mul_relu_0 0.00416 ms · 1.01 TB/s",
  }),
  roof({
    name: "void at::native::vectorized_elementwise_kernel<4, pow>(int, float*)",
    short_name: "vectorized_elementwise_kernel<4, pow…>",
    source: "tensors",
    tb_per_s: 4.16,
    bandwidth_pct: 96.74,
    text: "square 0.192 ms · 4.16 TB/s · 97% of peak bandwidth",
  }),
];

describe("rooflineData", () => {
  it("places kernels with bytes and FLOPs under the roofs, by hand", () => {
    const data = rooflineData(ROOFS);
    assert.ok(data !== null);
    assert.deepEqual(
      data.points.map((p) => [p.label, p.x, p.y, p.source]),
      [
        ["triton_tem_fused_mm_0", 100, 300, "inductor"],
        ["triton_poi_fused_add_mul_relu_0", 0.5, 0.5, "ncu"],
      ],
    );
    assert.equal(data.points[0]?.text, "triton_tem_fused_mm_0 0.458 ms · 3 TB/s · 300 TFLOP/s");
    // ridges: 67 / 4.3 = 15.581 and 989.5 / 4.3 = 230.116 FLOP/byte; the axis spans the decades
    // around 0.5 / 2 = 0.25 and 230.116 × 2 = 460.2: 0.1 to 1000
    assert.equal(data.xMin, 0.1);
    assert.equal(data.xMax, 1000);
    assert.equal(data.peakTbs, 4.3);
    const [start, end] = data.bandwidthRoof;
    assert.ok(start !== undefined && end !== undefined);
    assert.equal(start.x, 0.1);
    assert.ok(Math.abs(start.y - 0.43) < 1e-12); // 4.3 TB/s × 0.1 FLOP/byte
    assert.ok(Math.abs(end.x - 230.11627906976744) < 1e-9);
    assert.ok(Math.abs(end.y - 989.5) < 1e-9); // meets the highest compute roof
    assert.deepEqual(
      data.computeRoofs.map((c) => [c.label, c.data.map((p) => [+p.x.toFixed(4), p.y])]),
      [
        [
          "compute roof 67 TFLOP/s",
          [
            [15.5814, 67],
            [1000, 67],
          ],
        ],
        [
          "BF16 tensor roof 989.5 TFLOP/s",
          [
            [230.1163, 989.5],
            [1000, 989.5],
          ],
        ],
      ],
    );
    assert.equal(data.peakNote, H200);
  });

  it("lists a kernel with only bytes known, with TB/s and % of peak, instead of placing it", () => {
    const data = rooflineData(ROOFS);
    assert.deepEqual(data?.unplaced, [
      {
        name: "void at::native::vectorized_elementwise_kernel<4, pow>(int, float*)",
        label: "vectorized_elementwise_kernel<4, pow…>",
        tbs: 4.16,
        bandwidthPct: 96.74,
        tflops: null,
        flopPct: null,
        source: "tensors",
      },
    ]);
  });

  it("with bytes only: a table, no points; the bandwidth roof spans the axis", () => {
    const only = ROOFS.slice(2).map((r) => ({ ...r, peak_tflops: undefined as never }));
    const data = rooflineData(only);
    assert.ok(data !== null);
    assert.deepEqual(data.points, []);
    assert.equal(data.unplaced.length, 1);
    assert.deepEqual(data.computeRoofs, []);
    assert.deepEqual(
      data.bandwidthRoof.map((p) => p.x),
      [0.01, 100],
    );
  });

  it("draws no roof for a GPU without peaks, but still places its kernels", () => {
    const data = rooflineData([
      roof({
        name: "k",
        intensity: 2,
        tflop_per_s: 1,
        tb_per_s: 0.5,
        peak_note: null,
        peak_tbs: undefined as never,
        peak_tflops: undefined as never,
      }),
    ]);
    assert.ok(data !== null);
    assert.equal(data.points.length, 1);
    assert.deepEqual(data.bandwidthRoof, []);
    assert.deepEqual(data.computeRoofs, []);
    assert.equal(data.peakNote, null);
    // the decades around 2 / 2 = 1 and 2 × 2 = 4
    assert.deepEqual([data.xMin, data.xMax], [1, 10]);
  });

  it("shows nothing when no kernel has bytes or FLOPs", () => {
    assert.equal(rooflineData(undefined), null);
    assert.equal(rooflineData([]), null);
    assert.equal(rooflineData([roof({ name: "k" })]), null);
    assert.equal(rooflineData([roof({ name: "k", tb_per_s: 0, tflop_per_s: null })]), null);
  });
});

describe("Kernel Lens's own failures in the Report", () => {
  const profile = (trace_error: string | null | undefined): Pick<ReportResult, "profile"> => ({
    profile: {
      function: "square",
      device: "NVIDIA H200",
      timing: null,
      lines: [],
      kernels: [],
      trace_path: null,
      ...(trace_error === undefined ? {} : { trace_error }),
    },
  });

  it("says `trace not saved: …` where the timeline would be", () => {
    const report = profile("trace not saved: [Errno 28] No space left on device");
    assert.equal(traceNotSaved(report), "trace not saved: [Errno 28] No space left on device");
    assert.equal(
      noTimelineText(report),
      "trace not saved: [Errno 28] No space left on device. The profile's numbers stand (Summary); only its timeline could not be kept.",
    );
    // a bare reason is prefixed, never doubled
    assert.equal(
      traceNotSaved(profile("the cache path is a file")),
      "trace not saved: the cache path is a file",
    );
  });

  it("keeps the old words when the trace was not lost by Kernel Lens", () => {
    for (const report of [profile(undefined), profile(null), profile(""), { profile: null }]) {
      assert.equal(traceNotSaved(report), null);
      assert.match(noTimelineText(report), /^The last profile has no trace to show/);
    }
  });

  it("names the history's runs that could not be read", () => {
    assert.equal(
      unreadableText({
        unreadable: ["run 7: not a run (no timing.median_ms)", "f-square.jsonl line 3: not UTF-8"],
      }),
      "2 runs could not be read: run 7: not a run (no timing.median_ms); f-square.jsonl line 3: not UTF-8",
    );
    assert.equal(
      unreadableText({ unreadable: ["run 2: truncated"] }),
      "1 run could not be read: run 2: truncated",
    );
    assert.equal(unreadableText({}), null);
    assert.equal(unreadableText({ unreadable: [] }), null);
  });
});

describe("the timing's warnings and stability in the Summary", () => {
  const base: ProfileTiming = { median_ms: 0.0036, spread_pct: 4, reps: 812 };

  it("says every warning but the clock ones (those are with the clocks)", () => {
    assert.deepEqual(
      otherTimingWarnings({
        ...base,
        warnings: [
          "under 10 µs: launch overhead and event resolution dominate",
          "SM clock dropped 29% while timing (1980 → 1410 MHz)",
        ],
      }),
      ["⚠ under 10 µs: launch overhead and event resolution dominate"],
    );
    assert.deepEqual(otherTimingWarnings({ ...base, warning: "noisy: spread 12%" }), [
      "⚠ noisy: spread 12%",
    ]);
    assert.deepEqual(otherTimingWarnings(base), []);
    assert.deepEqual(otherTimingWarnings(null), []);
  });

  it("says stable or not only where the policy says", () => {
    const policy = {
      l2: "cold",
      mode: "eager",
      cpu_overhead: "included",
      reps: 812,
      text: "eager · L2 cold",
    };
    assert.equal(stabilityText(base), "");
    assert.equal(stabilityText({ ...base, policy }), "");
    assert.equal(stabilityText({ ...base, policy: { ...policy, stable: true } }), " · stable");
    assert.equal(
      stabilityText({ ...base, policy: { ...policy, stable: false, rel_stdev_pct: 3.14 } }),
      " · calls vary (σ 3.1%)",
    );
  });
});
