/**
 * The Report's memory (Profile Memory): the peak's words, a live group's words and the memory
 * lane's path, from a device as the server sends it (the H200 step's figures).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { MemoryDevice } from "../../extension/generated/wire";
import {
  laneCorners,
  lanePath,
  liveText,
  peakSuffix,
  peakText,
} from "../../extension/report/webview/memoryModel";

const MIB = 1 << 20;

const STEP: MemoryDevice = {
  device: "cuda:0",
  label: "GPU 0",
  peak_bytes: 128998400,
  peak_line: 44,
  peak_in_backward: true,
  peak_host_line: 47,
  live_at_peak: [
    { line: 44, source: "out = model(x)", bytes: 18 * MIB, kind: "saved for backward" },
    { line: 44, source: "out = model(x)", bytes: 16 * MIB, kind: "backward" },
  ],
  outside_bytes: 0,
  before_bytes: 89149440,
  timeline: [
    [0, 100 * MIB],
    [10, 120 * MIB],
    [20, 128998400],
    [40, 110 * MIB],
  ],
};

describe("memory", () => {
  it("says where the peak was reached, a backward's forward line included", () => {
    assert.equal(peakText(STEP), "peak 123 MiB at line 47 (backward of line 44)");
    assert.equal(
      peakText({ ...STEP, peak_in_backward: false, peak_host_line: 44 }),
      "peak 123 MiB at line 44",
    );
    assert.equal(peakText({ ...STEP, peak_line: null }), "peak 123 MiB off the function's lines");
  });

  it("names what a live group is", () => {
    const [saved, backward] = STEP.live_at_peak;
    assert.ok(saved !== undefined && backward !== undefined);
    assert.equal(liveText(saved), "18 MiB from line 44 · saved for backward");
    assert.equal(liveText(backward), "16 MiB from line 44 · allocated by its backward");
  });

  it("draws the lane as steps from 0 to the peak across the width", () => {
    const path = lanePath(STEP.timeline, 400, 100);
    assert.ok(path.startsWith("M0,"));
    // the peak touches the top; the last step ends at the right edge
    assert.ok(path.includes(" H200 V0"), path);
    assert.ok(path.includes(" H400 V"), path);
    assert.equal(lanePath([], 400, 100), "");
  });

  it("puts a run's peak beside its time in the history, each device's when several", () => {
    assert.equal(peakSuffix({ peak_bytes: { "cuda:0": 48 * MIB } }), " · peak 48 MiB");
    assert.equal(
      peakSuffix({ peak_bytes: { cpu: 1024, "cuda:0": 2 * MIB } }),
      " · cpu peak 1 KiB · cuda:0 peak 2 MiB",
    );
    assert.equal(peakSuffix({}), "");
  });

  it("follows the timeline's zoom: the step held at the left edge, cut at the right", () => {
    const points = [
      [0, 0],
      [10, 50],
      [20, 100],
      [30, 0],
    ];
    // offset 100 µs: the points sit at 100, 110, 120, 130 on the timeline's clock
    const all = laneCorners(points, 100, { start: 100, end: 140 }, 40, 10, 100);
    assert.deepEqual(all[0], [0, 10]);
    assert.ok(
      all.some(([x, y]) => x === 20 && y === 0),
      JSON.stringify(all),
    );
    assert.deepEqual(all[all.length - 1], [40, 10]);
    // zoomed into 112–118 µs: the 50-byte step holds across the whole width
    assert.deepEqual(laneCorners(points, 100, { start: 112, end: 118 }, 60, 10, 100), [
      [0, 5],
      [60, 5],
    ]);
    assert.deepEqual(laneCorners([], 0, { start: 0, end: 1 }, 10, 10, 1), []);
  });
});
