import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import {
  AssemblyRequest,
  ClientCommands,
  GeneratedCodeRequest,
  InlineExtensionRequest,
  SetTrustedNotification,
  ServerCommands,
  StatusNotification,
  NcuFileRequest,
  ReportRequest,
  ReportServerCommands,
  ResultsChangedNotification,
  RevealReportNotification,
  TimelineWindowRequest,
  TraceFileRequest,
  FunctionsRequest,
  type AssemblyResult,
  type GeneratedCodeResult,
} from "../../extension/protocol";
import {
  isAssemblyResult,
  isGeneratedCodeResult,
  isShowAssemblyArgs,
  isShowGeneratedCodeArgs,
  isStatusParams,
} from "../../extension/guards";

const ROOT = path.resolve(__dirname, "..", "..");
const PYTHON_PROTOCOL = path.join(ROOT, "server", "kernel_lens", "lsp", "protocol.py");
const python = existsSync(PYTHON_PROTOCOL) ? readFileSync(PYTHON_PROTOCOL, "utf8") : undefined;

/** The string constants of protocol.py (`NAME = "value"`). */
const pythonConstants = new Map(
  [...(python ?? "").matchAll(/^([A-Z][A-Z0-9_]*)\s*(?::[^=]*)?=\s*"([^"]*)"/gm)].map(
    (m) => [m[1] ?? "", m[2] ?? ""] as const,
  ),
);

/** Our names with the constant that spells each in protocol.py. */
const NAMES: [constant: string, name: string][] = [
  ["NOTIFY_STATUS", StatusNotification.method],
  ["NOTIFY_SET_TRUSTED", SetTrustedNotification.method],
  ["CMD_PROFILE", ServerCommands.profile],
  ["CMD_PROFILE_ALL", ServerCommands.profileAll],
  ["REQ_ASSEMBLY", AssemblyRequest.method],
  ["REQ_GENERATED_CODE", GeneratedCodeRequest.method],
  ["CMD_SHOW_ASSEMBLY", ClientCommands.showAssembly],
  ["CMD_SHOW_GENERATED_CODE", ClientCommands.showGeneratedCode],
  ["REQ_INLINE", InlineExtensionRequest.method],
  ["CMD_SHOW_INLINE", ClientCommands.showInlineExtension],
  ["REQ_REPORT", ReportRequest.method],
  ["REQ_TRACE_FILE", TraceFileRequest.method],
  ["REQ_NCU_FILE", NcuFileRequest.method],
  ["REQ_TIMELINE_WINDOW", TimelineWindowRequest.method],
  ["NOTIFY_REVEAL", RevealReportNotification.method],
  ["NOTIFY_RESULTS_CHANGED", ResultsChangedNotification.method],
  ["CMD_RUN_NCU", ReportServerCommands.runNcu],
  ["CMD_SWEEP", ReportServerCommands.sweep],
  ["CMD_APPLY_PARAMETER", ReportServerCommands.applyParameter],
  ["CMD_SHOW_REPORT", ClientCommands.showReport],
];

/** Constants the server is gaining now: checked once protocol.py defines them. */
const ARRIVING = new Set([
  "REQ_ASSEMBLY",
  "REQ_GENERATED_CODE",
  "CMD_SHOW_ASSEMBLY",
  "CMD_SHOW_GENERATED_CODE",
]);

const ASSEMBLY: AssemblyResult = {
  kernel: "square_kernel",
  stage: "ptx",
  arch: "sm_90",
  asm: ".version 8.4\n",
  line_map: [{ source_line: 23, asm_lines: [1, 2] }],
  registers: 16,
  spills: 0,
  launcher: "square",
  warnings: [],
};

const GENERATED: GeneratedCodeResult = {
  function: "square_twice",
  language: "triton",
  code: "def call(args):\n    pass\n",
  code_path: "/tmp/square_twice.py",
  kernels: [
    { name: "triton_poi_fused_pow_0", kind: "triton", lines: [17], def_line: 5, call_line: 22 },
    { name: "extern_kernels.mm", kind: "extern", lines: [], call_line: 23 },
  ],
  summary: "",
  eager: { median_ms: 1, kernels: 2 },
  compiled: { median_ms: 0.5, kernels: 1 },
  speedup: 2,
};

