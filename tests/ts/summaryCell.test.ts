/**
 * The Report's Summary on a CPU: a line's cell is its share of the measured median, never the
 * profiler's inflated CPU time (which stays in the tooltip).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cpuCell } from "../../extension/report/webview/format";

describe("cpuCell", () => {
  it("reads as a share of the median, the raw time in the tooltip", () => {
    const cell = cpuCell(13_200, 33_000, 42.0);
    assert.equal(cell.text, "40% of 42 ms");
    assert.match(cell.title, /^13\.2 ms CPU under the profiler/);
  });

  it("says 100% for the only op and <1% for a sliver", () => {
    assert.equal(cpuCell(500, 500, 0.044).text, "100% of 44 µs");
    assert.equal(cpuCell(1, 1000, 1).text, "<1% of 1 ms");
  });

  it("gives a bare share without a median (a script's one run) and a dash for nothing", () => {
    assert.equal(cpuCell(250, 1000, null).text, "25%");
    assert.deepEqual(cpuCell(0, 1000, 1), { text: "–", title: "" });
  });
});
