/**
 * Editor end-to-end run: a private code-server with dist/kernel-lens.vsix on a copy of kernels/,
 * Chromium driven by playwright-core through the scenarios of tests/e2e/scenarios/ (one file
 * each, in the order of its index.mjs). Started by
 * `scripts/e2e.sh test` (which sets up .e2e-cache/ and builds the .vsix first).
 *
 * Prints the screenshot folder at start and end, a pass/FAIL line per scenario and
 * `N passed, N failed in S s` last. A failed scenario prints its step and error, saves
 * `NN-FAILED.png`, closes every editor and the run goes on with the next scenario; at the end
 * code-server is stopped, and the exit code is 1 if any scenario failed (the temporary
 * workspace is then kept). Scenarios marked `last` run after the others.
 */
import { copyFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import * as codeServer from "./codeserver.mjs";
import { keepKernelLensLogs, printResults } from "./common.mjs";
import { loadScenarios } from "./scenarios/index.mjs";
import { CHROMIUM_ARGS, playwright, Run } from "./ui.mjs";

/** The whole run, start-up included (scripts/e2e.sh adds a hard limit above this). */
const RUN_LIMIT_MS = 14 * 60_000;
/**
 * Screenshots that docs/tour.md shows: with KERNEL_LENS_E2E_TOUR=1 those a run took are copied
 * to docs/img/ under these names (taken after their step's assertions passed; `ncu-file` before
 * the last one, the GPU's name).
 */
const TOUR = {
  "untrusted-lenses": "tour-1-restricted-mode.png",
  "asm-diff-cuda": "tour-asm-diff.png",
  profiling: "tour-2-profiling.png",
  "profiled-square-three-ways": "tour-3-results.png",
  "hover-aten-pow": "tour-4-hover.png",
  "hover-profile-link": "tour-5-hover-profile-link.png",
  "syntax-error-problems": "tour-6-syntax-error.png",
  "cancellable-progress": "tour-7-cancel.png",
  "profile-cancelled": "tour-8-cancelled.png",
  "output-channel": "tour-9-output.png",
  "assembly-linked-source-to-ptx": "tour-10-assembly.png",
  "assembly-linked-ptx-to-source": "tour-11-assembly-back.png",
  "generated-code": "tour-12-generated-code.png",
  "report-summary": "tour-13-report-summary.png",
  "report-timeline": "tour-14-report-timeline.png",
  "report-sweep": "tour-15-report-sweep.png",
  "ncu-file": "tour-16-ncu-file.png",
  "trace-file": "tour-17-trace-file.png",
  "load-inline-ptx": "tour-18-load-inline.png",
  "history-delta-lens": "tour-history-delta-lens.png",
  "history-tab": "tour-history-tab.png",
  "history-diff": "tour-history-diff.png",
  walkthrough: "tour-walkthrough.png",
  "lenses-nn-module": "tour-lenses-nn-module.png",
  "lenses-numba": "tour-lenses-numba.png",
  "short-row": "tour-short-row.png",
  "more-actions": "tour-more-actions.png",
  "one-line-error": "tour-one-line-error.png",
  "captured-inputs-hover": "tour-inputs-captured-hover.png",
  "report-inputs": "tour-inputs-report.png",
  "profile-script": "tour-profile-script.png",
  "inputs-quick-fix": "tour-inputs-quick-fix.png",
  "after-quick-fix": "tour-inputs-after-fix.png",
  "big-trace-loading": "tour-big-trace-loading.png",
  "big-trace-timeline": "tour-big-trace-timeline.png",
  "notebook-lenses": "tour-notebook-lenses.png",
  "notebook-profiled-function": "tour-notebook-profiled-function.png",
  "notebook-report": "tour-notebook-report.png",
  "notebook-profiled-cell": "tour-notebook-profiled-cell.png",
  "asm-failed-argument-types": "tour-asm-failed-argument-types.png",
  "narrow-report-beside": "tour-narrow-report-beside.png",
};
const VIEWPORT = { width: 1400, height: 900 };

const outDir =
  process.env.KERNEL_LENS_E2E_OUT ?? (await mkdtemp(path.join(os.tmpdir(), "kernel-lens-e2e-")));
await mkdir(outDir, { recursive: true });
console.log(`[e2e] screenshots and logs: ${outDir}`);

const work = await mkdtemp(path.join(os.tmpdir(), "kernel-lens-e2e-work-"));
let server = null;
let browser = null;
let run = null;
let current = "start-up";
/** `{name, ok, step, error, seconds}` per scenario run, in order. */
const results = [];
// KERNEL_LENS_E2E_SCENARIOS=1,2,5 runs a subset (by number), e.g. while one is being fixed.
const only = (process.env.KERNEL_LENS_E2E_SCENARIOS ?? "").split(",").filter(Boolean);
// A scenario may say what the machine must have (`needs: () => reason | null`); without it the
// scenario is skipped with that reason, printed (load_inline needs nvcc, which CI may lack).
const skipped = [];
// Scenarios marked `last` (checks over the whole run) go after the others.
const selected = (await loadScenarios(only))
  .filter((s) => {
    const missing = s.needs?.() ?? null;
    if (missing !== null) skipped.push(`${s.name}: skipped, ${missing}`);
    return missing === null;
  })
  .sort((a, b) => Number(a.last === true) - Number(b.last === true));
for (const line of skipped) console.log(`[e2e] ${line}`);

async function cleanUp() {
  await browser?.close().catch(() => {});
  await server?.stop();
  server = null;
}

let finishing = false;

/** Prints a failure and keeps a screenshot of it. */
async function reportFailure(scenario, error) {
  console.error("");
  console.error(`[e2e] FAILED  scenario: ${scenario}`);
  console.error(`[e2e]         step:     ${run?.stepName || "-"}`);
  console.error(`[e2e]         error:    ${error?.message ?? error}`);
  if (run) await run.shot("FAILED").catch(() => {});
}

/** Ends the run; `fatal`: an error outside the scenarios (start-up, the run's limit, a signal). */
async function finish(fatal) {
  if (finishing) return;
  finishing = true;
  if (fatal) {
    results.push({
      name: current,
      ok: false,
      step: run?.stepName ?? "",
      error: String(fatal?.message ?? fatal),
    });
    await reportFailure(current, fatal);
  }
  // Keep the extension's log with the screenshots.
  await keepKernelLensLogs(work, outDir).catch(() => {});
  if (run) {
    const lines = run.console.map(
      (m) => `[${m.scenario.split(".")[0] || "-"}] ${m.kind}/${m.type} ${m.url} ${m.text}`,
    );
    await writeFile(path.join(outDir, "browser-console.log"), lines.join("\n") + "\n").catch(
      () => {},
    );
  }
  await cleanUp();
  if (process.env.KERNEL_LENS_E2E_TOUR === "1" && run) {
    const img = path.join(codeServer.ROOT, "docs", "img");
    await mkdir(img, { recursive: true });
    for (const [shot, name] of Object.entries(TOUR)) {
      if (run.files[shot]) {
        await copyFile(run.files[shot], path.join(img, name));
        console.log(`[e2e] docs/img/${name} ← ${path.basename(run.files[shot])}`);
      }
    }
  }
  const passed = results.filter((r) => r.ok).length;
  const failed = results.length - passed;
  if (failed === 0) await rm(work, { recursive: true, force: true });
  else console.error(`[e2e] workspace and code-server data kept in ${work}`);
  console.log("");
  printResults(results);
  // scripts/e2e.sh prints this again after the Restricted Mode run, so that a log's tail (CI
  // keeps only the tail) names the main run's failures too.
  const failures = results
    .filter((r) => !r.ok)
    .map((r) => `[e2e] main run FAIL  ${r.name}\n[e2e]         at "${r.step}": ${r.error}\n`)
    .join("");
  await writeFile(path.join(outDir, "main-failures.txt"), failures).catch(() => {});
  const notRun =
    selected.length - results.filter((r) => selected.some((s) => s.name === r.name)).length;
  console.log(`[e2e] screenshots and logs: ${outDir}`);
  console.log(
    `${passed} passed, ${failed} failed${notRun > 0 ? `, ${notRun} not run` : ""} ` +
      `in ${((Date.now() - startedAt) / 1000).toFixed(0)} s`,
  );
  process.exit(failed > 0 || fatal ? 1 : 0);
}

const startedAt = Date.now();
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => void finish(new Error(`interrupted by ${signal}`)));
}
const deadline = setTimeout(
  () => void finish(new Error(`the run passed its limit of ${RUN_LIMIT_MS / 60_000} min`)),
  RUN_LIMIT_MS,
);

