/**
 * Argument Types… after a failed Show Assembly (`views/asmFailure.ts`): the types the compile
 * tried are read from the server's message, so that the failure's toast and the palette offer
 * the picker prefilled with the guess (issue 41).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { failedTypes } from "../../extension/views/asmFailure";

describe("failedTypes", () => {
  it("reads a failed compile's signature and constexprs (a grouped GEMM's guessed *fp32)", () => {
    const message =
      "runtime: Triton could not compile grouped_gemm for sm_90 with a_ptr: *fp16, " +
      "indices_ptr: *fp32, n: i32, eps: fp32, ACT='leaky_relu, x', BLOCK=(64, 32), BM=64: " +
      "CompilationError: at 12:8:\n    idx = tl.load(indices_ptr + pid)\n" +
      "ValueError('unsupported tensor index: fp32')";
    const found = failedTypes(message);
    assert.deepEqual(found, {
      kernel: "grouped_gemm",
      signature: {
        a_ptr: "*fp16",
        indices_ptr: "*fp32",
        n: "i32",
        eps: "fp32",
        ACT: "constexpr",
        BLOCK: "constexpr",
        BM: "constexpr",
      },
      constexprs: { ACT: "'leaky_relu, x'", BLOCK: "(64, 32)", BM: "64" },
    });
  });

  it("reads the constexprs a refused guess names", () => {
    const message =
      "inputs: _rms_norm_forward_kernel: no launch could run here (the script ran to its " +
      "end), and the text does not say casting_mode, elementwise_affine (computed at run " +
      "time); Kernel Lens does not compile it with a guess of 1: give them with Argument Types…";
    const found = failedTypes(message);
    assert.equal(found?.kernel, "_rms_norm_forward_kernel");
    assert.deepEqual(found?.signature, {
      casting_mode: "constexpr",
      elementwise_affine: "constexpr",
    });
    assert.deepEqual(found?.constexprs, { casting_mode: undefined, elementwise_affine: undefined });
  });

  it("reads the signature's guess for a kernel that no text launches", () => {
    // As the agent says it (stages/triton_ir.py::_text_spec) under the launcher's failure.
    const message =
      "not-found: nothing in kern.py or its package launches scale_kernel; Kernel Lens " +
      "compiles a kernel for the argument types of a launch: give a driver script\n" +
      "scale_kernel: no launch could run here, and the text has no launch of it to read its " +
      "types from: give them with Argument Types… (kernel-lens asm --types NAME=TYPE,…), or " +
      "the launch's inputs (--from DRIVER); to start from: x_ptr: *fp32, out_ptr: *fp32, " +
      "n: i32, scale: fp32, BLOCK=64";
    assert.deepEqual(failedTypes(message), {
      kernel: "scale_kernel",
      signature: {
        x_ptr: "*fp32",
        out_ptr: "*fp32",
        n: "i32",
        scale: "fp32",
        BLOCK: "constexpr",
      },
      constexprs: { BLOCK: "64" },
    });
  });

  it("is undefined for any other failure", () => {
    assert.equal(failedTypes("import: ModuleNotFoundError: No module named 'liger'"), undefined);
    assert.equal(failedTypes("Triton could not compile k for sm_90 with nonsense here"), undefined);
  });
});
