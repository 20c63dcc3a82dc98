import assert from "node:assert/strict";
import * as path from "node:path";
import { describe, it } from "node:test";
import type { ValuesLine, ValuesResult } from "../../extension/generated/wire";
import {
  DEBUG_MODULE,
  afterText,
  debugpyConfig,
  debugpyMissing,
  headerText,
  pickChoices,
  programProblem,
} from "../../extension/interp/model";

const MASK: ValuesLine = {
  line: 25,
  hits: 1,
  hit: 1,
  values: [
    {
      name: "mask",
      kind: "block",
      dtype: "bool",
      shape: [1024],
      text: "mask: bool[1024] · 24 lanes masked",
      masked: 24,
    },
  ],
};

const LOOP: ValuesLine = {
  line: 47,
  hits: 3,
  hit: 3,
  values: [
    { name: "rk", kind: "block", dtype: "int32", shape: [16], text: "rk: int32[16] 32 33 34 … 47" },
  ],
};

const RESULT: ValuesResult = {
  kernel: "scale_kernel",
  def_line: 22,
  launcher: "scale",
  grid: [4, 1, 1],
  pid: [3, 0, 0],
  program: "last",
  in_grid: true,
  iteration: "first",
  programs_run: 4,
  lines: [MASK],
  oob: [],
  error: null,
  interpreter: true,
  label: "Triton interpreter (TRITON_INTERPRET=1) on the CPU",
};

describe("Show Values text", () => {
  it("puts a line's values after it, and the pass of a loop's line", () => {
    assert.equal(afterText(MASK), "mask: bool[1024] · 24 lanes masked");
    assert.equal(afterText(LOOP), "rk: int32[16] 32 33 34 … 47 [pass 3/3]");
  });

  it("cuts a long line's text (the hover has it whole)", () => {
    const many = { ...MASK, values: Array.from({ length: 12 }, () => MASK.values[0]!) };
    const text = afterText(many);
    assert.equal(text.length, 160);
    assert.ok(text.endsWith("…"));
  });

  it("says the program, the grid and that the interpreter ran it, never GPU time", () => {
    assert.equal(
      headerText(RESULT),
      "program (3, 0, 0) of 4 × 1 × 1 · Triton interpreter, not GPU time",
    );
    const bad = { ...RESULT, oob: [{ ...oob(), line: 26 }], in_grid: false };
    assert.match(headerText(bad), /outside the grid: no line ran · 1 line out of bounds$/);
  });
});

function oob(): ValuesResult["oob"][number] {
  return {
    line: 26,
    op: "load",
    arg: "in_ptr",
    pid: [3, 0, 0],
    lane: [1023],
    offset: 4096,
    numel: 4096,
    lanes: 1,
    programs: 1,
    message: "out-of-bounds load",
  };
}

describe("program-id picker", () => {
  it("offers the first, the last (with its id) and any program; loop passes when a line looped", () => {
    const plain = pickChoices(RESULT).map((c) => [c.action, c.description]);
    assert.deepEqual(plain, [
      ["first", "(0, 0, 0)"],
      ["last", "(3, 0, 0) · where masks bite · shown now"],
      ["other", "x, y, z in 4 × 1 × 1"],
    ]);
    const looped = pickChoices({ ...RESULT, lines: [MASK, LOOP] }).map((c) => c.action);
    assert.deepEqual(looped.slice(3), ["iteration:first", "iteration:last", "iteration:other"]);
    assert.deepEqual(
      pickChoices(undefined).map((c) => c.action),
      ["first", "last", "other"],
    );
  });

  it("checks a typed program id against the grid", () => {
    assert.equal(programProblem("2, 0", [4, 1, 1]), undefined);
    assert.equal(programProblem("4", [4, 1, 1]), "the grid is 4 × 1 × 1: axis 0 goes up to 3");
    assert.equal(programProblem("a", [4, 1, 1]), "x, y, z: one to three non-negative integers");
    assert.equal(
      programProblem("1,2,3,4", undefined),
      "x, y, z: one to three non-negative integers",
    );
  });
});

describe("Debug Kernel launch", () => {
  it("resolves to debugpy's launch of the interpreter module with the block resolver on the path", () => {
    const config = debugpyConfig(
      {
        type: "kernelLens",
        request: "launch",
        name: "Debug scale_kernel",
        kernelFile: "/w/k.py",
        kernel: "scale_kernel",
        pid: "last",
        env: { A: "1" },
      },
      "/env/bin/python",
      "/ext/bundled/libs",
      ":",
      "/mine",
      (...p: string[]) => path.posix.join(...p),
    );
    assert.equal(config["module"], DEBUG_MODULE);
    assert.deepEqual(config["args"], ["/w/k.py", "scale_kernel", "--pid", "last"]);
    assert.deepEqual(config["python"], ["/env/bin/python"]);
    assert.deepEqual(config["env"], {
      A: "1",
      TRITON_INTERPRET: "1",
      PYTHONPATH: "/ext/bundled/libs/kernel_lens/agent/debug_plugins:/ext/bundled/libs:/mine",
    });
    assert.equal(config["justMyCode"], true);
    assert.equal("kernelFile" in config, false);
  });
});

describe("Debug Kernel without debugpy", () => {
  it("says what is missing where, and the command that installs it", () => {
    assert.equal(
      debugpyMissing("/env/bin/python"),
      "Kernel Lens: Debug Kernel needs debugpy in /env/bin/python (the debugger it runs). " +
        'Install it with: "/env/bin/python" -m pip install debugpy',
    );
  });
});
