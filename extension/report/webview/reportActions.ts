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
