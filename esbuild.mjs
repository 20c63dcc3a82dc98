// Bundles the extension into dist/extension.js (CommonJS, `vscode` external), or, with
// --tests, each tests/ts/*.test.ts into out/tests/ for `node --test`.
//
// The test bundles deliberately do NOT mark `vscode` external: a unit-tested module that
// imports vscode fails the build here instead of failing at run time.
//
// Usage: node esbuild.mjs [--tests] [--watch] [--sourcemap]
import * as esbuild from "esbuild";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";

const args = new Set(process.argv.slice(2));
const tests = args.has("--tests");
const watch = args.has("--watch");

const common = {
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  logLevel: "warning",
  sourcemap: args.has("--sourcemap") || tests ? "linked" : false,
};

/** @type {import("esbuild").BuildOptions} */
const options = tests
  ? {
      ...common,
      entryPoints: readdirSync("tests/ts")
        .filter((name) => name.endsWith(".test.ts"))
        .map((name) => join("tests/ts", name)),
      outdir: "out/tests",
    }
  : {
      ...common,
      entryPoints: ["extension/extension.ts"],
      outfile: "dist/extension.js",
      external: ["vscode"],
    };

if (tests) {
  rmSync("out/tests", { recursive: true, force: true });
}

if (watch) {
  const context = await esbuild.context(options);
  await context.watch();
  console.log("esbuild: watching for changes");
} else {
  const result = await esbuild.build(options);
  if (result.errors.length > 0) {
    process.exit(1);
  }
}
