import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import {
  CancelledError,
  Coalescer,
  TimeoutError,
  untilCancelled,
  withTimeout,
} from "../../extension/async";

/** onError for coalescers whose task never fails. */
function fail(error: unknown): never {
  assert.fail(`unexpected task error: ${String(error)}`);
}

/** A task that records its runs and how many overlapped. */
function recorder(ms: number) {
  const state = { runs: 0, active: 0, maxActive: 0 };
  const task = async (): Promise<void> => {
    state.runs += 1;
    state.active += 1;
    state.maxActive = Math.max(state.maxActive, state.active);
    await sleep(ms);
    state.active -= 1;
  };
  return { state, task };
}

describe("Coalescer", () => {
  it("merges requests made close together into one run", async () => {
    const { state, task } = recorder(5);
    const coalescer = new Coalescer(task, 20, fail);
    await Promise.all([coalescer.request(), coalescer.request(), coalescer.request()]);
    assert.equal(state.runs, 1);
  });

  it("runs once more for requests made during a run, never concurrently", async () => {
    const { state, task } = recorder(30);
    const coalescer = new Coalescer(task, 1, fail);
    const first = coalescer.request();
    await sleep(10); // the first run is in progress now
    assert.equal(coalescer.busy, true);
    const during = [coalescer.request(), coalescer.request()];
    await first;
    assert.equal(state.runs, 1);
    await Promise.all(during);
    assert.equal(state.runs, 2);
    assert.equal(state.maxActive, 1);
    assert.equal(coalescer.busy, false);
  });

  it("reports a failing task and keeps working", async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const coalescer = new Coalescer(
      () => {
        calls += 1;
        return calls === 1 ? Promise.reject(new Error("boom")) : Promise.resolve();
      },
      1,
      (error) => errors.push(error),
    );
    await coalescer.request();
    await coalescer.request();
    assert.equal(calls, 2);
    assert.equal(errors.length, 1);
  });

  it("releases waiting requests and runs nothing after dispose", async () => {
    const { state, task } = recorder(1);
    const coalescer = new Coalescer(task, 50, fail);
    const waiting = coalescer.request();
    coalescer.dispose();
    await waiting;
    await coalescer.request();
    await sleep(60);
    assert.equal(state.runs, 0);
  });
});

describe("withTimeout", () => {
  it("passes a result through", async () => {
    assert.equal(await withTimeout(Promise.resolve(7), 100, "x"), 7);
  });

  it("passes a rejection through", async () => {
    await assert.rejects(withTimeout(Promise.reject(new Error("no")), 100, "x"), /no/);
  });

  it("rejects with a TimeoutError naming the operation", async () => {
    await assert.rejects(
      withTimeout(new Promise(() => undefined), 10, "activation"),
      (error: unknown) => {
        assert.ok(error instanceof TimeoutError);
        assert.equal(error.message, "activation did not finish within 10 ms");
        return true;
      },
    );
  });
});

/** A cancellation token under the test's control. */
function tokenSource() {
  const listeners = new Set<() => void>();
  const token = {
    isCancellationRequested: false,
    onCancellationRequested(listener: () => void) {
      listeners.add(listener);
      return { dispose: () => listeners.delete(listener) };
    },
  };
  return {
    token,
    listeners,
    cancel: () => {
      token.isCancellationRequested = true;
      [...listeners].forEach((listener) => listener());
    },
  };
}

describe("untilCancelled", () => {
  it("settles like the promise, and stops listening", async () => {
    const { token, listeners } = tokenSource();
    assert.equal(await untilCancelled(Promise.resolve(3), token), 3);
    assert.equal(listeners.size, 0);
    await assert.rejects(untilCancelled(Promise.reject(new Error("boom")), token), /boom/);
    assert.equal(listeners.size, 0);
  });

  it("rejects with CancelledError as soon as the token is cancelled", async () => {
    const { token, cancel, listeners } = tokenSource();
    const never = new Promise<number>(() => undefined);
    const result = untilCancelled(never, token);
    cancel();
    await assert.rejects(result, CancelledError);
    assert.equal(listeners.size, 0);
  });

  it("rejects at once for a token cancelled already", async () => {
    const { token, cancel } = tokenSource();
    cancel();
    await assert.rejects(untilCancelled(Promise.resolve(1), token), CancelledError);
  });
});
