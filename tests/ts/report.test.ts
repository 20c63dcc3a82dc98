/**
 * The report panel's pure modules: the webview's HTML shell (CSP, nonce, escaping), the messages
 * between extension and webview, the checks of the server's answers (against recorded data),
 * the commands behind the buttons, and package.json's custom editors.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import { commandFor } from "../../extension/report/actions";
import {
  contentSecurityPolicy,
  escapeHtml,
  makeNonce,
  shellHtml,
  type ShellOptions,
} from "../../extension/report/html";
import {
  actionOf,
  isFromWebview,
  isToWebview,
  type FromWebview,
} from "../../extension/report/messages";
import type { SweepResult } from "../../extension/generated/wire";
import { noBidi } from "../../extension/report/webview/format";
import {
  commandFailure,
  isNcuFileResult,
  isProfile,
  isReportResult,
  isRevealReportParams,
  isShowReportArgs,
  isSweepResult,
  isTimeline,
  isTraceFileResult,
} from "../../extension/protocol";
import { REPORT_PANEL_TYPE, VIEW_TYPES } from "../../extension/report/viewTypes";

const ROOT = path.resolve(__dirname, "..", "..");
const readJson = (...parts: string[]): unknown =>
  JSON.parse(readFileSync(path.join(ROOT, ...parts), "utf8"));

const PROFILE = readJson("tests", "data", "h200", "square_three_ways_profile.json");
const TIMELINE = readJson("tests", "data", "report", "matmul_relu_timeline.json");
const NCU = readJson("tests", "data", "report", "triton_fused_ncu.json");

const SWEEP: SweepResult = {
  param: "BLOCK_SIZE",
  current: 1024,
  rows: [
    {
      value: 256,
      median_ms: 0.2,
      spread_pct: 1,
      reps: 50,
      bytes: 8e6,
      gb_per_s: 40,
      error: null,
    },
    { value: 8192, error: "CompilationError: out of resources" },
  ],
  best: { value: 256, median_ms: 0.2 },
  method: "cuda-events",
  device: "NVIDIA H200",
};

const OPTIONS: ShellOptions = {
  cspSource: "https://file+.vscode-resource.vscode-cdn.net",
  nonce: "0123456789abcdef0123456789abcdef",
  scriptUri: "https://file+.vscode-resource.vscode-cdn.net/ext/dist/webview/report.js",
  styleUri: "https://file+.vscode-resource.vscode-cdn.net/ext/dist/webview/report.css",
  title: "square<float> & co",
  mode: "report",
};

/** The text of an attribute value as the browser reads it. */
function unescape(text: string): string {
  return text
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&");
}

