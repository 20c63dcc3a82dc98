/**
 * The Report's lines on how the function's time was made (issue 25): the eager median's
 * policy, the CUDA graph's time of a launch-bound function (or why it could not be captured),
 * the GPU's clocks, and a clock or throttling warning.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ProfileTiming } from "../../extension/generated/wire";
import {
  clocksText,
  graphText,
  timingPolicyLines,
} from "../../extension/report/webview/timingPolicy";

const POLICY = {
  l2: "cold",
  mode: "eager",
  cpu_overhead: "included",
  reps: 812,
  rel_stdev_pct: 0.4,
  stable: true,
  text: "eager · L2 cold · CPU launch overhead included · 812 reps · stable (σ 0.4%)",
};

const GRAPHED: ProfileTiming = {
  median_ms: 0.00358,
  spread_pct: 4,
  reps: 812,
  policy: POLICY,
  clocks: {
    before: {
      sm_mhz: 1980,
      mem_mhz: 3201,
      temperature_c: 34,
      slowdown_c: 87,
      throttle: 0,
      power_w: 90,
    },
    after: {
      sm_mhz: 1980,
      mem_mhz: 3201,
      temperature_c: 35,
      slowdown_c: 87,
      throttle: 0,
      power_w: 95,
    },
  },
  graph: {
    calls: 100,
    why: "median 3.58 µs < 20 µs",
    median_ms: 0.00112,
    kernels_us: 0.83,
    policy: { ...POLICY, mode: "graph", cpu_overhead: "excluded", text: "CUDA graph of 100 calls" },
  },
};

describe("timingPolicyLines", () => {
  it("says the policy, the graph's time, its policy and the clocks", () => {
    assert.deepEqual(timingPolicyLines(GRAPHED), [
      `Timed: ${POLICY.text}`,
      "Launch-bound (median 3.58 µs < 20 µs): 1.12 µs in a CUDA graph · kernels 830 ns",
      "Graph: CUDA graph of 100 calls",
      "GPU: SM 1980 MHz · memory 3201 MHz · 34 → 35 °C",
    ]);
  });

  it("keeps the eager number and says why a function could not be captured", () => {
    const timing: ProfileTiming = {
      ...GRAPHED,
      graph: { calls: 100, reason: "host sync during capture (.item())" },
    };
    assert.equal(
      graphText(timing),
      "not capturable in a CUDA graph: host sync during capture (.item())",
    );
  });

  it("says why no clocks were read, and warns of a clock drop", () => {
    const timing: ProfileTiming = {
      median_ms: 1,
      spread_pct: 0.1,
      reps: 10,
      policy: { ...POLICY, nvml: "GPU clocks not read: nvidia-ml-py (pynvml) is not installed" },
      warnings: ["noisy: …", "SM clock dropped 29% while timing (1980 → 1410 MHz)"],
    };
    const lines = timingPolicyLines(timing);
    assert.equal(lines[1], "GPU clocks not read: nvidia-ml-py (pynvml) is not installed");
    assert.equal(lines[2], "⚠ SM clock dropped 29% while timing (1980 → 1410 MHz)");
    assert.equal(lines.length, 3);
    assert.equal(clocksText(timing), null);
  });

  it("says nothing for an older result without a policy, nor of a CPU's graph", () => {
    assert.deepEqual(timingPolicyLines({ median_ms: 1, spread_pct: 0, reps: 3 }), []);
    assert.deepEqual(timingPolicyLines(null), []);
    assert.equal(
      graphText({
        median_ms: 1,
        spread_pct: 0,
        reps: 3,
        graph: { reason: "not applicable on CPU" },
      }),
      null,
    );
  });
});
