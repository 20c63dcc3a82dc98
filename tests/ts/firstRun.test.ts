import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { firstRunAdvice, missingModule } from "../../extension/firstRun";

const pandas = {
  ok: false,
  failure: "import-error",
  reason: "ModuleNotFoundError: No module named 'pandas'",
  detail: "Traceback …",
} as const;

describe("firstRunAdvice", () => {
  it("names torch and Kernel Lens, not pandas, for a bare interpreter", () => {
    const advice = firstRunAdvice("python3", pandas, false, true);
    assert.equal(
      advice.message,
      "Kernel Lens: python3 has neither torch nor Kernel Lens. Choose the interpreter of your PyTorch project.",
    );
    assert.ok(!advice.message.includes("pandas"));
    assert.deepEqual(advice.actions, ["Choose Interpreter", "Install Kernel Lens", "Show Details"]);
  });

  it("offers the install first where torch is there", () => {
    const advice = firstRunAdvice("/v/bin/python", pandas, true, true);
    assert.equal(advice.message, "Kernel Lens is not installed in /v/bin/python (torch is there).");
    assert.deepEqual(advice.actions, ["Install Kernel Lens", "Choose Interpreter", "Show Details"]);
  });

  it("offers no install without a bundled wheel, and never more than three short buttons", () => {
    const advice = firstRunAdvice("python3", pandas, true, false);
    assert.deepEqual(advice.actions, ["Choose Interpreter", "Show Details"]);
    for (const failure of ["not-found", "too-old", "timeout", "import-error"] as const) {
      const a = firstRunAdvice("python3", { ...pandas, failure }, false, true);
      assert.ok(a.actions.length <= 3 && a.actions.every((x) => x.length <= 20), failure);
    }
  });

  it("reads the missing module", () => {
    assert.equal(missingModule("ModuleNotFoundError: No module named 'pandas.core'"), "pandas");
    assert.equal(missingModule("ImportError: cannot import name x"), undefined);
  });
});
