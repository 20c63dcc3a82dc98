import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ReportResult, SweepResult } from "../../extension/generated/wire";
import {
  isInterpreterSweep,
  ncuUnavailable,
  proposedParam,
} from "../../extension/report/webview/reportActions";

const SWEEP: SweepResult = {
  param: "BLOCK_SIZE",
  current: 1024,
  rows: [{ value: 256, median_ms: 1.5, spread_pct: 1, reps: 10, gb_per_s: null, error: null }],
  best: { value: 256, median_ms: 1.5 },
  method: "perf-counter",
  device: "CPU · Triton interpreter",
};

function report(deviceKind: "cpu" | "cuda" | null): ReportResult {
  return {
    function: "square",
    uri: "file:///k/square.py",
    int_parameters: {},
    profile: deviceKind === null ? null : ({ device_kind: deviceKind } as ReportResult["profile"]),
    timeline: null,
    ncu: null,
    sweep: null,
  };
}

describe("report actions", () => {
  it("proposes only a parameter the function has", () => {
    assert.equal(proposedParam(null, { BLOCK_SIZE: 1024, n: 3 }), "BLOCK_SIZE");
    assert.equal(proposedParam(null, { dim: 32 }), "dim");
    assert.equal(proposedParam(null, { dim: 32, hidden: 64 }), "");
    assert.equal(proposedParam(null, {}), "");
    assert.equal(proposedParam(null, undefined), "");
    assert.equal(proposedParam(SWEEP, { dim: 32 }), "BLOCK_SIZE");
  });

  it("recognises a sweep taken under Triton's interpreter", () => {
    assert.equal(isInterpreterSweep(SWEEP), true);
    assert.equal(isInterpreterSweep({ ...SWEEP, device: "NVIDIA H200" }), false);
    const noted = { ...SWEEP, device: "CPU", note: "Triton interpreter on the CPU: …" };
    assert.equal(isInterpreterSweep(noted), true);
  });

  it("says why Nsight Compute cannot run after a CPU profile", () => {
    assert.match(ncuUnavailable(report("cpu")) ?? "", /^Needs an NVIDIA GPU/);
    assert.equal(ncuUnavailable(report("cuda")), undefined);
    assert.equal(ncuUnavailable(report(null)), undefined);
  });
});
