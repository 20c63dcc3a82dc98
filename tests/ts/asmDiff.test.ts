import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
  baseName,
  cudaKernelAt,
  diffDocPath,
  diffTitle,
  otherItems,
  parsePicks,
  scanKernels,
  sideName,
  tritonKernelAt,
} from "../../extension/views/asmDiffModel";
import { checkAsmDiffResult } from "../../extension/generated/wire";
import { Invalid } from "../../extension/guards";

const ROOT = join(__dirname, "..", "..");
const read = (path: string): string => readFileSync(join(ROOT, path), "utf8");

describe("asmDiffModel", () => {
  it("finds the Triton kernels and the load_inline CUDA kernels of the worked examples", () => {
    assert.deepEqual(scanKernels(read("kernels/triton_square.py")), {
      triton: ["square_kernel"],
      cuda: [],
    });
    assert.deepEqual(scanKernels(read("kernels/inline_square.py")), {
      triton: [],
      cuda: ["square_kernel"],
    });
    assert.deepEqual(scanKernels(read("kernels/square.py")), { triton: [], cuda: [] });
    // A __global__ in a file that never calls load_inline is not offered.
    assert.deepEqual(scanKernels('S = "__global__ void k(float* x) {}"'), { triton: [], cuda: [] });
    const autotuned = "@triton.autotune(configs=[])\n@triton.jit\ndef k2(x):\n    pass\n";
    assert.deepEqual(scanKernels(autotuned).triton, ["k2"]);
  });

  it("names the Triton kernel around the cursor", () => {
    const text = read("kernels/triton_square.py");
    const lines = text.split("\n");
    const load = lines.findIndex((l) => l.includes("tl.load("));
    assert.equal(tritonKernelAt(text, load), "square_kernel");
    const launcher = lines.findIndex((l) => l.includes("square_kernel[grid]"));
    assert.equal(tritonKernelAt(text, launcher), undefined); // inside `def square`
    assert.equal(tritonKernelAt(text, 0), undefined);
  });

  it("names the load_inline CUDA kernel around the cursor", () => {
    const text = read("kernels/inline_square.py");
    const lines = text.split("\n");
    const body = lines.findIndex((l) => l.includes("float v = in[i];"));
    assert.equal(cudaKernelAt(text, body), "square_kernel");
    const after = lines.findIndex((l) => l.startsWith("CPP_SOURCE ="));
    assert.equal(cudaKernelAt(text, after), undefined);
    assert.equal(cudaKernelAt(text, 0), undefined);
    assert.equal(cudaKernelAt("__global__ void k(float* x) {}", 0), undefined); // no load_inline
  });

  it("offers other constexprs, the last commit, then the workspace's other kernels", () => {
    const a = { uri: "file:///w/kernels/triton_square.py", kernel: "square_kernel" };
    const files = new Map([
      [a.uri, { triton: ["square_kernel", "other"], cuda: [] }],
      ["file:///w/kernels/inline_square.py", { triton: [], cuda: ["square_kernel"] }],
    ]);
    const items = otherItems(a, files, true);
    assert.deepEqual(
      items.map((i) => [i.label, i.description]),
      [
        ["$(symbol-constant) square_kernel with other constexprs…", "BLOCK_SIZE=64, num_warps…"],
        ["$(git-commit) square_kernel as of the last commit", "git HEAD"],
        ["$(file-binary) other", "Triton · triton_square.py"],
        ["$(chip) square_kernel", "CUDA · load_inline · inline_square.py"],
      ],
    );
    assert.deepEqual(items[3]?.choice, {
      kind: "target",
      target: { uri: "file:///w/kernels/inline_square.py", kernel: "square_kernel" },
    });
    assert.equal(
      otherItems(a, files, false).some((i) => i.choice.kind === "head"),
      false,
    );
    // From the CUDA kernel: no constexprs to pick, and not itself again.
    const cuda = { uri: "file:///w/kernels/inline_square.py", kernel: "square_kernel" };
    assert.deepEqual(
      otherItems(cuda, files, false).map((i) => i.label),
      ["$(file-binary) square_kernel", "$(file-binary) other"],
    );
  });

  it("names files inertly", () => {
    assert.equal(baseName("file:///w/k/inline%20square.py"), "inline square.py");
    assert.equal(baseName("file:///w/%24(alert).py"), "$\u200b(alert).py");
    assert.equal(baseName("file:///w/%E0%A4%A.py"), "%E0%A4%A.py");
  });

  it("reads NAME=VALUE picks", () => {
    assert.deepEqual(parsePicks("BLOCK_SIZE=64"), { BLOCK_SIZE: "64" });
    assert.deepEqual(parsePicks(" BLOCK_SIZE = 64 , x_ptr=*fp16 "), {
      BLOCK_SIZE: "64",
      x_ptr: "*fp16",
    });
    assert.ok("error" in parsePicks("64"));
    assert.ok("error" in parsePicks(""));
    assert.ok("error" in parsePicks("1x=3"));
  });

  it("names the documents and the diff from the server's recorded answer", () => {
    const answer: unknown = JSON.parse(read("tests/data/protocol/kernelLens_asmDiff.json"));
    const result = checkAsmDiffResult(answer, "result");
    if (result instanceof Invalid) {
      assert.fail(result.reason);
    }
    assert.equal(sideName(result.a), "square_kernel · BLOCK_SIZE=64");
    assert.equal(sideName(result.b), "square_kernel · BLOCK_SIZE=1024");
    assert.equal(
      diffTitle(result, "normalised"),
      "square_kernel · BLOCK_SIZE=64 ↔ square_kernel · BLOCK_SIZE=1024 · PTX (normalised)",
    );
    assert.equal(diffDocPath(3, "a", result, "original"), "/3/original/A · square_kernel.ptx");
    // The summary header is the documents' first lines, the same count on both sides.
    const header = result.a.header;
    assert.equal(header.length, result.b.header.length);
    assert.deepEqual(result.a.normalised.text.split("\n").slice(0, header.length), header);
    assert.match(header[header.length - 2] ?? "", /^\/\/ differs most: B loads 128 bits/);
  });
});
