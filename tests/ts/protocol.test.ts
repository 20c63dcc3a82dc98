import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AssemblyResult, GeneratedCodeResult } from "../../extension/generated/wire";
import {
  AssemblyRequest,
  ClientCommands,
  FunctionsRequest,
  GeneratedCodeRequest,
  InlineExtensionRequest,
  isAssemblyResult,
  isGeneratedCodeResult,
  isShowAssemblyArgs,
  isShowGeneratedCodeArgs,
  isStatusParams,
  NcuFileRequest,
  ReportRequest,
  ReportServerCommands,
  ResultsChangedNotification,
  RevealReportNotification,
  ServerCommands,
  SetTrustedNotification,
  StatusNotification,
  TimelineWindowRequest,
  TraceFileRequest,
} from "../../extension/protocol";

/** Each method object or command id, and the name it must have on the wire. */
const NAMES: [name: string, wire: string][] = [
  [StatusNotification.method, "kernelLens/status"],
  [SetTrustedNotification.method, "kernelLens/setTrusted"],
  [ServerCommands.profile, "kernelLens.profile"],
  [ServerCommands.profileAll, "kernelLens.profileAll"],
  [AssemblyRequest.method, "kernelLens/assembly"],
  [GeneratedCodeRequest.method, "kernelLens/generatedCode"],
  [ClientCommands.showAssembly, "kernelLens.showAssembly"],
  [ClientCommands.showGeneratedCode, "kernelLens.showGeneratedCode"],
  [InlineExtensionRequest.method, "kernelLens/inlineExtension"],
  [ClientCommands.showInlineExtension, "kernelLens.showInlineExtension"],
  [ReportRequest.method, "kernelLens/report"],
  [TraceFileRequest.method, "kernelLens/traceFile"],
  [NcuFileRequest.method, "kernelLens/ncuFile"],
  [TimelineWindowRequest.method, "kernelLens/timelineWindow"],
  [RevealReportNotification.method, "kernelLens/revealReport"],
  [ResultsChangedNotification.method, "kernelLens/resultsChanged"],
  [ReportServerCommands.runNcu, "kernelLens.runNcu"],
  [ReportServerCommands.sweep, "kernelLens.sweep"],
  [ReportServerCommands.applyParameter, "kernelLens.applyParameter"],
  [ClientCommands.showReport, "kernelLens.showReport"],
  [FunctionsRequest.method, "kernelLens/functions"],
];

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
  signature: { out_ptr: "*fp32", in_ptr: "*fp32", n_elements: "i32", BLOCK_SIZE: "constexpr" },
  constexprs: { BLOCK_SIZE: 1024 },
  types_from: "launch",
  types_note: null,
};

const GENERATED: GeneratedCodeResult = {
  function: "square_twice",
  backend: "inductor",
  language: "triton",
  code: "def call(args):\n    pass\n",
  code_path: "/tmp/square_twice.py",
  kernels: [
    { name: "triton_poi_fused_pow_0", kind: "triton", lines: [17], def_line: 5, call_line: 22 },
    { name: "extern_kernels.mm", kind: "extern", lines: [], call_line: 23 },
  ],
  provenance: true,
  summary: "",
  eager: { median_ms: 1, spread_pct: 1.5, kernels: 2 },
  compiled: { median_ms: 0.5, spread_pct: 2, kernels: 1 },
  speedup: 2,
};

describe("protocol", () => {
  // The names are generated from server/kernel_lens/wire/lsp.py: a rename there is a change of
  // the protocol the editor and the server speak, which this test makes visible.
  it("uses the agreed method names and command ids", () => {
    assert.deepEqual(
      NAMES.map(([name]) => name),
      NAMES.map(([, wire]) => wire),
    );
  });

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
