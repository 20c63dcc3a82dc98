// Bundles the extension into dist/extension.js (CommonJS, `vscode` external) and the report
// webview into dist/webview/report.js + report.css (a browser script with Chart.js inside: the
// webview loads nothing from anywhere else), or, with --tests, each tests/ts/*.test.ts into
// out/tests/ for `node --test`.
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

/** @type {import("esbuild").BuildOptions} */
const webview = {
  bundle: true,
  platform: "browser",
  target: "es2022",
  format: "iife",
  logLevel: "warning",
  minify: true,
  sourcemap: args.has("--sourcemap") ? "linked" : false,
  entryPoints: [
    { in: "extension/report/webview/main.ts", out: "report" },
    { in: "extension/report/webview/report.css", out: "report" },
  ],
  outdir: "dist/webview",
};

if (tests) {
  rmSync("out/tests", { recursive: true, force: true });
}

const builds = tests ? [options] : [options, webview];
if (watch) {
  for (const build of builds) {
    const context = await esbuild.context(build);
    await context.watch();
  }
  console.log("esbuild: watching for changes");
} else {
  const results = await Promise.all(builds.map((build) => esbuild.build(build)));
  if (results.some((result) => result.errors.length > 0)) {
    process.exit(1);
  }
}
