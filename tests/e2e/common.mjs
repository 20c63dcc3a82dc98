/**
 * What the editor end-to-end scenarios share (each scenario is a file of tests/e2e/scenarios/,
 * listed in run order by its index.mjs): the machine's CUDA and nvcc, the shapes of a summary
 * lens and a result, the usual time limits, `profileFresh`; and for the runners (run.mjs,
 * restricted.mjs) the log copying and the pass/FAIL lines.
 */
import { existsSync } from "node:fs";
import { copyFile, readdir } from "node:fs/promises";
import path from "node:path";

/** Whether nvcc can be found the way the server looks for it. */
/** Whether this machine has an NVIDIA GPU (its device nodes), where launches run for real. */
export const HAS_CUDA = existsSync("/dev/nvidiactl") || existsSync("/dev/nvidia0");

export function hasNvcc() {
  const home = process.env.CUDA_HOME ?? process.env.CUDA_PATH;
  if (home) return existsSync(`${home}/bin/nvcc`);
  const dirs = (process.env.PATH ?? "").split(":");
  return dirs.some((d) => d && existsSync(`${d}/nvcc`)) || existsSync("/usr/local/cuda/bin/nvcc");
}

/** What the summary lens of a CPU run looks like: `0.131 ms ±0.6% · 3 ops · CPU` (or `4.80 µs ±…`). */
// The final summary: a lens still timing ("… · CPU · timing…") is not it (the streamed lens
// already matches the rest, and its Re-profile is not there yet).
export const SUMMARY = /^(?!.*timing…).*\d (ms|µs) ±[\d.]+%.*CPU/;
/** A result of any kind (summary, per-line op, failure) rather than a Profile/trust link. */
export const ANY_RESULT = /(ms|µs) ±|aten::|Profile failed|Profile cancelled/;
/** A row of lenses (links joined by " | ") with a plain `Profile` link among them. */
export const PROFILE_LINK = /(?:^|\|\s*)Profile(?:\s*\||$)/;
/** The first profile starts the server's agent and imports torch. */
export const FIRST_PROFILE_MS = 120_000;
export const PROFILE_MS = 90_000;

export const THREE_WAYS = "def square_three_ways(x):";
export const SQUARE_POW = "def square_pow(x):";

export function assert(condition, message) {
  if (!condition) throw new Error(message);
}

/**
 * Profiles the function whose def line is `lineText` again and waits for a new result: the row
 * must change from what it showed before the click (a result restored from the history, or an
 * earlier run) and read as a summary. A warm profile can be over before a poll sees
 * "Profiling…", so that is not waited for.
 */
export async function profileFresh(r, lineText, timeoutMs) {
  const before = (await r.lensesAbove(lineText))?.text ?? "";
  await r.clickLensAbove(lineText, /^(Re-profile( longer)?|Profile)$/);
  await r.parkMouse();
  return r.until(
    `a new result above "${lineText}"`,
    async () => {
      const row = await r.lensesAbove(lineText);
      const says = row !== null && (SUMMARY.test(row.text) || SUMMARY.test(row.hover));
      return says && row.text !== before ? row : null;
    },
    timeoutMs,
  );
}

/** Files under `dir` (recursively) whose path passes `keep`. */
export async function findFiles(dir, keep) {
  const found = [];
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true, recursive: true });
  } catch {
    return found;
  }
  for (const entry of entries) {
    const full = path.join(entry.parentPath ?? entry.path, entry.name);
    if (entry.isFile() && keep(full)) found.push(full);
  }
  return found;
}

/** Copies the Kernel Lens output channel's logs of a code-server data folder next to the screenshots. */
export async function keepKernelLensLogs(work, outDir) {
  const logs = await findFiles(path.join(work, "data", "logs"), (f) => /Kernel Lens/.test(f));
  for (const [i, file] of logs.entries()) {
    await copyFile(file, path.join(outDir, `kernel-lens-output-${i + 1}.log`)).catch(() => {});
  }
}

/** Prints a pass/FAIL line per scenario result (`{name, ok, step, error, seconds}`). */
export function printResults(results) {
  for (const r of results) {
    const time = r.seconds === undefined ? "" : ` (${r.seconds.toFixed(0)} s)`;
    console.log(`[e2e] ${r.ok ? "pass" : "FAIL"}  ${r.name}${time}`);
    if (!r.ok) console.log(`[e2e]         at "${r.step}": ${r.error}`);
  }
}
