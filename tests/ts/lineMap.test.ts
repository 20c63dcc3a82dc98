import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  LineLink,
  assemblyLink,
  definitionBlocks,
  generatedCodeLink,
  selectedLines,
} from "../../extension/views/lineMap";
import type { GeneratedKernel } from "../../extension/generated/wire";

/** Inductor's output for `square_twice` and a matmul, shortened (line numbers on the right). */
const CODE = [
  "from torch._inductor.async_compile import AsyncCompile", //                      1
  "async_compile = AsyncCompile()", //                                              2
  "", //                                                                            3
  "# kernel path: /tmp/torchinductor/ab/cab.py", //                                 4
  "triton_poi_fused_pow_0 = async_compile.triton('triton_poi_fused_pow_0', '''", // 5
  "import triton", //                                                               6
  "@triton.jit", //                                                                 7
  "def triton_poi_fused_pow_0(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):", // 8
  "    tmp0 = tl.load(in_ptr0 + (x0), xmask)", //                                   9
  "''', device_str='cuda')", //                                                     10
  "", //                                                                            11
  "", //                                                                            12
  "triton_poi_fused_relu_1 = async_compile.triton('triton_poi_fused_relu_1', '''", // 13
  "def triton_poi_fused_relu_1(in_out_ptr0, xnumel, XBLOCK : tl.constexpr):", //  14
  "''', device_str='cuda')", //                                                     15
  "", //                                                                            16
  "async_compile.wait(globals())", //                                               17
  "del async_compile", //                                                           18
  "", //                                                                            19
  "def call(args):", //                                                             20
  "    arg0_1, = args", //                                                          21
  "    triton_poi_fused_pow_0.run(arg0_1, buf0, 100000000, stream=stream0)", //     22
  "    extern_kernels.mm(arg0_1, arg0_1, out=buf1)", //                             23
  "    triton_poi_fused_relu_1.run(buf1, 100, stream=stream0)", //                  24
  "    triton_poi_fused_pow_0.run(buf1, buf2, 100000000, stream=stream0)", //       25
  "    return (buf2, )", //                                                         26
].join("\n");

const KERNELS: GeneratedKernel[] = [
  { name: "triton_poi_fused_pow_0", kind: "triton", lines: [17, 18], def_line: 5, call_line: 22 },
  { name: "extern_kernels.mm", kind: "extern", lines: [23], call_line: 23 },
  { name: "triton_poi_fused_relu_1", kind: "triton", lines: [24], def_line: 13, call_line: 24 },
  { name: "triton_poi_fused_pow_0", kind: "triton", lines: [25], def_line: 5, call_line: 25 },
];

describe("LineLink", () => {
  it("maps both ways, sorted and without repeats", () => {
    const link = new LineLink();
    link.link(3, 10);
    link.link(3, 4);
    link.link(5, 4);
    assert.deepEqual(link.viewLines([3]), [4, 10]);
    assert.deepEqual(link.viewLines([3, 5]), [4, 10]);
    assert.deepEqual(link.sourceLines([4]), [3, 5]);
    assert.deepEqual(link.sourceLines([10, 4]), [3, 5]);
    assert.deepEqual(link.viewLines([4]), []);
    assert.equal(link.empty, false);
  });

  it("ignores lines that are not positive integers", () => {
    const link = new LineLink();
    link.link(0, 1);
    link.link(1, -2);
    link.link(1.5, 2);
    assert.equal(link.empty, true);
    assert.deepEqual(link.sourceLines([1, 2, -2]), []);
  });
});

describe("assemblyLink", () => {
  const link = assemblyLink([
    { source_line: 23, asm_lines: [30, 31, 40] },
    { source_line: 24, asm_lines: [32, 40] },
    { source_line: 26, asm_lines: [] },
  ]);

  it("maps a source line to its asm lines", () => {
    assert.deepEqual(link.viewLines([23]), [30, 31, 40]);
    assert.deepEqual(link.viewLines([23, 24]), [30, 31, 32, 40]);
  });

  it("maps an asm line back to every source line it came from", () => {
    assert.deepEqual(link.sourceLines([40]), [23, 24]);
    assert.deepEqual(link.sourceLines([31]), [23]);
  });

  it("maps unmapped lines to nothing (the highlight is cleared)", () => {
    assert.deepEqual(link.viewLines([25]), []);
    assert.deepEqual(link.viewLines([26]), []);
    assert.deepEqual(link.sourceLines([1]), []);
  });

  it("is empty for an empty line map", () => {
    assert.equal(assemblyLink([]).empty, true);
  });
});

describe("definitionBlocks", () => {
  it("ends a kernel's block before the next kernel or async_compile.wait", () => {
    assert.deepEqual(
      [...definitionBlocks(CODE, [5, 13, 5])],
      [
        [5, 12],
        [13, 16],
      ],
    );
  });

  it("ends a block at a kernel defined but never called", () => {
    assert.deepEqual([...definitionBlocks(CODE, [5])], [[5, 12]]);
  });

  it("runs to the end of code without async_compile.wait, and ignores lines out of range", () => {
    const code = "a = 1\ntriton_k = async_compile.triton('k', '''\nx\n''')\n";
    assert.deepEqual([...definitionBlocks(code, [2, 0, 99])], [[2, 5]]);
  });
});

describe("generatedCodeLink", () => {
  const link = generatedCodeLink(CODE, KERNELS);

  it("maps a source line to the definition and call lines of the kernels that fused it", () => {
    assert.deepEqual(link.viewLines([17]), [5, 22]);
    assert.deepEqual(link.viewLines([24]), [13, 24]);
    assert.deepEqual(link.viewLines([25]), [5, 25]);
    assert.deepEqual(link.viewLines([23]), [23]); // an extern kernel: its call only
  });

  it("maps any line of a definition block back to the lines of every call of it", () => {
    for (const line of [5, 8, 9, 12]) {
      assert.deepEqual(link.sourceLines([line]), [17, 18, 25], `line ${line}`);
    }
    assert.deepEqual(link.sourceLines([14]), [24]);
  });

  it("maps a call line back to the lines of that call", () => {
    assert.deepEqual(link.sourceLines([22]), [17, 18]);
    assert.deepEqual(link.sourceLines([25]), [25]);
    assert.deepEqual(link.sourceLines([23]), [23]);
  });

  it("maps lines outside kernels to nothing", () => {
    for (const line of [1, 4, 17, 20, 26]) {
      assert.deepEqual(link.sourceLines([line]), [], `line ${line}`);
    }
    assert.deepEqual(link.viewLines([1]), []);
  });

  it("accepts a null def_line (extern kernels, from the JSON)", () => {
    const extern: GeneratedKernel = {
      name: "mm",
      kind: "extern",
      lines: [3],
      def_line: null,
      call_line: 7,
    };
    const only = generatedCodeLink("x\n".repeat(10), [extern]);
    assert.deepEqual(only.viewLines([3]), [7]);
    assert.deepEqual(only.sourceLines([7]), [3]);
  });
});

describe("selectedLines", () => {
  it("is the cursor's line for an empty selection (1-based)", () => {
    assert.deepEqual(selectedLines(4, 4, 7), [5]);
  });

  it("covers every line of a multi-line selection", () => {
    assert.deepEqual(selectedLines(2, 4, 3), [3, 4, 5]);
  });

  it("leaves out the line after a whole-line selection", () => {
    assert.deepEqual(selectedLines(2, 4, 0), [3, 4]);
    assert.deepEqual(selectedLines(2, 2, 0), [3]);
  });
});