describe("protocol", () => {
  it("uses the agreed method names and command ids", () => {
    assert.deepEqual(
      NAMES.map(([, name]) => name),
      [
        "kernelLens/status",
        "kernelLens/setTrusted",
        "kernelLens.profile",
        "kernelLens.profileAll",
        "kernelLens/assembly",
        "kernelLens/generatedCode",
        "kernelLens.showAssembly",
        "kernelLens.showGeneratedCode",
        "kernelLens/inlineExtension",
        "kernelLens.showInlineExtension",
        "kernelLens/report",
        "kernelLens/traceFile",
        "kernelLens/ncuFile",
        "kernelLens/timelineWindow",
        "kernelLens/revealReport",
        "kernelLens/resultsChanged",
        "kernelLens.runNcu",
        "kernelLens.sweep",
        "kernelLens.applyParameter",
        "kernelLens.showReport",
      ],
    );
  });

  for (const [constant, name] of NAMES) {
    const skip =
      python === undefined
        ? "protocol.py does not exist yet"
        : ARRIVING.has(constant) && !pythonConstants.has(constant)
          ? `protocol.py does not define ${constant} yet`
          : false;
    it(`is mirrored by server/kernel_lens/lsp/protocol.py: ${constant}`, { skip }, () => {
      assert.equal(pythonConstants.get(constant), name, `${constant} in protocol.py`);
    });
  }

  it(
    "is mirrored by server/kernel_lens/lsp/protocol.py: REQ_FUNCTIONS",
    { skip: pythonConstants.has("REQ_FUNCTIONS") ? false : "protocol.py has no REQ_FUNCTIONS yet" },
    () => {
      assert.equal(FunctionsRequest.method, "kernelLens/functions");
      assert.equal(pythonConstants.get("REQ_FUNCTIONS"), FunctionsRequest.method);
    },
  );

  it("accepts well-formed status params only", () => {
    assert.equal(isStatusParams({ state: "idle", message: "" }), true);
    assert.equal(
      isStatusParams({ state: "profiling", message: "square", uri: "file:///a.py" }),
      true,
    );
    assert.equal(isStatusParams({ state: "idle", message: "", uri: null }), true);
    assert.equal(isStatusParams({ state: "busy", message: "" }), false);
    assert.equal(isStatusParams({ state: "error" }), false);
    assert.equal(isStatusParams({ state: "error", message: "x", uri: 3 }), false);
    assert.equal(isStatusParams(null), false);
    assert.equal(isStatusParams("idle"), false);
  });

  it("accepts the code lenses' arguments only", () => {
    assert.equal(isShowAssemblyArgs({ uri: "file:///a.py", kernel: "k" }), true);
    assert.equal(isShowAssemblyArgs({ uri: "file:///a.py", function: "k" }), false);
    assert.equal(isShowGeneratedCodeArgs({ uri: "file:///a.py", function: "f" }), true);
    assert.equal(isShowGeneratedCodeArgs({ uri: "file:///a.py" }), false);
    // The editor's menus pass the resource's vscode.Uri instead.
    assert.equal(isShowGeneratedCodeArgs({ scheme: "file", path: "/a.py" }), false);
    assert.equal(isShowAssemblyArgs(undefined), false);
  });

  it("accepts well-formed kernelLens/assembly results only", () => {
    assert.equal(isAssemblyResult(ASSEMBLY), true);
    assert.equal(isAssemblyResult({ ...ASSEMBLY, registers: null, launcher: null }), true);
    assert.equal(isAssemblyResult({ ...ASSEMBLY, registers: "16" }), false);
    assert.equal(isAssemblyResult({ ...ASSEMBLY, asm: undefined }), false);
    assert.equal(
      isAssemblyResult({ ...ASSEMBLY, line_map: [{ source_line: 1, asm_lines: ["2"] }] }),
      false,
    );
    assert.equal(
      isAssemblyResult({ ...ASSEMBLY, line_map: [{ source_line: 1.5, asm_lines: [] }] }),
      false,
    );
    assert.equal(isAssemblyResult({ ...ASSEMBLY, warnings: [1] }), false);
    assert.equal(isAssemblyResult([]), false);
  });

  it("accepts well-formed kernelLens/generatedCode results only", () => {
    assert.equal(isGeneratedCodeResult(GENERATED), true);
    assert.equal(isGeneratedCodeResult({ ...GENERATED, speedup: null, language: "cpp" }), true);
    const externWithNull = { name: "mm", kind: "extern", lines: [3], def_line: null, call_line: 4 };
    assert.equal(isGeneratedCodeResult({ ...GENERATED, kernels: [externWithNull] }), true);
    assert.equal(isGeneratedCodeResult({ ...GENERATED, language: "cuda" }), false);
    assert.equal(isGeneratedCodeResult({ ...GENERATED, eager: { median_ms: 1, ops: 2 } }), false);
    assert.equal(
      isGeneratedCodeResult({ ...GENERATED, kernels: [{ ...externWithNull, kind: "cuda" }] }),
      false,
    );
    assert.equal(
      isGeneratedCodeResult({ ...GENERATED, kernels: [{ ...externWithNull, call_line: null }] }),
      false,
    );
    assert.equal(isGeneratedCodeResult(null), false);
  });
});
