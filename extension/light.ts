/**
 * *Profile Script (Light)* on the extension side (issue 36): what the user is told once the
 * server answers `kernelLens.profileLight`. The server keeps the result (lenses, hovers) or the
 * failure (the first line's lens, with *Profile Script* beside it); this says the failure where
 * the user looks, and on a machine without a CUDA GPU offers the deep profile instead.
 *
 * Pure (no `vscode` import): tests/ts/light.test.ts.
 */
import { is } from "./guards";
import { checkProfileCommandResult, type ProfileCommandResult } from "./generated/wire";

/** The button that runs *Profile Script* (the deep profile) instead. */
export const PROFILE_SCRIPT_INSTEAD = "Profile Script Instead";

const isResult = is(checkProfileCommandResult);

/** What to tell the user after a light run: a message, and whether to offer Profile Script. */
export interface LightOutcome {
  severity: "info" | "warning";
  message: string;
  /** The offer of {@link PROFILE_SCRIPT_INSTEAD}: no CUDA GPU here, the deep profile runs. */
  offerDeep: boolean;
}

/** Whether a light run's error says the machine has no CUDA GPU (the agent's `unsupported`). */
export function noCudaGpu(result: ProfileCommandResult): boolean {
  const error = result.error;
  return error?.kind === "unsupported" && /no CUDA GPU/.test(error.message);
}

/**
 * The notification after `kernelLens.profileLight` answered `result`, for the script `name`;
 * undefined when there is nothing to say (a success: the lenses show it; a cancel; an
 * untrusted workspace or an unreadable file, which the server has said already).
 */
export function lightOutcome(result: unknown, name: string): LightOutcome | undefined {
  if (!isResult(result) || result.ok) {
    return undefined;
  }
  const error = result.error;
  if (error === undefined || ["cancelled", "untrusted", "not-found"].includes(error.kind)) {
    return undefined;
  }
  if (noCudaGpu(result)) {
    return {
      severity: "info",
      message:
        `The light profile of ${name} needs a CUDA GPU (Triton's Proton records CUDA kernels), ` +
        "and this machine has none. Profile Script (the deep profile) runs on the CPU too.",
      offerDeep: true,
    };
  }
  const first = error.message.split("\n")[0] ?? "";
  return {
    severity: "warning",
    message: `The light profile of ${name} failed (${error.kind}): ${first}`,
    // Another CUPTI client (or no Proton) would starve the deep profile too: nothing to offer.
    offerDeep: false,
  };
}
