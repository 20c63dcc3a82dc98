/** The trace viewer's loading line while the server reads a big trace (issue 12). */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { traceLoadingText } from "../../extension/report/traceLoading";

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
