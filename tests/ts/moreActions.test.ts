import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isMoreActionsArgs, pickItems } from "../../extension/moreActions";

// As server/kernel_lens/lsp/code_lens.py sends it after a CPU run.
const ARGS = {
  function: "square",
  items: [
    {
      label: "$(symbol-namespace) Generated Code",
      detail: "what torch.compile generates for this function, beside the source",
      command: "kernelLens.showGeneratedCode",
      arguments: [{ uri: "file:///k/square.py", function: "square" }],
    },
    {
      label: "$(pulse) Nsight Compute",
      disabled: "needs an NVIDIA GPU: this function ran on the CPU",
    },
  ],
};

describe("moreActions", () => {
  it("accepts the server's argument and rejects malformed ones", () => {
    assert.equal(isMoreActionsArgs(ARGS), true);
    assert.equal(isMoreActionsArgs({ function: "f", items: [{ label: "x" }] }), false);
    assert.equal(isMoreActionsArgs({ function: "f", items: [{ label: "x", command: "" }] }), false);
    assert.equal(isMoreActionsArgs(null), false);
  });

  it("lists a disabled action with its reason and nothing to run", () => {
    const [generated, ncu] = pickItems(ARGS);
    assert.equal(generated?.action?.command, "kernelLens.showGeneratedCode");
    assert.equal(ncu?.label, "$(circle-slash) Nsight Compute");
    assert.equal(
      ncu?.description,
      "unavailable: needs an NVIDIA GPU: this function ran on the CPU",
    );
    assert.equal(ncu?.action, undefined);
  });
});
