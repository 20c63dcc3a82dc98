/**
 * "Show load_inline Build" without VS Code: the protocol's guards against recorded answers of the
 * server (tests/data/cpu), the module and file helpers of `inline.ts`, and the load_inline views
 * of `virtualDocs.ts`.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import {
  findModule,
  inlineFileText,
  inlineFileTitle,
  inlineFiles,
  keepBuild,
  moduleDescription,
  nearestModule,
  problemCounts,
  problemsMessage,
} from "../../extension/views/inline";
import { assemblyLink } from "../../extension/views/lineMap";
import type { InlineModule, InlineResult } from "../../extension/generated/wire";
import { isInlineResult, isShowInlineExtensionArgs } from "../../extension/protocol";
import {
  SCHEME,
  inlineInfo,
  languageFor,
  parseViewQuery,
  placeholderText,
  viewUri,
  type InlineView,
} from "../../extension/views/virtualDocs";

const ROOT = path.resolve(__dirname, "..", "..");

function recorded(name: string): InlineResult {
  const value: unknown = JSON.parse(
    readFileSync(path.join(ROOT, "tests", "data", "cpu", name), "utf8"),
  );
  assert.ok(isInlineResult(value), `${name} is not an InlineResult`);
  return value;
}

/** `kernels/inline_square.py`: PTX for sm_90, no errors. */
const SQUARE = recorded("inline_square_inline.json");
/** The same with `out[i] = v * w;` on line 20: no PTX, one nvcc error. */
const BROKEN = recorded("inline_broken_inline.json");

function only(result: InlineResult): InlineModule {
  const module = result.modules[0];
  assert.ok(module !== undefined && result.modules.length === 1);
  return module;
}

const square = only(SQUARE);
const broken = only(BROKEN);

function module(name: string, callLine: number, extra: Partial<InlineModule> = {}): InlineModule {
  return { ...square, name, call_line: callLine, ...extra };
}

const SOURCE = "file:///work/kernels/inline_square.py";

describe("kernelLens/inlineExtension results", () => {
  it("accept the server's recorded answers", () => {
    assert.equal(square.name, "kernel_lens_inline_square");
    assert.equal(square.call_line, 51);
    assert.equal(square.arch, "sm_90");
    assert.equal(square.errors.length, 0);
    assert.ok(square.ptx?.includes(".target sm_90"));
    assert.equal(broken.ptx, null);
    assert.deepEqual(broken.errors, [
      { severity: "error", message: 'identifier "w" is undefined', cuda_line: 11, line: 20 },
    ]);
  });

  it("link the .py lines of the CUDA source with the PTX lines", () => {
    const link = assemblyLink(square.line_map);
    // Line 20 is `out[i] = v * v;`: its PTX multiplies and stores.
    const ptxLines = (square.ptx ?? "").split("\n");
    const line20 = link.viewLines([20]).map((n) => ptxLines[n - 1] ?? "");
    assert.ok(
      line20.some((text) => /\bmul\.f32\b/.test(text)),
      line20.join("\n"),
    );
    assert.ok(
      line20.some((text) => /\bst\.global\.f32\b/.test(text)),
      line20.join("\n"),
    );
    assert.deepEqual(link.sourceLines(link.viewLines([20])), [20]);
    // The Python around the string maps to nothing.
    assert.deepEqual(link.viewLines([51]), []);
  });

  it("reject answers of another shape", () => {
    assert.equal(isInlineResult({ path: "/a.py", modules: [] }), true);
    assert.equal(isInlineResult({ path: "/a.py" }), false);
    assert.equal(isInlineResult({ ...SQUARE, modules: [{ ...square, call_line: "51" }] }), false);
    assert.equal(isInlineResult({ ...SQUARE, modules: [{ ...square, ptx: 3 }] }), false);
    const noCudaFile = { ...square, files: { "main.cpp": "" } };
    assert.equal(isInlineResult({ ...SQUARE, modules: [noCudaFile] }), false);
    const built = { ...square, files: { ...square.files, "build.ninja": "rule cxx\n" } };
    assert.equal(isInlineResult({ ...SQUARE, modules: [built] }), true);
    const badError = { ...broken, errors: [{ severity: "error", message: "x", line: 2 }] };
    assert.equal(isInlineResult({ ...BROKEN, modules: [badError] }), false);
    const noSeconds: Partial<InlineModule> = { ...square };
    delete noSeconds.ptx_seconds;
    assert.equal(isInlineResult({ ...SQUARE, modules: [noSeconds] }), true);
    assert.equal(isInlineResult(null), false);
  });

  it("accept the code lens's argument, with or without its line", () => {
    assert.equal(isShowInlineExtensionArgs({ uri: SOURCE }), true);
    assert.equal(isShowInlineExtensionArgs({ uri: SOURCE, line: 51 }), true);
    assert.equal(isShowInlineExtensionArgs({ uri: SOURCE, line: "51" }), false);
    assert.equal(isShowInlineExtensionArgs({ scheme: "file", path: "/a.py" }), false);
    assert.equal(isShowInlineExtensionArgs(undefined), false);
  });
});