describe("report html shell", () => {
  it("escapes the five HTML specials", () => {
    assert.equal(
      escapeHtml(`<a href="x">'&'</a>`),
      "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;",
    );
    assert.equal(
      escapeHtml("void k<4, at::native::F<float> >(int)"),
      "void k&lt;4, at::native::F&lt;float&gt; &gt;(int)",
    );
  });

  it("sets exactly the strict policy: nothing by default, nonce scripts, resources from the extension", () => {
    const html = shellHtml(OPTIONS);
    const meta = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html);
    assert.ok(meta?.[1] !== undefined, "no CSP meta tag");
    assert.equal(
      unescape(meta[1]),
      "default-src 'none'; img-src https://file+.vscode-resource.vscode-cdn.net data:; " +
        "style-src https://file+.vscode-resource.vscode-cdn.net; " +
        "font-src https://file+.vscode-resource.vscode-cdn.net; " +
        "script-src 'nonce-0123456789abcdef0123456789abcdef'; " +
        "base-uri 'none'; form-action 'none'",
    );
    assert.equal(html.match(/Content-Security-Policy/g)?.length, 1);
  });

  it("loads one script, with the nonce, and one stylesheet; nothing inline", () => {
    const html = shellHtml(OPTIONS);
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    assert.equal(scripts.length, 1);
    assert.match(scripts[0]?.[1] ?? "", / nonce="0123456789abcdef0123456789abcdef"/);
    assert.match(scripts[0]?.[1] ?? "", / src="https:\/\/[^"]+\/dist\/webview\/report\.js"/);
    assert.equal(scripts[0]?.[2], "", "inline script");
    assert.doesNotMatch(html, /<style\b/i);
    assert.doesNotMatch(html, /\sstyle\s*=/i);
    assert.doesNotMatch(html, /\son[a-z]+\s*=/i, "inline event handler");
    assert.match(html, /<link rel="stylesheet" href="[^"]+\/dist\/webview\/report\.css">/);
    assert.doesNotMatch(html, /http:\/\/|cdn\.jsdelivr|unpkg/);
  });

  it("escapes everything it interpolates", () => {
    const html = shellHtml({
      ...OPTIONS,
      title: `</title><script>alert(1)</script>`,
      scriptUri: `x"><script>alert(2)</script>`,
    });
    assert.equal(html.match(/<script\b/g)?.length, 1);
    assert.match(html, /<title>&lt;\/title&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;<\/title>/);
    assert.match(html, /src="x&quot;&gt;&lt;script&gt;alert\(2\)&lt;\/script&gt;"/);
    assert.match(html, /<body data-mode="report">/);
  });

  it("rejects a nonce or a source that would change the policy", () => {
    assert.throws(() => contentSecurityPolicy("vscode-resource:", "abc'; script-src *"));
    assert.throws(() => contentSecurityPolicy("a; script-src *", "abc"));
    assert.throws(() => contentSecurityPolicy("", "abc"));
    assert.throws(() => contentSecurityPolicy("'unsafe-inline' https://x", "abc"));
  });

  it("takes the several sources VS Code in a browser gives", () => {
    assert.equal(
      contentSecurityPolicy("'self' https://*.vscode-cdn.net", "abc"),
      "default-src 'none'; img-src 'self' https://*.vscode-cdn.net data:; " +
        "style-src 'self' https://*.vscode-cdn.net; font-src 'self' https://*.vscode-cdn.net; " +
        "script-src 'nonce-abc'; base-uri 'none'; form-action 'none'",
    );
  });

  it("makes a fresh 128-bit nonce each time", () => {
    const a = makeNonce();
    assert.match(a, /^[0-9a-f]{32}$/);
    assert.notEqual(a, makeNonce());
  });
});

