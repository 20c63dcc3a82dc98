import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import { functionAt, kernelAt, scanPython } from "../../extension/pyscan";

const ROOT = path.resolve(__dirname, "..", "..");

/** The source as lines, and a finder by 1-based line (as the tests read the source). */
function source(text: string) {
  const lines = text.split("\n");
  const scan = scanPython(lines);
  return {
    lines,
    scan,
    fn: (line1: number) => functionAt(scan, lines, line1 - 1)?.qualname,
    kernel: (line1: number) => kernelAt(scan, lines, line1 - 1)?.qualname,
  };
}

/** 1-based number of the first line of `lines` that contains `text`. */
function lineOf(lines: readonly string[], text: string): number {
  const index = lines.findIndex((l) => l.includes(text));
  assert.ok(index >= 0, `no line contains ${text}`);
  return index + 1;
}

describe("scanPython", () => {
  it("joins bracketed, backslashed and triple-quoted continuations into one logical line", () => {
    const lines = [
      "x = f(",
      "1,",
      ")",
      "",
      "# a comment",
      'y = """',
      "def not_a_def():",
      '"""',
      "z = 1 + \\",
      "    2",
      "s = '(' + \"[\"  # ( not a bracket",
      "t = 3",
    ];
    assert.deepEqual(
      scanPython(lines).map((l) => [l.first, l.last, l.indent]),
      [
        [0, 2, 0],
        [5, 7, 0],
        [8, 9, 0],
        [10, 10, 0],
        [11, 11, 0],
      ],
    );
  });

  it("counts a tab as reaching the next multiple of 8 columns", () => {
    assert.equal(scanPython(["def f():", "\tx = 1"])[1]?.indent, 8);
    assert.equal(scanPython(["def f():", "  \tx = 1"])[1]?.indent, 8);
  });

  it("handles escaped quotes inside strings", () => {
    const lines = ['a = "say \\"(\\""', "b = '''it\\'''s'''", "c = ("];
    assert.deepEqual(
      scanPython(lines).map((l) => l.first),
      [0, 1, 2],
    );
  });
});

describe("functionAt", () => {
  const text = [
    "import triton", //                                 1
    "", //                                              2
    "", //                                              3
    "@triton.jit", //                                   4
    "def square_kernel(out_ptr, in_ptr,", //            5
    "                  n, BLOCK: tl.constexpr):", //    6
    "    pid = tl.program_id(0)", //                    7
    '    """', //                                       8
    "docstring at column 0", //                         9
    '    """', //                                       10
    "", //                                              11
    "    x = 1", //                                     12
    "", //                                              13
    "", //                                              14
    "# kernel-lens: inputs = (1,)", //                  15
    "def square(x,", //                                 16
    "):", //                                            17
    "    def inner():", //                              18
    "        return x", //                              19
    "    if x:", //                                     20
    "        y = x ** 2", //                            21
    "# a comment at column 0 inside", //                22
    "    return y", //                                  23
    "", //                                              24
    "class Model:", //                                  25
    "    @staticmethod", //                             26
    "    @triton.jit(do_not_specialize=['n'])", //      27
    "    async def k(n):", //                           28
    "        pass", //                                  29
    "", //                                              30
    "    class Inner:", //                              31
    "        def forward(self):", //                    32
    "            return 1", //                          33
    "    z = 2", //                                     34
    "w = 3", //                                         35
  ].join("\n");
  const s = source(text);

  it("finds the function whose block holds the line", () => {
    assert.equal(s.fn(7), "square_kernel");
    assert.equal(s.fn(12), "square_kernel");
    assert.equal(s.fn(21), "square");
    assert.equal(s.fn(23), "square");
  });

  it("counts the def line, its continuation lines and its decorators as the function's", () => {
    assert.equal(s.fn(4), "square_kernel");
    assert.equal(s.fn(5), "square_kernel");
    assert.equal(s.fn(6), "square_kernel");
    assert.equal(s.fn(16), "square");
    assert.equal(s.fn(17), "square");
    assert.equal(s.fn(26), "Model.k");
  });

  it("is not fooled by a docstring or a signature's closing bracket at column 0", () => {
    assert.equal(s.fn(9), "square_kernel");
    assert.equal(s.fn(19), "square");
  });

  it("reports the outermost def, as the server lists no nested function", () => {
    const found = functionAt(s.scan, s.lines, 18);
    assert.equal(found?.qualname, "square");
    assert.equal(found?.defLine, 15);
  });

  it("names methods Class.name, nested classes included", () => {
    assert.equal(s.fn(29), "Model.k");
    assert.equal(s.fn(33), "Model.Inner.forward");
  });

  it("finds nothing outside functions", () => {
    assert.equal(s.fn(1), undefined);
    assert.equal(s.fn(15), undefined); // the directive comment above a def
    assert.equal(s.fn(25), undefined);
    assert.equal(s.fn(34), undefined); // class body, after a method
    assert.equal(s.fn(35), undefined);
    assert.equal(s.fn(99), undefined);
  });

  it("places a blank line by the statement after it, a comment by its indentation", () => {
    assert.equal(s.fn(11), "square_kernel"); // more of the body follows
    assert.equal(s.fn(13), undefined); // the next statement is at column 0
    assert.equal(s.fn(30), undefined); // class body follows
    assert.equal(s.fn(22), undefined); // comment at column 0
  });

  it("reports the decorators and whether the function is a Triton kernel", () => {
    const kernel = functionAt(s.scan, s.lines, 6);
    assert.deepEqual(kernel?.decorators, ["triton.jit"]);
    assert.equal(kernel?.isTritonKernel, true);
    assert.equal(kernel?.name, "square_kernel");
    assert.equal(kernel?.defLine, 4);
    const method = functionAt(s.scan, s.lines, 28);
    assert.deepEqual(method?.decorators, ["staticmethod", "triton.jit(do_not_specialize=['n'])"]);
    assert.equal(method?.isTritonKernel, true);
    assert.equal(functionAt(s.scan, s.lines, 20)?.isTritonKernel, false);
  });
});

describe("kernelAt", () => {
  it("finds @triton.jit kernels only", () => {
    const s = source(
      [
        "@triton.autotune(configs=[], key=['n'])",
        "@triton.jit",
        "def k1(x):",
        "    pass",
        "@jit",
        "def k2(x):",
        "    pass",
        "@torch.compile",
        "def f(x):",
        "    pass",
        "@triton.jitter",
        "def g(x):",
        "    pass",
      ].join("\n"),
    );
    assert.equal(s.kernel(1), "k1");
    assert.equal(s.kernel(4), "k1");
    assert.equal(s.kernel(7), "k2");
    assert.equal(s.kernel(9), undefined);
    assert.equal(s.fn(9), "f");
    assert.equal(s.kernel(13), undefined);
  });

  it("finds the kernel and the launcher of kernels/triton_square.py", () => {
    const lines = readFileSync(path.join(ROOT, "kernels", "triton_square.py"), "utf8").split("\n");
    const scan = scanPython(lines);
    const body = lineOf(lines, "mask = offsets < n_elements") - 1;
    assert.equal(kernelAt(scan, lines, body)?.qualname, "square_kernel");
    const launch = lineOf(lines, "square_kernel[grid](") - 1;
    assert.equal(kernelAt(scan, lines, launch), undefined);
    assert.equal(functionAt(scan, lines, launch)?.qualname, "square");
    // The module docstring mentions neither as code.
    assert.equal(functionAt(scan, lines, 1), undefined);
  });
});
