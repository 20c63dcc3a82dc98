import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AssemblyResult, GeneratedCodeResult } from "../../extension/generated/wire";
import {
  SCHEME,
  assemblyInfo,
  registersLine,
  formatMs,
  generatedCodeInfo,
  languageFor,
  parseViewQuery,
  placeholderText,
  viewUri,
  type View,
} from "../../extension/views/virtualDocs";

const SOURCE = "file:///work/kernels/triton%20square.py";

const ASSEMBLY: AssemblyResult = {
  kernel: "square_kernel",
  stage: "ptx",
  arch: "sm_90",
  asm: ".version 8.4\n",
  line_map: [{ source_line: 23, asm_lines: [1] }],
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
  code: "",
  code_path: "/tmp/kernel-lens/square_twice-ab12.py",
  kernels: [
    { name: "triton_poi_fused_pow_0", kind: "triton", lines: [17], def_line: 5, call_line: 22 },
  ],
  provenance: true,
  summary: "2 → 1 kernels per call, 1.234 → 0.617 ms",
  eager: { median_ms: 1.234, spread_pct: 1, kernels: 2 },
  compiled: { median_ms: 0.617, spread_pct: 1, kernels: 1 },
  speedup: 2,
};

describe("viewUri", () => {
  it("names an assembly view by source file, kernel and stage", () => {
    const view: View = { kind: "assembly", source: SOURCE, kernel: "square_kernel", stage: "ptx" };
    const uri = viewUri(view);
    assert.equal(uri.scheme, SCHEME);
    assert.equal(uri.path, "/triton square.py/square_kernel.ptx");
    assert.deepEqual(parseViewQuery(uri.query), view);
  });

  it("names generated code <function>.compiled.py, so it opens as Python", () => {
    const view: View = { kind: "generatedCode", source: SOURCE, function: "Model.forward" };
    const uri = viewUri(view);
    assert.equal(uri.path, "/triton square.py/Model.forward.compiled.py");
    assert.deepEqual(parseViewQuery(uri.query), view);
  });

  it("gives each (source, view) pair its own URI", () => {
    const a = viewUri({ kind: "assembly", source: SOURCE, kernel: "k", stage: "ptx" });
    const b = viewUri({
      kind: "assembly",
      source: "file:///other/triton%20square.py",
      kernel: "k",
      stage: "ptx",
    });
    const c = viewUri({ kind: "assembly", source: SOURCE, kernel: "k", stage: "sass" });
    assert.equal(a.path, b.path);
    assert.notEqual(a.query, b.query);
    assert.notEqual(a.path, c.path);
  });

  it("keeps names with odd characters out of the path's structure, but exact in the query", () => {
    const view: View = {
      kind: "assembly",
      source: "file:///a/b.py?x#y",
      kernel: "a/b?c#d&e=f",
      stage: "ttgir",
    };
    const uri = viewUri(view);
    assert.equal(uri.path, "/b.py/a_b_c_d&e=f.ttgir");
    assert.deepEqual(parseViewQuery(uri.query), view);
  });
});

describe("parseViewQuery", () => {
  it("rejects queries that name no view", () => {
    assert.equal(parseViewQuery(""), undefined);
    assert.equal(parseViewQuery("view=assembly&kernel=k&stage=ptx"), undefined);
    assert.equal(parseViewQuery(`view=assembly&source=${SOURCE}&kernel=k&stage=cubin`), undefined);
    assert.equal(parseViewQuery(`view=assembly&source=${SOURCE}&stage=ptx`), undefined);
    assert.equal(parseViewQuery(`view=generatedCode&source=${SOURCE}`), undefined);
    assert.equal(parseViewQuery(`view=other&source=${SOURCE}&function=f`), undefined);
  });
});