describe("report messages", () => {
  it("accepts the webview's well-formed messages only", () => {
    const good: FromWebview[] = [
      { type: "ready" },
      { type: "refresh" },
      { type: "profile" },
      { type: "revealLine", line: 35 },
      { type: "runNcu", set: "basic" },
      { type: "runNcu", set: "full" },
      { type: "sweep", param: "BLOCK_SIZE", values: null },
      { type: "sweep", param: "chunk", values: [64, 128] },
      { type: "applyParameter", param: "BLOCK_SIZE", value: 256 },
      { type: "timelineWindow", id: 3, start: 4000, end: 6000.5 },
    ];
    for (const message of good) {
      assert.equal(isFromWebview(message), true, JSON.stringify(message));
    }
    const bad: unknown[] = [
      null,
      "ready",
      [],
      { type: "open", uri: "file:///etc/passwd" },
      { type: "revealLine", line: 0 },
      { type: "revealLine", line: 1.5 },
      { type: "revealLine", line: "3" },
      { type: "runNcu", set: "--launch-skip 0" },
      { type: "sweep", param: "x; rm -rf /", values: null },
      { type: "sweep", param: "B", values: [] },
      { type: "sweep", param: "B", values: [0] },
      { type: "sweep", param: "B", values: [1.5] },
      { type: "sweep", param: "B", values: Array.from({ length: 65 }, (_, i) => i + 1) },
      { type: "sweep", param: "B" },
      { type: "applyParameter", param: "B", value: -1 },
      { type: "applyParameter", param: "1B", value: 4 },
      { type: "timelineWindow", id: 3, start: 6000, end: 4000 },
      { type: "timelineWindow", id: 3, start: 0, end: Infinity },
      { type: "timelineWindow", id: "3", start: 0, end: 1 },
    ];
    for (const message of bad) {
      assert.equal(isFromWebview(message), false, JSON.stringify(message));
    }
  });

  it("tells the actions from the other messages", () => {
    assert.equal(actionOf({ type: "runNcu", set: "full" }), "runNcu");
    assert.equal(actionOf({ type: "applyParameter", param: "B", value: 2 }), "applyParameter");
    assert.equal(actionOf({ type: "revealLine", line: 2 }), undefined);
    assert.equal(actionOf({ type: "ready" }), undefined);
  });

  it("accepts the extension's messages on the webview side", () => {
    assert.equal(isToWebview({ type: "loading", message: "…" }), true);
    assert.equal(isToWebview({ type: "report", report: {}, tab: "ncu" }), true);
    assert.equal(isToWebview({ type: "report", report: {}, tab: "code" }), false);
    assert.equal(isToWebview({ type: "busy", action: null }), true);
    assert.equal(isToWebview({ type: "busy", action: "sweep" }), true);
    assert.equal(isToWebview({ type: "busy", action: "rm" }), false);
    assert.equal(isToWebview({ type: "theme" }), true);
    assert.equal(isToWebview({ type: "timelineWindow", id: 1, timeline: null }), true);
    assert.equal(isToWebview({ type: "timelineWindow", id: 1, timeline: {} }), true);
    assert.equal(isToWebview({ type: "timelineWindow", timeline: null }), false);
    assert.equal(isToWebview({ type: "error" }), false);
    assert.equal(isToWebview({ type: "html", html: "<b>" }), false);
  });

  it("turns the buttons into the server's commands on the panel's function", () => {
    const target = { uri: "file:///w/kernels/triton_square.py", function: "square" };
    assert.deepEqual(commandFor(target, { type: "profile" }), {
      command: "kernelLens.profile",
      arguments: [target],
    });
    assert.deepEqual(commandFor(target, { type: "runNcu", set: "full" }), {
      command: "kernelLens.runNcu",
      arguments: [{ ...target, set: "full" }],
    });
    assert.deepEqual(commandFor(target, { type: "sweep", param: "BLOCK_SIZE", values: null }), {
      command: "kernelLens.sweep",
      arguments: [{ ...target, param: "BLOCK_SIZE" }],
    });
    assert.deepEqual(
      commandFor(target, { type: "sweep", param: "BLOCK_SIZE", values: [64, 128] }),
      {
        command: "kernelLens.sweep",
        arguments: [{ ...target, param: "BLOCK_SIZE", values: [64, 128] }],
      },
    );
    assert.deepEqual(
      commandFor(target, { type: "applyParameter", param: "BLOCK_SIZE", value: 256 }),
      {
        command: "kernelLens.applyParameter",
        arguments: [{ ...target, param: "BLOCK_SIZE", value: 256 }],
      },
    );
    assert.equal(commandFor(target, { type: "revealLine", line: 3 }), undefined);
  });
});

describe("report answers from the server", () => {
  it("accepts the recorded H200 profile, timeline and ncu report", () => {
    assert.equal(isProfile(PROFILE), true);
    assert.equal(isTimeline(TIMELINE), true);
    assert.equal(isNcuFileResult(NCU), true);
    const report = {
      function: "f",
      uri: "file:///a.py",
      int_parameters: { BLOCK_SIZE: 1024 },
      profile: PROFILE,
      timeline: TIMELINE,
      ncu: { ...(NCU as object), set: "full" },
      sweep: SWEEP,
    };
    assert.equal(isReportResult(report), true);
    assert.equal(
      isReportResult({
        function: "f",
        uri: "file:///a.py",
        int_parameters: {},
        profile: null,
        timeline: null,
        ncu: null,
        sweep: null,
      }),
      true,
    );
    // The server always sends int_parameters (the drift the wire package fixed: it was
    // optional only here).
    assert.equal(isReportResult({ ...report, int_parameters: undefined }), false);
    assert.equal(isTraceFileResult({ path: "/t.json", timeline: TIMELINE, summary: {} }), true);
  });

  it("rejects answers that would break the views", () => {
    const timeline = TIMELINE as { lanes: { kind: string; events: object[] }[] };
    const lane = timeline.lanes[0];
    assert.ok(lane !== undefined);
    assert.equal(isTimeline({ ...timeline, lanes: [{ ...lane, kind: "tpu" }] }), false);
    assert.equal(
      isTimeline({ ...timeline, lanes: [{ ...lane, events: [{ start: "0" }] }] }),
      false,
    );
    assert.equal(
      isReportResult({ function: "f", uri: "u", profile: null, timeline: null, ncu: null }),
      false,
    );
    assert.equal(isSweepResult({ ...SWEEP, best: null }), false);
    assert.equal(isSweepResult({ ...SWEEP, rows: [{ value: "64", error: null }] }), false);
    assert.equal(isNcuFileResult({ ...(NCU as object), kernels: [{ id: 0, name: "k" }] }), false);
    assert.equal(
      isProfile({
        ...(PROFILE as object),
        lines: [{ line: 3, source: "x", ops: [{ name: "aten::mul" }] }],
      }),
      false,
    );
  });

  it("accepts a sweep whose values partly failed", () => {
    assert.equal(isSweepResult(SWEEP), true);
    assert.equal(isSweepResult({ ...SWEEP, current: null }), true);
  });

  it("checks the lens's argument and the reveal notification", () => {
    assert.equal(isShowReportArgs({ uri: "file:///a.py", function: "square" }), true);
    assert.equal(isShowReportArgs({ uri: "file:///a.py" }), false);
    assert.equal(isRevealReportParams({ uri: "u", function: "f", tab: "sweep" }), true);
    assert.equal(isRevealReportParams({ uri: "u", function: "f", tab: "summary" }), false);
  });

  it("reads a command's failure from its result", () => {
    assert.equal(commandFailure({ ok: true, kernels: 1 }), undefined);
    assert.equal(commandFailure(null), undefined);
    assert.equal(
      commandFailure({ ok: false, error: { kind: "unsupported", message: "ncu needs a GPU" } }),
      "ncu needs a GPU",
    );
    assert.equal(
      commandFailure({ ok: false, message: "no default to change" }),
      "no default to change",
    );
    assert.match(commandFailure({ ok: false }) ?? "", /failed/);
  });
});

