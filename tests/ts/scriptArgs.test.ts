import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  isScriptArgumentsArgs,
  joinArgs,
  parseWindow,
  splitArgs,
} from "../../extension/scriptArgs";

describe("a script's arguments", () => {
  it("splits like a shell: quotes, backslashes, runs of spaces", () => {
    assert.deepEqual(splitArgs(`--dim 24  --name 'a b' "c \\"d\\"" e\\ f`), {
      argv: ["--dim", "24", "--name", "a b", 'c "d"', "e f"],
    });
    assert.deepEqual(splitArgs("   "), { argv: [] });
    assert.deepEqual(splitArgs("--real_data=False ''"), { argv: ["--real_data=False", ""] });
  });

  it("says when a quote is left open", () => {
    assert.deepEqual(splitArgs("--name 'a b"), { error: "unclosed ' quote" });
  });

  it("joins them back to a line that splits to the same words", () => {
    const argv = ["--dim", "24", "a b", "it's", "", "--x=1"];
    const line = joinArgs(argv);
    assert.equal(line, `--dim 24 'a b' 'it'\\''s' '' --x=1`);
    assert.deepEqual(splitArgs(line), { argv });
  });

  it("checks the lens's argument", () => {
    assert.ok(isScriptArgumentsArgs({ uri: "file:///w/bench.py", argv: ["--dim", "24"] }));
    assert.ok(!isScriptArgumentsArgs({ uri: "file:///w/bench.py", argv: [1] }));
    assert.ok(!isScriptArgumentsArgs(null));
  });

  it("reads a window: steps to skip, steps to profile", () => {
    assert.deepEqual(parseWindow(" 2  3 "), { skip: 2, steps: 3 });
    assert.deepEqual(parseWindow("0 1"), { skip: 0, steps: 1 });
    assert.ok("error" in parseWindow("2"));
    assert.ok("error" in parseWindow("2 0"));
    assert.ok("error" in parseWindow("-1 3"));
  });

  it("reads a wall-clock window: a time into the run, with its unit", () => {
    assert.deepEqual(parseWindow("30s"), { skip: 0, afterS: 30 });
    assert.deepEqual(parseWindow(" After 30S "), { skip: 0, afterS: 30 });
    assert.deepEqual(parseWindow("1.5m"), { skip: 0, afterS: 90 });
    assert.deepEqual(parseWindow("after 2 min"), { skip: 0, afterS: 120 });
    assert.deepEqual(parseWindow("1h"), { skip: 0, afterS: 3600 });
    const ms = parseWindow("200ms");
    assert.ok(!("error" in ms) && Math.abs((ms.afterS ?? 0) - 0.2) < 1e-9, JSON.stringify(ms));
    // Then a number of steps from that time on.
    assert.deepEqual(parseWindow("30s 3"), { skip: 0, steps: 3, afterS: 30 });
    assert.deepEqual(parseWindow("after 30s, 3 steps"), { skip: 0, steps: 3, afterS: 30 });
    assert.deepEqual(parseWindow("after 10s then 1 step"), { skip: 0, steps: 1, afterS: 10 });
  });

  it("refuses a time without its unit or a window it cannot read", () => {
    for (const bad of ["30", "after 30", "soon", "30 s 0", "30s 0", "-5s", "after", "2 3 4"]) {
      const parsed = parseWindow(bad);
      assert.ok("error" in parsed, `${bad} → ${JSON.stringify(parsed)}`);
    }
    const help = parseWindow("soon");
    assert.ok("error" in help && help.error.includes("30s"), JSON.stringify(help));
  });
});