describe("languageFor", () => {
  const ptx: View = { kind: "assembly", source: SOURCE, kernel: "k", stage: "ptx" };
  const sass: View = { kind: "assembly", source: SOURCE, kernel: "k", stage: "sass" };
  const code: View = { kind: "generatedCode", source: SOURCE, function: "f" };

  it("makes generated code Python", () => {
    assert.equal(languageFor(code, "python"), undefined);
    assert.equal(languageFor(code, "plaintext"), "python");
  });

  it("keeps the language VS Code detected for IR, except Sass stylesheets for SASS", () => {
    assert.equal(languageFor(ptx, "plaintext"), undefined);
    assert.equal(languageFor(ptx, "ptx"), undefined);
    assert.equal(languageFor(sass, "plaintext"), undefined);
    assert.equal(languageFor(sass, "sass"), "plaintext");
    assert.equal(languageFor(sass, "scss"), "plaintext");
  });
});

describe("placeholderText", () => {
  it("says which command brings a lost view back", () => {
    assert.match(
      placeholderText({ kind: "assembly", source: SOURCE, kernel: "k", stage: "sass" }),
      /the SASS of k: run "Kernel Lens: Show Assembly" again/,
    );
    assert.match(
      placeholderText({ kind: "generatedCode", source: SOURCE, function: "f" }),
      /the generated code of f: run "Kernel Lens: Show Generated Code" again/,
    );
    assert.match(placeholderText(undefined), /this view/);
  });
});

describe("registersLine", () => {
  it("says Nsight Compute's figure when it differs (its floor of 16)", () => {
    assert.equal(registersLine(16), "Registers per thread: 16");
    assert.equal(registersLine(28), "Registers per thread: 28");
    assert.equal(
      registersLine(10),
      "Registers per thread: 10 used (Nsight Compute reports 16: its floor)",
    );
  });
});

describe("assemblyInfo", () => {
  it("shows stage, arch, registers and spills", () => {
    const info = assemblyInfo(ASSEMBLY, "ptx");
    assert.equal(info.text, "$(chip) PTX · sm_90 · 16 registers · no spills");
    assert.equal(info.warning, false);
    assert.match(info.tooltip, /^square_kernel compiled to PTX for sm_90, as square launches it\n/);
    assert.match(info.tooltip, /Registers per thread: 16/);
    assert.match(info.tooltip, /Select a source line/);
  });

  it("warns about spills and the server's warnings, and says when registers are unknown", () => {
    const info = assemblyInfo(
      {
        ...ASSEMBLY,
        registers: null,
        spills: 48,
        launcher: null,
        warnings: ["compiled for sm_90 without a GPU"],
        line_map: [],
      },
      "ttir",
    );
    assert.equal(info.text, "$(chip) TTIR · sm_90 · 48 B spilled");
    assert.equal(info.warning, true);
    assert.match(info.tooltip, /^square_kernel compiled to TTIR for sm_90\n/);
    assert.match(info.tooltip, /Registers per thread: unknown/);
    assert.match(info.tooltip, /Warning: compiled for sm_90 without a GPU/);
    assert.match(info.tooltip, /No line information in this stage\./);
  });

  it("says when the types were read from the source, and why, not from a launch", () => {
    const note =
      "argument types read from the launch at line 26, as the launcher could not run here " +
      "(RuntimeError: 0 active drivers); assumed *fp32 for x_ptr";
    const info = assemblyInfo(
      { ...ASSEMBLY, launcher: "line 26", types_from: "text", types_note: note, warnings: [note] },
      "ptx",
    );
    assert.equal(
      info.text,
      "$(chip) PTX · sm_90 · 16 registers · no spills · types read from the source",
    );
    assert.equal(info.warning, true);
    assert.ok(info.tooltip.startsWith(`square_kernel compiled to PTX for sm_90 (${note})\n`));
    assert.equal(info.tooltip.split(note).length, 2, "the note once, not again as a warning");
    const picked = assemblyInfo({ ...ASSEMBLY, types_from: "user", types_note: "picked" }, "ptx");
    assert.match(picked.text, /· types picked$/);
  });

  it("says whether the assembly is the launch's own kernel or compiled ahead of time", () => {
    const launched = assemblyInfo(
      {
        ...ASSEMBLY,
        registers: 96,
        compiled_from: "launch",
        compiled_note: null,
        num_warps: 4,
        num_stages: 3,
        shared_bytes: 98304,
        autotune: {
          chosen: "BLOCK_M=128, num_warps=4, num_stages=3",
          chosen_kwargs: { BLOCK_M: 128, num_warps: 4, num_stages: 3 },
          configs: [
            { config: "BLOCK_M=128, num_warps=4, num_stages=3", ms: 0.0123, chosen: true },
            { config: "BLOCK_M=64, num_warps=8, num_stages=4", ms: 0.5, chosen: false },
          ],
        },
      },
      "sass",
    );
    assert.equal(
      launched.text,
      "$(chip) SASS · sm_90 · 96 registers · no spills · from the launch",
    );
    assert.match(launched.tooltip, /From the launch: the compiled kernel that ran/);
    assert.match(launched.tooltip, /4 warps · 3 stages · 98304 B shared memory/);
    assert.match(launched.tooltip, /Autotuned: chose BLOCK_M=128, num_warps=4, num_stages=3/);
    assert.match(launched.tooltip, /★ BLOCK_M=128, num_warps=4, num_stages=3: 12\.3 µs/);
    assert.match(launched.tooltip, / {2}BLOCK_M=64, num_warps=8, num_stages=4: 0\.5 ms/);
    const note = "compiled ahead of time for sm_90, not the launch (no GPU)";
    const aot = assemblyInfo(
      { ...ASSEMBLY, compiled_from: "ahead_of_time", compiled_note: note },
      "ptx",
    );
    assert.match(aot.text, /· ahead of time$/);
    assert.ok(aot.tooltip.includes(note));
  });

  it("says 1 register, not 1 registers", () => {
    assert.match(assemblyInfo({ ...ASSEMBLY, registers: 1 }, "sass").text, /· 1 register ·/);
  });
});

