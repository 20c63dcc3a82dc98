/** The trace viewer's loading line while the server reads a big trace (issue 12). */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { partialTraceText, traceLoadingText } from "../../extension/report/traceLoading";

describe("traceLoadingText", () => {
  it("names the file and its size before the server says anything", () => {
    assert.equal(traceLoadingText("step.json", 228_536_295), "Reading step.json (229 MB)…");
    assert.equal(traceLoadingText("big.json.gz", 3.2e9), "Reading big.json.gz (3.2 GB)…");
    assert.equal(traceLoadingText("tiny.json", 10), "Reading tiny.json (1 MB)…");
    assert.equal(traceLoadingText("gone.json", undefined), "Reading gone.json…");
  });

  it("adds the server's progress", () => {
    assert.equal(
      traceLoadingText("step.json", 228_536_295, { percentage: 45.4, message: "reading events" }),
      "Reading step.json (229 MB): 45% · reading events",
    );
  });
});

describe("partialTraceText", () => {
  it("says how much of the trace a first view shows", () => {
    assert.equal(
      partialTraceText({ fraction: 0.0731, events: 72263 }),
      "First view: the first 72,263 events (about 7% of the file); the rest is being read…",
    );
    assert.match(partialTraceText({ fraction: 0.0001, events: 3 }), /about 1% of the file/);
  });
});
