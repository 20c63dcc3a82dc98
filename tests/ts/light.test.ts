import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { lightOutcome, noCudaGpu } from "../../extension/light";

// As server/kernel_lens/lsp/light.py answers kernelLens.profileLight on a machine without CUDA
// (the agent's own message, with the server's hint after it).
const NO_GPU = {
  ok: false,
  function: "<light>",
  error: {
    kind: "unsupported",
    message:
      "the light profile records CUDA kernels: no CUDA GPU. The light profile records CUDA " +
      "kernels through Triton's Proton and needs a CUDA GPU; Profile Script (the deep " +
      "profile, torch.profiler) works on the CPU too",
    line: null,
  },
};

describe("light", () => {
  it("says a machine without CUDA cannot run it, and offers Profile Script", () => {
    assert.equal(noCudaGpu(NO_GPU as Parameters<typeof noCudaGpu>[0]), true);
    const outcome = lightOutcome(NO_GPU, "train.py");
    assert.equal(outcome?.offerDeep, true);
    assert.equal(outcome?.severity, "info");
    assert.match(outcome?.message ?? "", /train\.py needs a CUDA GPU/);
    assert.match(outcome?.message ?? "", /Profile Script \(the deep profile\) runs on the CPU/);
  });

  it("says a CUPTI client that got there first, with no offer (it would starve the deep too)", () => {
    const starved = {
      ok: false,
      error: {
        kind: "unsupported",
        message:
          "the light profile recorded no GPU kernels on a CUDA run: NVTX_INJECTION64_PATH=" +
          "/x/libcupti.so loads another CUPTI client into this process, and CUPTI takes one\nmore",
      },
    };
    const outcome = lightOutcome(starved, "train.py");
    assert.equal(outcome?.severity, "warning");
    assert.equal(outcome?.offerDeep, false);
    assert.match(outcome?.message ?? "", /failed \(unsupported\): .*CUPTI takes one$/);
  });

  it("says a script's own failure without an offer, and nothing for a success or a cancel", () => {
    const failed = { ok: false, error: { kind: "runtime", message: "ValueError: boom" } };
    assert.deepEqual(lightOutcome(failed, "t.py"), {
      severity: "warning",
      message: "The light profile of t.py failed (runtime): ValueError: boom",
      offerDeep: false,
    });
    assert.equal(lightOutcome({ ok: true, function: "<light>" }, "t.py"), undefined);
    const cancelled = { ok: false, error: { kind: "cancelled", message: "cancelled" } };
    assert.equal(lightOutcome(cancelled, "t.py"), undefined);
    const untrusted = { ok: false, error: { kind: "untrusted", message: "trust it" } };
    assert.equal(lightOutcome(untrusted, "t.py"), undefined);
    assert.equal(lightOutcome(undefined, "t.py"), undefined);
    assert.equal(lightOutcome({ ok: "no" }, "t.py"), undefined);
  });
});