describe("generatedCodeInfo", () => {
  it("shows eager against compiled time and the speed-up", () => {
    const info = generatedCodeInfo(GENERATED);
    assert.equal(info.text, "$(zap) square_twice: 1.23 ms eager → 0.617 ms compiled (2×)");
    assert.match(info.tooltip, /^2 → 1 kernels per call, 1\.234 → 0\.617 ms\n/);
    assert.match(info.tooltip, /Eager: 1\.23 ms median, 2 kernels per call/);
    assert.match(info.tooltip, /triton_poi_fused_pow_0 \(triton\): lines 17/);
    assert.match(info.tooltip, /Saved as \/tmp\/kernel-lens\/square_twice-ab12\.py/);
  });

  it("says CPU for C++ code, and leaves out an unknown speed-up", () => {
    const info = generatedCodeInfo({
      ...GENERATED,
      language: "cpp",
      speedup: null,
      eager: { median_ms: 0.05, spread_pct: 1, kernels: 3 },
      compiled: { median_ms: 0.0123, spread_pct: 1, kernels: 1 },
    });
    assert.equal(info.text, "$(zap) square_twice: 50 µs eager → 12.3 µs compiled (CPU)");
    assert.match(info.tooltip, /Compiled: 12\.3 µs median, 1 kernel per call/);
  });
});

describe("formatMs", () => {
  it("uses µs below 0.1 ms and three significant digits", () => {
    assert.equal(formatMs(0.0001234), "0.123 µs");
    assert.equal(formatMs(0.1), "0.1 ms");
    assert.equal(formatMs(12.345), "12.3 ms");
    assert.equal(formatMs(99.94), "99.9 ms");
    assert.equal(formatMs(1234.4), "1234 ms");
    assert.equal(formatMs(Number.NaN), "–");
  });
});