interface CustomEditor {
  viewType: string;
  displayName: string;
  selector: { filenamePattern: string }[];
  priority: string;
}

describe("package.json: the report", () => {
  const manifest = readJson("package.json") as {
    contributes: { customEditors: CustomEditor[] };
    devDependencies: Record<string, string>;
  };
  const editors = manifest.contributes.customEditors;

  it("contributes the three custom editors the extension registers", () => {
    assert.deepEqual(editors.map((e) => e.viewType).sort(), Object.values(VIEW_TYPES).sort());
    assert.ok(!Object.values<string>(VIEW_TYPES).includes(REPORT_PANEL_TYPE));
  });

  it("opens profiler output by default and leaves other JSON alone", () => {
    const byType = new Map(editors.map((e) => [e.viewType, e]));
    const patterns = (type: string) => byType.get(type)?.selector.map((s) => s.filenamePattern);
    assert.equal(byType.get(VIEW_TYPES.traceTimeline)?.priority, "default");
    assert.deepEqual(patterns(VIEW_TYPES.traceTimeline), [
      "*.pt.trace.json",
      "*.pt.trace.json.gz",
      "*.pftrace",
    ]);
    assert.equal(byType.get(VIEW_TYPES.jsonTimeline)?.priority, "option");
    assert.deepEqual(patterns(VIEW_TYPES.jsonTimeline), ["*.json", "*.json.gz"]);
    assert.equal(byType.get(VIEW_TYPES.ncuReport)?.priority, "default");
    assert.deepEqual(patterns(VIEW_TYPES.ncuReport), ["*.ncu-rep"]);
    for (const editor of editors) {
      assert.match(editor.displayName, /Kernel Lens/);
    }
  });

  it("bundles Chart.js at build time (a dev dependency, never a runtime one)", () => {
    assert.ok(manifest.devDependencies["chart.js"] !== undefined);
  });
});

describe("noBidi", () => {
  it("shows a stored string's bidi controls instead of obeying them", () => {
    assert.equal(noBidi("NVIDIA \u202eH200 evil"), "NVIDIA <U+202E>H200 evil");
    assert.equal(
      noBidi("\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069"),
      "<U+202A><U+202B><U+202C><U+202D><U+2066><U+2067><U+2068><U+2069>",
    );
    assert.doesNotMatch(noBidi("a\u202eb\u2067c"), /[\u202a-\u202e\u2066-\u2069]/);
  });

  it("leaves other text alone, right-to-left script included", () => {
    assert.equal(noBidi("aten::mm → sm80_xmma_gemm<…> שלום"), "aten::mm → sm80_xmma_gemm<…> שלום");
  });
});
