import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MAX_SUBJECT, afterFailure, fileName, present, truncate } from "../../extension/status";

describe("present", () => {
  it("shows a ready server", () => {
    const p = present({ state: "idle", message: "", trusted: true });
    assert.equal(p.text, "$(pulse) Kernel Lens");
    assert.equal(p.severity, "none");
    assert.match(p.tooltip, /^Kernel Lens: ready\.\nClick to show the Kernel Lens output\.$/);
  });

  it("says Restricted Mode when the workspace is not trusted", () => {
    const p = present({
      state: "idle",
      message: "Trust the workspace to profile.",
      trusted: false,
    });
    assert.equal(p.text, "$(workspace-untrusted) Kernel Lens");
    assert.match(p.tooltip, /Restricted Mode/);
    assert.match(p.tooltip, /Trust the workspace to profile\./);
  });

  it("names the function being profiled, and its file in the tooltip", () => {
    const p = present({
      state: "profiling",
      message: "square",
      uri: "file:///work/kernels/my%20square.py",
      trusted: true,
    });
    assert.equal(p.text, "$(loading~spin) profiling square");
    assert.match(p.tooltip, /^Kernel Lens: profiling square\nin my square\.py\n/);
  });

  it("names a whole-script run by its file, not the server's <script>", () => {
    const p = present({
      state: "profiling",
      message: "<script>",
      uri: "file:///work/train.py",
      trusted: true,
    });
    assert.equal(p.text, "$(loading~spin) profiling train.py (script)");
    assert.ok(!p.tooltip.includes("<script>"));
    const failed = present({
      state: "error",
      message: "<script>: runtime",
      uri: "file:///work/train.py",
      trusted: true,
    });
    assert.match(failed.tooltip, /train\.py \(script\): runtime/);
  });

  it("shortens a long subject in the text but not in the tooltip", () => {
    const name = "f".repeat(100);
    const p = present({ state: "profiling", message: name, trusted: true });
    assert.equal(p.text, `$(loading~spin) profiling ${"f".repeat(MAX_SUBJECT - 1)}…`);
    assert.ok(p.tooltip.includes(name));
  });

  it("shows an error with its message", () => {
    const p = present({ state: "error", message: "agent crashed (SIGSEGV)", trusted: true });
    assert.equal(p.text, "$(error) Kernel Lens error");
    assert.equal(p.severity, "error");
    assert.match(p.tooltip, /^Kernel Lens error: agent crashed \(SIGSEGV\)\n/);
  });

  it("shows the client's own states", () => {
    assert.equal(
      present({ state: "starting", message: "", trusted: true }).text,
      "$(loading~spin) Kernel Lens",
    );
    assert.equal(present({ state: "stopped", message: "", trusted: true }).severity, "warning");
    const unavailable = present({
      state: "unavailable",
      message: "ModuleNotFoundError: No module named 'pandas'",
      trusted: true,
    });
    assert.equal(unavailable.text, "$(warning) Kernel Lens");
    assert.match(
      unavailable.tooltip,
      /cannot start: ModuleNotFoundError: No module named 'pandas'/,
    );
  });
});

describe("an interpreter held back in Restricted Mode", () => {
  const held =
    "Restricted Mode: /w/.venv/bin/python is in the workspace; it runs once the folder is trusted";

  it("is said first in the tooltip, whatever the state", () => {
    for (const state of ["idle", "unavailable", "starting", "error"] as const) {
      const shown = present({ state, message: "m", trusted: false, held });
      assert.equal(shown.tooltip.split("\n")[0], held, state);
    }
    assert.doesNotMatch(
      present({ state: "idle", message: "", trusted: false }).tooltip,
      /held|workspace;/,
    );
  });

  it("survives an error going back to idle", () => {
    assert.equal(afterFailure({ state: "error", message: "x", trusted: false, held }).held, held);
  });
});

describe("helpers", () => {
  it("truncates with an ellipsis", () => {
    assert.equal(truncate("abc", 3), "abc");
    assert.equal(truncate("abcd", 3), "ab…");
  });

  it("takes the decoded file name of a URI", () => {
    assert.equal(fileName("file:///a/b/c%2B%2B.py"), "c++.py");
    assert.equal(fileName("file:///a/b.py?x=1#L3"), "b.py");
    assert.equal(fileName("file:///a/bad%E0.py"), "bad%E0.py");
  });
});
