/**
 * The History tab's pure parts: the chart model (medians with their spread, verdict colours, the
 * baseline), run references and the diff documents' names, and the messages it sends, checked
 * against the server's recorded `kernelLens/history` and `kernelLens/compare` answers.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import {
  checkCompareResult,
  checkHistoryResult,
  type CompareVerdict,
  type HistoryResult,
  type HistoryRun,
} from "../../extension/generated/wire";
import { check, Invalid } from "../../extension/guards";
import {
  HISTORY_SCHEME,
  chartModel,
  comparisonHeading,
  diffTitle,
  formatRunMs,
  historyDocPath,
  isRunRef,
  runLabel,
  spreadMs,
} from "../../extension/report/historyModel";
import { isFromWebview, isToWebview, REPORT_TABS } from "../../extension/report/messages";

const ROOT = path.resolve(__dirname, "..", "..");

function recorded(name: string): unknown {
  return JSON.parse(readFileSync(path.join(ROOT, "tests", "data", "protocol", name), "utf8"));
}

function run(id: string, median: number, extra: Partial<HistoryRun> = {}): HistoryRun {
  return {
    id,
    time: "2026-11-30T16:00:00+00:00",
    function: "square",
    path: "/w/square.py",
    device: "NVIDIA H200",
    device_kind: "cuda",
    git: { commit: "0123456789abcdef0123456789abcdef01234567", dirty: true },
    file_hash: "ab",
    versions: {},
    inputs: null,
    timing: { median_ms: median, spread_pct: 1, q1_ms: median * 0.99, q3_ms: median * 1.01 },
    kernel_count: 2,
    ...extra,
  };
}

function verdict(change: number, significant: boolean): CompareVerdict {
  return {
    before_ms: 1,
    after_ms: 1 + change / 100,
    change_pct: change,
    interval_pct: 0.4,
    p_value: 0.001,
    significant,
    method: "mann-whitney",
    reference: "previous",
    text: "x",
  };
}

describe("history chart model", () => {
  const history: HistoryResult = {
    function: "square",
    uri: "file:///w/square.py",
    path: "/w/square.py",
    baseline: "2",
    current_text: ["def square(x):", "    return x * x"],
    runs: [
      run("1", 0.383),
      run("2", 0.384, { verdict: verdict(0.2, false) }),
      run("3", 0.192, { verdict: verdict(-49.8, true) }),
      run("4", 0.4, { verdict: verdict(108, true) }),
    ],
  };

  it("puts the runs left to right with their spread, from 0 up", () => {
    const model = chartModel(history, 560, 180);
    assert.deepEqual(
      model.points.map((p) => p.id),
      ["1", "2", "3", "4"],
    );
    const xs = model.points.map((p) => p.x);
    assert.deepEqual(
      xs,
      [...xs].sort((a, b) => a - b),
    );
    assert.equal(xs[0], 56);
    assert.equal(xs[3], 560 - 12);
    for (const p of model.points) {
      assert.ok(p.yHigh < p.y && p.y < p.yLow, `spread around the median of run ${p.id}`);
    }
    // The faster run sits lower on the chart (smaller time), about half as high above 0.
    const zero = model.ticks[0];
    assert.equal(zero?.label, "0");
    const [, two, three] = model.points;
    assert.ok(two !== undefined && three !== undefined && zero !== undefined);
    const ratio = (zero.y - three.y) / (zero.y - two.y);
    assert.ok(Math.abs(ratio - 0.192 / 0.384) < 0.01, String(ratio));
  });

  it("colours each run by its verdict and marks the baseline", () => {
    const model = chartModel(history);
    assert.deepEqual(
      model.points.map((p) => p.verdict),
      [null, "same", "faster", "slower"],
    );
    assert.deepEqual(
      model.points.map((p) => p.baseline),
      [false, true, false, false],
    );
  });

  it("reads the spread from the quartiles, else from ±spread", () => {
    assert.deepEqual(spreadMs(run("1", 1)), [0.99, 1.01]);
    assert.deepEqual(
      spreadMs(run("1", 2, { timing: { median_ms: 2, spread_pct: 10 } })),
      [1.8, 2.2],
    );
  });

  it("labels runs and times", () => {
    assert.equal(
      runLabel(run("3", 0.192)),
      "run 3 · 0.192 ms ±1.0% · 2 kernels · NVIDIA H200 · 01234567+dirty",
    );
    assert.equal(formatRunMs(0.0123), "12.3 µs");
    assert.equal(formatRunMs(1234), "1.23 s");
  });
});

describe("history references, documents and messages", () => {
  it("accepts only run references", () => {
    for (const ok of ["1", "42", "-1", "-2", "baseline"]) {
      assert.ok(isRunRef(ok), ok);
    }
    for (const bad of ["", "0", "01", "-0", "1.5", "../x", "latest", 3, null, "1234567890"]) {
      assert.ok(!isRunRef(bad), String(bad));
    }
  });

  it("names the diff documents and the diff editor", () => {
    assert.equal(historyDocPath("Cls.square", "3", "k1"), "/k1/Cls.square run 3.py");
    assert.equal(historyDocPath("a<b>", null, "k1"), "/k1/a_b_ (now).py");
    assert.equal(diffTitle("square", "3"), "square: run 3 ↔ now");
    assert.equal(HISTORY_SCHEME, "kernel-lens-history");
  });

  it("has a History tab and checks the tab's messages", () => {
    assert.ok(REPORT_TABS.includes("history"));
    assert.ok(isFromWebview({ type: "historyDiff", run: "3" }));
    assert.ok(isFromWebview({ type: "setBaseline", run: "-1" }));
    assert.ok(isFromWebview({ type: "compareRuns", before: "baseline", after: "-1" }));
    assert.ok(!isFromWebview({ type: "historyDiff", run: "../../etc/passwd" }));
    assert.ok(!isFromWebview({ type: "compareRuns", before: "1" }));
    assert.ok(isToWebview({ type: "history", history: null }));
    assert.ok(isToWebview({ type: "history", history: recorded("kernelLens_history.json") }));
    assert.ok(isToWebview({ type: "comparison", comparison: recorded("kernelLens_compare.json") }));
    assert.ok(!isToWebview({ type: "comparison", comparison: null }));
    assert.ok(isToWebview({ type: "report", report: {}, tab: "history" }));
  });

  it("reads the server's recorded answers, and the chart draws them", () => {
    const history = check(checkHistoryResult, recorded("kernelLens_history.json"));
    assert.ok(!(history instanceof Invalid), history instanceof Invalid ? history.reason : "");
    assert.equal(history.runs.length, 3);
    const model = chartModel(history);
    assert.deepEqual(
      model.points.map((p) => [p.id, p.verdict, p.baseline]),
      [
        ["1", null, false],
        ["2", "slower", true],
        ["3", "faster", false],
      ],
    );
    const comparison = check(checkCompareResult, recorded("kernelLens_compare.json"));
    assert.ok(!(comparison instanceof Invalid));
    assert.equal(comparison.reference, "baseline");
    const broken = { ...(recorded("kernelLens_compare.json") as object), verdict: { text: 1 } };
    assert.ok(check(checkCompareResult, broken) instanceof Invalid);
  });
});

describe("comparisonHeading", () => {
  const run = (id: string) => ({ id }) as HistoryRun;
  it("names the reference run once (issue 41: not `against run 1 (run 1)`)", () => {
    assert.equal(
      comparisonHeading({ after: run("3"), before: run("1"), reference: "run 1" }),
      "Run 3 against run 1",
    );
    assert.equal(
      comparisonHeading({ after: run("3"), before: run("1"), reference: "baseline" }),
      "Run 3 against baseline (run 1)",
    );
  });
});