describe("inline.ts", () => {
  it("lists the files a module has, PTX first", () => {
    assert.deepEqual(inlineFiles(square), ["ptx", "cuda.cu", "main.cpp"]);
    assert.deepEqual(inlineFiles(broken), ["cuda.cu", "main.cpp"]);
    const built = module("m", 3, {
      files: { ...square.files, "build.ninja": "ninja_required_version = 1.3\n" },
      build_log: "[1/3] c++ …\n",
      build_directory: "/root/.cache/torch_extensions/m",
    });
    assert.deepEqual(inlineFiles(built), [
      "ptx",
      "cuda.cu",
      "main.cpp",
      "build.ninja",
      "build.log",
    ]);
    assert.equal(inlineFileText(built, "build.log"), "[1/3] c++ …\n");
    const cppOnly = module("cpp_only", 3, {
      files: { "main.cpp": "x", "cuda.cu": null },
      ptx: null,
    });
    assert.deepEqual(inlineFiles(cppOnly), ["main.cpp"]);
    assert.equal(inlineFileText(square, "main.cpp"), square.files["main.cpp"]);
    assert.equal(inlineFileTitle("m", "ptx"), "m.ptx");
    assert.equal(inlineFileTitle("m", "build.log"), "build log");
    assert.equal(inlineFileTitle("m", "cuda.cu"), "cuda.cu");
  });

  it("finds the module a command means: the lens's line, the view's name, the only one", () => {
    const a = module("a", 10);
    const b = module("b", 30);
    assert.equal(findModule([a, b], { line: 30 }), b);
    assert.equal(findModule([a, b], { line: 31, name: "a" }), a);
    assert.equal(findModule([a, b], {}), undefined);
    assert.equal(findModule([a, b], { line: 31 }), undefined);
    assert.equal(findModule([a], { line: 31 }), a);
    assert.equal(findModule([], {}), undefined);
  });

  it("preselects the call at or above the cursor, else the first", () => {
    const a = module("a", 10);
    const b = module("b", 30);
    assert.equal(nearestModule([b, a], 35), b);
    assert.equal(nearestModule([b, a], 30), b);
    assert.equal(nearestModule([b, a], 29), a);
    assert.equal(nearestModule([b, a], 2), a);
    assert.equal(nearestModule([b, a], undefined), a);
    assert.equal(nearestModule([], 3), undefined);
  });

  it("counts nvcc's problems and words the message", () => {
    assert.deepEqual(problemCounts(broken), { errors: 1, warnings: 0 });
    assert.equal(problemsMessage(broken), "nvcc: 1 error — see Problems");
    const error = broken.errors[0];
    assert.ok(error !== undefined);
    const two = module("m", 3, { errors: [error, { ...error, severity: "warning" }, error] });
    assert.equal(problemsMessage(two), "nvcc: 2 errors — see Problems");
    const warned = module("m", 3, { errors: [{ ...error, severity: "warning" }] });
    assert.equal(problemsMessage(warned), "nvcc: 1 warning — see Problems");
    assert.equal(moduleDescription(square), "line 51 · PTX for sm_90");
    assert.equal(moduleDescription(broken), "line 51 · 1 nvcc error");
    assert.equal(moduleDescription(two), "line 3 · PTX for sm_90 · 2 nvcc errors · 1 warning");
    const cppOnly = module("c", 7, { files: { "main.cpp": "x", "cuda.cu": null }, ptx: null });
    assert.equal(moduleDescription(cppOnly), "line 7 · no cuda_sources");
  });

  it("keeps the last build's log and build.ninja through a compile of the same text", () => {
    const built = module("m", 3, {
      files: { ...square.files, "build.ninja": "rule cuda_compile\n" },
      build_log: "log",
      build_directory: "/b/m",
    });
    const other = module("other", 9);
    const [m, o] = keepBuild([built, other], [module("m", 3), other]);
    assert.equal(m?.build_log, "log");
    assert.equal(m?.build_directory, "/b/m");
    assert.equal(m?.files["build.ninja"], "rule cuda_compile\n");
    assert.equal(o, other);
    // A fresh build wins over the kept one.
    const rebuilt = module("m", 3, { build_log: "new", build_directory: "/b/m" });
    assert.equal(keepBuild([built], [rebuilt])[0], rebuilt);
  });
});