try {
  const dirs = await codeServer.prepare(work, { trusted: false });
  console.log(`[e2e] ${codeServer.installExtension(dirs).split("\n").pop()}`);
  server = await codeServer.start(dirs, { logFile: path.join(outDir, "code-server.log") });
  console.log(`[e2e] code-server pid ${server.pid} at ${server.url}`);
  browser = await playwright().chromium.launch({
    executablePath: process.env.KERNEL_LENS_E2E_CHROMIUM ?? "/usr/bin/chromium",
    args: CHROMIUM_ARGS,
    headless: process.env.KERNEL_LENS_E2E_HEADED !== "1",
  });
  const page = await browser.newPage({ viewport: VIEWPORT });
  run = new Run(page, outDir, dirs.workspace);
  run.url = server.url;
  run.dataDir = dirs.dataDir;
  run.results = results;
  for (const scenario of selected) {
    current = scenario.name;
    run.scenario = scenario.name;
    run.stepName = "";
    run.log(`scenario ${scenario.name}`);
    const began = Date.now();
    try {
      await scenario.run(run);
      results.push({ name: scenario.name, ok: true, seconds: (Date.now() - began) / 1000 });
      run.log(`  ✓ ${scenario.name}`);
    } catch (error) {
      results.push({
        name: scenario.name,
        ok: false,
        step: run.stepName,
        error: String(error?.message ?? error),
        seconds: (Date.now() - began) / 1000,
      });
      await reportFailure(scenario.name, error);
      // The next scenarios still run (each says what it needs); a failed one may leave a
      // picker or a dialog open.
      run.epoch += 1;
      run.stepName = "clean-up after the failure";
      await Promise.race([
        run.closeEverything(),
        new Promise((resolve) => setTimeout(resolve, 20_000)),
      ]).catch((e) => run.log(`  clean-up after the failure: ${e?.message ?? e}`));
    }
  }
  current = "end";
  clearTimeout(deadline);
  await finish(null);
} catch (error) {
  clearTimeout(deadline);
  await finish(error);
}
