/**
 * Which of the report's actions can work here, and why not: pure (no DOM), so that it is
 * unit-tested (tests/ts/reportActions.test.ts). An action that cannot work is shown disabled
 * with its reason, never as a click that fails.
 */
import type { ReportResult, SweepResult } from "../../generated/wire";

/** The parameter the form proposes when there is no sweep yet and the function has it. */
export const DEFAULT_PARAM = "BLOCK_SIZE";

/**
 * The parameter the form proposes: the last sweep's, else `BLOCK_SIZE` when the function has
 * it, else its only int parameter; "" (typed by the user) when that says nothing.
 */
export function proposedParam(
  sweep: SweepResult | null,
  intParameters: Record<string, number> | undefined,
): string {
  if (sweep !== null) {
    return sweep.param;
  }
  const names = Object.keys(intParameters ?? {});
  if (names.includes(DEFAULT_PARAM)) {
    return DEFAULT_PARAM;
  }
  return names.length === 1 ? (names[0] ?? "") : "";
}

/** Whether a sweep's times were taken under Triton's interpreter (meaningless for a GPU). */
export function isInterpreterSweep(sweep: SweepResult): boolean {
  const note = (sweep as { note?: unknown }).note;
  return /Triton interpreter/.test(sweep.device) || (typeof note === "string" && note !== "");
}

/** Why Nsight Compute cannot run for this report's function, or undefined when it may. */
export function ncuUnavailable(report: ReportResult): string | undefined {
  if (report.profile !== null && report.profile.device_kind === "cpu") {
    return "Needs an NVIDIA GPU: the last profile of this function ran on the CPU.";
  }
  return undefined;
}

/** `trace not saved: <why>` when Kernel Lens could not write the last profile's trace (a full
 * disk, a cache path that is a file…; issue 26), else null. */
export function traceNotSaved(report: Pick<ReportResult, "profile">): string | null {
  const error = report.profile?.trace_error;
  if (typeof error !== "string" || error.trim() === "") {
    return null;
  }
  return /^trace not saved\b/.test(error) ? error : `trace not saved: ${error}`;
}

/** What the Timeline tab says where the timeline would be, when there is none to show. */
export function noTimelineText(report: Pick<ReportResult, "profile">): string {
  const error = traceNotSaved(report);
  return error === null
    ? "The last profile has no trace to show (its trace file is gone, or the trace stage did not run)."
    : `${error}. The profile's numbers stand (Summary); only its timeline could not be kept.`;
}
