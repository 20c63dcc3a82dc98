import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MAX_SUMMARY, clip, messageLines, summarize, inert } from "../../extension/errorText";
import { afterFailure, present } from "../../extension/status";

describe("summarize", () => {
  it("keeps a one-line message as it is", () => {
    assert.deepEqual(summarize("ncu was not found"), { text: "ncu was not found", more: false });
  });

  it("takes the first line of a raw Dynamo error with literal \\n, never the whole of it", () => {
    const raw =
      "Show Generated Code: compile: torch._dynamo.exc.Unsupported: Attempted to call function " +
      "marked as skipped\\n  Explanation: Dynamo does not know how to trace the builtin " +
      "`triton.runtime.interpreter.InterpretedFunction.__getitem__`.\\n\\nfrom user code:\\n" +
      '   File "/w/triton_square.py", line 35, in square\\n    square_kernel[grid](out, x)';
    const summary = summarize(raw);
    assert.equal(summary.more, true);
    assert.ok(!summary.text.includes("\\n") && !summary.text.includes("\n"));
    assert.ok(
      summary.text.startsWith("Show Generated Code: compile: torch._dynamo.exc.Unsupported"),
    );
    assert.ok(summary.text.length <= MAX_SUMMARY);
  });

  it("skips traceback frames to the line that says what went wrong", () => {
    const text =
      'Traceback (most recent call last):\n  File "a.py", line 3, in f\nValueError: boom';
    assert.equal(summarize(text).text, "ValueError: boom");
  });

  it("clips a long line at a word boundary with an ellipsis", () => {
    const long = `${"word ".repeat(60)}end`;
    const summary = summarize(long);
    assert.ok(summary.text.endsWith("…") && summary.text.length <= MAX_SUMMARY, summary.text);
    assert.equal(summary.more, true);
    assert.equal(clip("short", 10), "short");
  });

  it("says something for an empty message", () => {
    assert.equal(summarize("").text, "failed (no message)");
    assert.deepEqual(messageLines(" a \\n\\n b "), ["a", "b"]);
  });
});

describe("afterFailure", () => {
  it("returns an error to idle, the failure kept in the tooltip", () => {
    const next = afterFailure({ state: "error", message: "ncu not found", trusted: true });
    assert.equal(next.state, "idle");
    const p = present(next);
    assert.equal(p.severity, "none");
    assert.match(p.tooltip, /Last failure: ncu not found \(details in the output\)\./);
  });

  it("leaves any other state alone", () => {
    const profiling = { state: "profiling", message: "f", trusted: true } as const;
    assert.equal(afterFailure(profiling), profiling);
  });
});

describe("inert", () => {
  /** VS Code's own link syntax for notification messages (parseLinkedText, vs/base/common/linkedText.ts). */
  const NOTIFICATION_LINK =
    /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)(\3))?\)/gi;
  /** A Markdown inline link, for the renderers that read Markdown. */
  const MARKDOWN_LINK = /\[[^\]]*\]\s*\(/;

  it("leaves no link in a trace file's hostile name, which reads the same", () => {
    const name = "[Details](command:foo?%5B%5D).pt.trace.json.gz";
    assert.equal([...name.matchAll(NOTIFICATION_LINK)].length, 1, "the name is a link as it is");
    const shown = inert(`Reading ${name} (3 MB)…`);
    assert.deepEqual([...shown.matchAll(NOTIFICATION_LINK)], []);
    assert.doesNotMatch(shown, MARKDOWN_LINK);
    assert.equal(shown.replace(/\u200b/g, ""), `Reading ${name} (3 MB)…`);
  });

  it("breaks every link of a string, with a title, https or file", () => {
    const text =
      'a [x](https://e.com "t") b [y](file:///etc/passwd) [z](command:a.b?%7B%7D) [[w]](command:c)';
    assert.deepEqual([...inert(text).matchAll(NOTIFICATION_LINK)], []);
    assert.doesNotMatch(inert(text), /\]\(/);
  });

  it("is idempotent (a server title made inert again shows one break)", () => {
    const once = inert("[a](command:b) [c]");
    assert.equal(inert(once), once);
  });

  it("changes nothing in a string without a closing bracket", () => {
    assert.equal(inert("Profiling square (3 reps)…"), "Profiling square (3 reps)…");
  });
});
