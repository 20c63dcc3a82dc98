/**
 * How the function's time was made (issue 25), for the Report's Summary: the policy of the
 * eager median (L2 cold or warm, eager, CPU launch overhead included, reps, stable), the time
 * in a CUDA graph of a launch-bound function (or why it could not be captured), and the GPU's
 * clocks read through NVML before and after. Pure: unit-tested without a webview.
 */
import type { GpuReading, ProfileTiming } from "../../generated/wire";
import { formatUs } from "./format";

/** `1.12 µs in a CUDA graph · kernels 0.83 µs`, `not capturable in a CUDA graph: …`, or null. */
export function graphText(timing: ProfileTiming | null): string | null {
  const graph = timing?.graph;
  if (graph === undefined || graph.calls === undefined) {
    return null;
  }
  const parts: string[] = [];
  if (typeof graph.median_ms === "number") {
    parts.push(`${formatUs(graph.median_ms * 1000)} in a CUDA graph`);
  } else if (graph.reason !== undefined) {
    parts.push(`not capturable in a CUDA graph: ${graph.reason}`);
  } else {
    return null;
  }
  if (typeof graph.kernels_us === "number" && graph.kernels_us > 0) {
    parts.push(`kernels ${formatUs(graph.kernels_us)}`);
  }
  return parts.join(" · ");
}

function reading(
  before: GpuReading | null,
  after: GpuReading | null,
  key: "sm_mhz" | "mem_mhz" | "temperature_c",
): string | null {
  const a = before?.[key] ?? null;
  const b = after?.[key] ?? null;
  if (a === null && b === null) {
    return null;
  }
  return a !== null && b !== null && a !== b ? `${a} → ${b}` : String(b ?? a);
}

/** `SM 1980 MHz · memory 3201 MHz · 34 → 35 °C`, or null without readings. */
export function clocksText(timing: ProfileTiming | null): string | null {
  const clocks = timing?.clocks;
  if (clocks === undefined) {
    return null;
  }
  const parts: string[] = [];
  const sm = reading(clocks.before, clocks.after, "sm_mhz");
  const mem = reading(clocks.before, clocks.after, "mem_mhz");
  const temp = reading(clocks.before, clocks.after, "temperature_c");
  if (sm !== null) parts.push(`SM ${sm} MHz`);
  if (mem !== null) parts.push(`memory ${mem} MHz`);
  if (temp !== null) parts.push(`${temp} °C`);
  return parts.length === 0 ? null : parts.join(" · ");
}

/** A clock or throttling warning of NVML's readings (said with the clocks). */
const CLOCK_WARNING = /^(SM clock dropped|memory clock dropped|GPU throttled)/;

/**
 * The timing's other warnings (launch overhead under 10 µs, interference, noise), as the
 * hover's `⚠ Timing:` says them: `⚠ under 10 µs: …`. The clock ones are in
 * {@link timingPolicyLines}; an older result's single `warning` is said too.
 */
export function otherTimingWarnings(timing: ProfileTiming | null): string[] {
  if (timing === null) {
    return [];
  }
  const warnings =
    timing.warnings !== undefined
      ? timing.warnings
      : typeof timing.warning === "string" && timing.warning !== ""
        ? [timing.warning]
        : [];
  return warnings.filter((w) => !CLOCK_WARNING.test(w)).map((w) => `⚠ ${w}`);
}

/**
 * ` · stable` / ` · calls vary (σ 3.1%)` after the median, or "" where the policy does not say.
 * It is said of the calls, not the median: a noisy function's median can still be known to
 * ±1% (the `Timed:` line's `median converged (95% CI ±0.9%)`), and "not stable" next to
 * "converged" read as a contradiction.
 */
export function stabilityText(timing: ProfileTiming): string {
  const stable = timing.policy?.stable;
  if (stable === undefined) {
    return "";
  }
  const sigma = timing.policy?.rel_stdev_pct;
  const detail = typeof sigma === "number" ? ` (σ ${sigma.toFixed(1)}%)` : "";
  return stable ? " · stable" : ` · calls vary${detail}`;
}

/**
 * The lines the Summary shows under the timing: `Timed: eager · L2 cold · …`, the graph's
 * time with its own policy, the GPU's clocks (or why none were read), and any clock or
 * throttling warning. Empty for a result without a policy (an older run).
 */
export function timingPolicyLines(timing: ProfileTiming | null): string[] {
  const policy = timing?.policy;
  if (timing === null || policy === undefined) {
    return [];
  }
  const out = [`Timed: ${policy.text}`];
  const graph = graphText(timing);
  if (graph !== null) {
    const why = timing.graph?.why;
    out.push(`Launch-bound${why ? ` (${why})` : ""}: ${graph}`);
    const graphPolicy = timing.graph?.policy?.text;
    if (graphPolicy !== undefined) {
      out.push(`Graph: ${graphPolicy}`);
    }
  }
  const clocks = clocksText(timing);
  if (clocks !== null) {
    out.push(`GPU: ${clocks}`);
  } else if (policy.nvml !== undefined) {
    out.push(policy.nvml);
  }
  for (const warning of timing.warnings ?? []) {
    if (CLOCK_WARNING.test(warning)) {
      out.push(`⚠ ${warning}`);
    }
  }
  return out;
}
