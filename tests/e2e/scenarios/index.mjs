/**
 * The editor end-to-end scenarios of the main run (tests/e2e/run.mjs), one file each, in the
 * order they run: each builds on the state the one before left (trust granted, square.py
 * profiled); a scenario marked `last` (10, the CSP check over the whole run) runs after all
 * others. A new scenario gets a new number, a file `NNN-what-it-shows.mjs` exporting it as
 * `default`, and its place in this list. The Restricted Mode scenarios (90-94) run on their own
 * code-server from tests/e2e/restricted.mjs.
 */

/** `[number, file]` of each scenario, in run order. */
export const ORDER = [
  [1, "./001-untrusted-workspace-then-trust-and.mjs"],
  [2, "./002-hovers-x-2-names-aten-pow-an-unprofiled.mjs"],
  [3, "./003-a-syntax-error-fails-the-profile-with-a.mjs"],
  [4, "./004-cancel-a-long-profile-from-its-progress.mjs"],
  [5, "./005-the-kernel-lens-output-channel-shows-the.mjs"],
  [6, "./006-show-assembly-square-kernel-s-ptx-beside.mjs"],
  [7, "./007-generated-code-torch-compile-s-output-of.mjs"],
  [8, "./008-report-panel-summary-timeline-a-block.mjs"],
  [9, "./009-recorded-profiler-files-open-in-kernel.mjs"],
  [49, "./049-real-traces-of-other-eras-and-devices-a.mjs"],
  [11, "./011-load-inline-the-ptx-of-the-inline-cuda.mjs"],
  [30, "./030-a-lecture-style-script-no-set-up-inputs.mjs"],
  [10, "./010-no-content-security-policy-violations-in.mjs"],
  [31, "./031-a-new-user-s-view-lenses-only-where-they.mjs"],
  [32, "./032-a-large-trace-file-300k-events-progress.mjs"],
  [140, "./140-show-assembly-of-a-kernel-in-a-workspace.mjs"],
  [111, "./111-the-optimisation-loop-history-tab-after.mjs"],
  [41, "./041-show-assembly-on-a-gpu-only-triton.mjs"],
  [42, "./042-a-gpu-only-step-on-a-cpu-machine-the.mjs"],
  [43, "./043-choose-interpreter-without-the-python.mjs"],
  [46, "./046-a-training-script-that-never-ends-its.mjs"],
  [47, "./047-generated-code-of-a-model-s-forward.mjs"],
  [40, "./040-a-training-step-the-backward-on-the.mjs"],
  [44, "./044-a-layer-of-a-model-file-profiled-from.mjs"],
  [45, "./045-profile-memory-what-each-line-of-a-cpu.mjs"],
  [48, "./048-an-interpreter-without-torch-then-fixed.mjs"],
  [70, "./070-a-model-from-an-installed-package.mjs"],
  [60, "./060-show-values-each-kernel-line-s-values.mjs"],
  [61, "./061-an-unmasked-load-past-the-end-a.mjs"],
  [62, "./062-debug-kernel-debugpy-stops-on-the-kernel.mjs"],
  [160, "./160-kernel-lines-from-a-recorded-report.mjs"],
  [164, "./164-the-blame-from-a-recorded-report-the.mjs"],
  [147, "./147-compare-assembly-from-a-kernel-s-ptx.mjs"],
  [33, "./033-a-jupyter-notebook-profile-on-a-function.mjs"],
  [150, "./150-an-argparse-script-given-its-arguments.mjs"],
  [151, "./151-a-key-value-driver-configurator-py-fails.mjs"],
  [152, "./152-the-driver-and-its-arguments-are-kept.mjs"],
  [153, "./153-a-baseline-is-pinned-only-explicitly-the.mjs"],
  [162, "./162-argument-types-from-a-failed-compile.mjs"],
  [163, "./163-at-1280-800-with-the-explorer-open-and.mjs"],
  [170, "./170-profile-script-light-beside-profile.mjs"],
];

/**
 * The scenarios whose numbers are in `numbers` (all when it is empty), in run order, each
 * checked to be the scenario its number says.
 * @param {string[]} numbers
 * @returns {Promise<import('../ui.mjs').Scenario[]>}
 */
export async function loadScenarios(numbers) {
  const wanted = ORDER.filter(([n]) => numbers.length === 0 || numbers.includes(String(n)));
  return Promise.all(
    wanted.map(async ([n, file]) => {
      const scenario = (await import(file)).default;
      if (!scenario.name.startsWith(`${n}. `)) {
        throw new Error(`${file} holds "${scenario.name}", not scenario ${n}`);
      }
      return scenario;
    }),
  );
}
