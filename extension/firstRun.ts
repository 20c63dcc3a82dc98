/**
 * The first error a new user may meet: the interpreter cannot run Kernel Lens. Says what is
 * missing in words that name it (torch, Kernel Lens itself), not the first import that failed
 * (pandas, pygls), and which actions fit.
 *
 * Pure (no `vscode` import): tests/ts/firstRun.test.ts.
 */
import type { ProbeResult } from "./python";

/** Modules the server itself needs: their absence means Kernel Lens is not installed there. */
const SERVER_MODULES = new Set([
  "kernel_lens",
  "pandas",
  "numpy",
  "pygls",
  "lsprotocol",
  "attrs",
  "cattrs",
]);

/** The actions a notification can offer, by short label (long labels are cut off). */
export type FixAction = "Install Kernel Lens" | "Choose Interpreter" | "Show Details";

export interface FirstRunAdvice {
  /** One sentence for the notification. */
  message: string;
  /** The buttons, most useful first (at most three). */
  actions: FixAction[];
}

/** `pandas` from "ModuleNotFoundError: No module named 'pandas.core'"; undefined otherwise. */
export function missingModule(reason: string): string | undefined {
  const match = /No module named '([^'.]+)/.exec(reason);
  return match?.[1];
}

/**
 * What to tell the user when `python` cannot run the server.
 *
 * Args:
 *   python: the interpreter.
 *   result: the probe's failure.
 *   hasTorch: whether the interpreter can import torch (undefined: not checked).
 *   canInstall: whether a wheel of Kernel Lens is bundled (an install is possible).
 */
export function firstRunAdvice(
  python: string,
  result: Extract<ProbeResult, { ok: false }>,
  hasTorch: boolean | undefined,
  canInstall: boolean,
): FirstRunAdvice {
  const details: FixAction = "Show Details";
  switch (result.failure) {
    case "not-found":
      return {
        message: `Kernel Lens: no Python at "${python}". Choose the interpreter of your PyTorch project.`,
        actions: ["Choose Interpreter", details],
      };
    case "too-old":
      return {
        message: `Kernel Lens: ${result.reason}. Choose a newer interpreter.`,
        actions: ["Choose Interpreter", details],
      };
    case "timeout":
      return {
        message: `Kernel Lens: "${python}" took too long to start. Choose another interpreter or see the details.`,
        actions: ["Choose Interpreter", details],
      };
    case "import-error": {
      const missing = missingModule(result.reason);
      const notInstalled = missing !== undefined && SERVER_MODULES.has(missing);
      const install: FixAction[] = canInstall && notInstalled ? ["Install Kernel Lens"] : [];
      if (hasTorch === false) {
        return {
          message: notInstalled
            ? `Kernel Lens: ${python} has neither torch nor Kernel Lens. Choose the interpreter of your PyTorch project.`
            : `Kernel Lens: ${python} has no torch. Choose the interpreter of your PyTorch project.`,
          actions: ["Choose Interpreter", ...install, details],
        };
      }
      if (notInstalled) {
        return {
          message: `Kernel Lens is not installed in ${python}${hasTorch === true ? " (torch is there)" : ""}.`,
          actions: [...install, "Choose Interpreter", details],
        };
      }
      return {
        message: `Kernel Lens cannot start with ${python}: ${result.reason}`,
        actions: ["Choose Interpreter", details],
      };
    }
  }
}

/**
 * The arguments, after the interpreter, that tell whether torch can be imported (exit 0);
 * isolated (`-I`), so an `importlib/` of the working folder is never what runs.
 */
export function torchCheckArgs(): string[] {
  return [
    "-I",
    "-c",
    "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('torch') else 1)",
  ];
}
