/**
 * Editor end-to-end run: a private code-server with dist/kernel-lens.vsix on a copy of kernels/,
 * Chromium driven by playwright-core through tests/e2e/scenarios.mjs. Started by
 * `scripts/e2e.sh test` (which sets up .e2e-cache/ and builds the .vsix first).
 *
 * Prints the screenshot folder at start and end, and `N passed, N failed` last. On a failure:
 * the scenario, the step, the error and the folder; code-server is stopped; exit code 1.
 */
import { copyFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import * as codeServer from "./codeserver.mjs";
import { findFiles, SCENARIOS } from "./scenarios.mjs";
import { CHROMIUM_ARGS, playwright, Run } from "./ui.mjs";

/** The whole run, start-up included (scripts/e2e.sh adds a hard limit above this). */
const RUN_LIMIT_MS = 10 * 60_000;
/**
 * Screenshots that docs/tour.md shows: with KERNEL_LENS_E2E_TOUR=1 those a run took are copied
 * to docs/img/ under these names (taken after their step's assertions passed).
 */
const TOUR = {
  "untrusted-lenses": "tour-1-restricted-mode.png",
  profiling: "tour-2-profiling.png",
  "profiled-square-three-ways": "tour-3-results.png",
  "hover-aten-pow": "tour-4-hover.png",
  "hover-profile-link": "tour-5-hover-profile-link.png",
  "syntax-error-problems": "tour-6-syntax-error.png",
  "cancellable-progress": "tour-7-cancel.png",
  "profile-cancelled": "tour-8-cancelled.png",
  "output-channel": "tour-9-output.png",
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
let passed = 0;
let failed = 0;
let current = "start-up";
// KERNEL_LENS_E2E_SCENARIOS=1,2,5 runs a subset (by number), e.g. while one is being fixed.
const only = (process.env.KERNEL_LENS_E2E_SCENARIOS ?? "").split(",").filter(Boolean);
const selected = SCENARIOS.filter((s) => only.length === 0 || only.includes(s.name.split(".")[0]));

async function cleanUp() {
  await browser?.close().catch(() => {});
  await server?.stop();
  server = null;
}

let finishing = false;

async function finish(error) {
  if (finishing) return;
  finishing = true;
  if (error) {
    failed += 1;
    console.error("");
    console.error(`[e2e] FAILED  scenario: ${current}`);
    console.error(`[e2e]         step:     ${run?.stepName || "-"}`);
    console.error(`[e2e]         error:    ${error?.message ?? error}`);
    if (run) await run.shot("FAILED").catch(() => {});
  }
  // Keep the extension's log with the screenshots.
  const logs = await findFiles(path.join(work, "data", "logs"), (f) => /Kernel Lens/.test(f));
  for (const [i, file] of logs.entries()) {
    await copyFile(file, path.join(outDir, `kernel-lens-output-${i + 1}.log`)).catch(() => {});
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
  if (!error) await rm(work, { recursive: true, force: true });
  else console.error(`[e2e] workspace and code-server data kept in ${work}`);
  const notRun = selected.length - passed - failed;
  console.log(`[e2e] screenshots and logs: ${outDir}`);
  console.log(`${passed} passed, ${failed} failed${notRun ? `, ${notRun} skipped` : ""}`);
  process.exit(error ? 1 : 0);
}

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
  for (const scenario of selected) {
    current = scenario.name;
    run.scenario = scenario.name;
    run.log(`scenario ${scenario.name}`);
    await scenario.run(run);
    passed += 1;
    run.log(`  ✓ ${scenario.name}`);
  }
  clearTimeout(deadline);
  await finish(null);
} catch (error) {
  clearTimeout(deadline);
  await finish(error);
}
