import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CrashPolicy } from "../../extension/crashPolicy";

describe("CrashPolicy", () => {
  it("does not restart a server that never got through initialize", () => {
    const decision = new CrashPolicy().closed(0, false);
    assert.deepEqual(decision, {
      restart: false,
      message: "The Kernel Lens server exited during start-up; its error is in the output.",
    });
  });

  it("restarts a crashed server up to the budget, then stops", () => {
    const policy = new CrashPolicy(2, 60_000);
    assert.deepEqual(policy.closed(0, true), { restart: true });
    assert.deepEqual(policy.closed(1_000, true), { restart: true });
    const third = policy.closed(2_000, true);
    assert.equal(third.restart, false);
    assert.match(
      third.restart ? "" : third.message,
      /crashed 3 times in 1 minutes and is not restarted again/,
    );
  });

  it("forgets crashes older than the window", () => {
    const policy = new CrashPolicy(1, 10_000);
    assert.deepEqual(policy.closed(0, true), { restart: true });
    assert.deepEqual(policy.closed(10_000, true), { restart: true });
    assert.equal(policy.closed(15_000, true).restart, false);
  });
});