describe("load_inline views", () => {
  const ptx: InlineView = { kind: "inline", source: SOURCE, module: "sq", file: "ptx" };
  const cuda: InlineView = { ...ptx, file: "cuda.cu" };

  it("name the PTX <module>.ptx and the sources by their own names, under load_inline/", () => {
    assert.equal(viewUri(ptx).scheme, SCHEME);
    assert.equal(viewUri(ptx).path, "/inline_square.py/load_inline/sq.ptx");
    assert.equal(viewUri(cuda).path, "/inline_square.py/load_inline/sq/cuda.cu");
    assert.equal(
      viewUri({ ...ptx, module: "a/b", file: "build.log" }).path,
      "/inline_square.py/load_inline/a_b/build.log",
    );
    for (const view of [ptx, cuda, { ...ptx, file: "build.ninja" } as InlineView]) {
      assert.deepEqual(parseViewQuery(viewUri(view).query), view);
    }
    assert.equal(parseViewQuery("view=inline&source=x&module=sq&file=a.out"), undefined);
    assert.equal(parseViewQuery("view=inline&source=x&file=ptx"), undefined);
  });

  it("give each module and file its own URI, apart from an assembly view's", () => {
    const uris = new Set(
      [
        viewUri(ptx),
        viewUri(cuda),
        viewUri({ ...ptx, module: "other" }),
        viewUri({ kind: "assembly", source: SOURCE, kernel: "sq", stage: "ptx" }),
      ].map((u) => `${u.path}?${u.query}`),
    );
    assert.equal(uris.size, 4);
  });

  it("match package.json's when clause for load_inline views, and no other view", () => {
    const manifest = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
      contributes: { menus: Record<string, { command: string; when?: string }[]> };
    };
    const when = manifest.contributes.menus["editor/title"]?.find(
      (e) => e.command === "kernelLens.openInlineFile",
    )?.when;
    const regex = /resourcePath =~ \/(.+)\/$/.exec(when ?? "")?.[1];
    assert.ok(regex !== undefined, when);
    const inViews = new RegExp(regex);
    for (const file of ["ptx", "cuda.cu", "main.cpp", "build.ninja", "build.log"] as const) {
      assert.ok(inViews.test(viewUri({ ...ptx, file }).path), file);
    }
    for (const name of ["load_inline", "load_inline.py"]) {
      const source = `file:///w/${name}`;
      assert.ok(
        !inViews.test(viewUri({ kind: "assembly", source, kernel: name, stage: "ptx" }).path),
      );
      assert.ok(!inViews.test(viewUri({ kind: "generatedCode", source, function: name }).path));
    }
  });

  it("open main.cpp as C++, cuda.cu as CUDA C++ where VS Code knows it, the rest as detected", () => {
    const main: InlineView = { ...ptx, file: "main.cpp" };
    assert.equal(languageFor(main, "cpp"), undefined);
    assert.equal(languageFor(main, "plaintext"), "cpp");
    assert.equal(languageFor(cuda, "cuda-cpp", ["cpp", "cuda-cpp"]), undefined);
    assert.equal(languageFor(cuda, "plaintext", ["cpp", "cuda-cpp"]), "cuda-cpp");
    assert.equal(languageFor(cuda, "plaintext", ["cpp"]), "cpp");
    assert.equal(languageFor(ptx, "plaintext"), undefined);
    assert.equal(languageFor({ ...ptx, file: "build.log" }, "log"), undefined);
    assert.equal(languageFor({ ...ptx, file: "build.ninja" }, "plaintext"), undefined);
  });

  it("say how to get a lost view back", () => {
    assert.equal(
      placeholderText(cuda),
      'Kernel Lens no longer has the cuda.cu of load_inline module sq: run "Kernel Lens: Show load_inline Build" again.\n',
    );
  });

  it("show the arch, nvcc's problems and a click to the module's files in the status bar", () => {
    const info = inlineInfo(square, "ptx", "kernelLens.openInlineFile");
    assert.equal(info.text, "$(tools) kernel_lens_inline_square.ptx · sm_90");
    assert.equal(info.warning, false);
    assert.equal(info.command, "kernelLens.openInlineFile");
    assert.match(
      info.tooltip,
      /compiled to PTX for sm_90 by \/usr\/local\/cuda\/bin\/nvcc in 20\.8 s/,
    );
    assert.match(info.tooltip, /Select a source line/);
    const source = inlineInfo(broken, "cuda.cu", "kernelLens.openInlineFile");
    assert.equal(source.text, "$(tools) cuda.cu · kernel_lens_inline_square · 1 nvcc error");
    assert.equal(source.warning, true);
    assert.match(source.tooltip, /nvcc error \(line 20\): identifier "w" is undefined/);
    assert.match(source.tooltip, /Not linked to the source's lines/);
  });
});
