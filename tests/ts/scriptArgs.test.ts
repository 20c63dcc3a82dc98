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
});
