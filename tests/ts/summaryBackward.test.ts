/**
 * The Report's Summary of a training step: the accounting of the step's device time (all of it
 * on lines, or the remainder named) and the span of lines a backward pass spread over.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import type { Profile } from "../../extension/generated/wire";
import {
  accountingText,
  formatOps,
  linesSpan,
  opCalls,
} from "../../extension/report/webview/format";

const ROOT = path.resolve(__dirname, "..", "..");

const BASE: Profile = {
  function: "train_step",
  device: "NVIDIA H200",
  device_kind: "cuda",
  timing: null,
  lines: [],
  kernels: [],
};

describe("accountingText", () => {
  it("says 100% on lines when nothing is left over", () => {
    const profile: Profile = {
      ...BASE,
      accounting: { device_us: 3659.3, on_lines_us: 3659.3, on_lines_pct: 100, remainder: [] },
    };
    assert.equal(accountingText(profile), " · 100% on lines");
  });

  it("names each remainder with its time", () => {
    const profile: Profile = {
      ...BASE,
      accounting: {
        device_us: 3659.3,
        on_lines_us: 3577.6,
        on_lines_pct: 97.77,
        remainder: [
          {
            reason: "outside",
            text: "launched outside the function's lines",
            device_us: 81.7,
            kernels: [{ name: "multi_tensor_apply_kernel", device_us: 81.7 }],
          },
        ],
      },
    };
    assert.equal(
      accountingText(profile),
      " · 97.8% on lines · 81.7 µs launched outside the function's lines",
    );
  });

  it("says nothing without device time (a CPU run) or without the accounting", () => {
    assert.equal(accountingText(BASE), "");
    const cpu: Profile = {
      ...BASE,
      accounting: { device_us: 0, on_lines_us: 0, on_lines_pct: 100, remainder: [] },
    };
    assert.equal(accountingText(cpu), "");
  });
});

describe("linesSpan", () => {
  it("writes consecutive lines as a range and others as a list", () => {
    assert.equal(linesSpan([44, 45]), "44–45");
    assert.equal(linesSpan([44, 47]), "44, 47");
    assert.equal(linesSpan([44]), "44");
    assert.equal(linesSpan([]), "");
  });
});

describe("the ops figure", () => {
  it("is op calls per call, forward and backward, as the summary lens says", () => {
    // The same recorded CPU training step as tests/unit/test_lens_text.py: 22 + 6 = 28.
    const file = path.join(ROOT, "tests", "data", "cpu", "train_step_cpu_profile.json");
    const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
    assert.equal(opCalls(profile), 28);
    assert.equal(formatOps(opCalls(profile)), "28");
    assert.deepEqual([1, 2.0, 2.25, 0.04].map(formatOps), ["1", "2", "2.3", "0.0"]);
  });
});
