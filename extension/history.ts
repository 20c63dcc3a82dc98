/**
 * The optimisation loop's palette command: "Kernel Lens: Set as Baseline" pins the latest run
 * of the function at the cursor (the server's `kernelLens/setBaseline`); its lenses then compare
 * every later profile with that run and say so. The summary lens's own click pins it too (the
 * server's `kernelLens.setBaseline` command), and the report's History tab pins any run.
 */
import * as vscode from "vscode";
import { Commands, DISPLAY_NAME } from "./constants";
import type { Ctx } from "./ctx";
import { SetBaselineRequest } from "./protocol";
import { atCursor, reportFailure, sendChecked } from "./requests";
import { showInformation } from "./notify";

/** Registers Set as Baseline (extension-scoped). */
export function registerHistory(ctx: Ctx): void {
  ctx.pushExtCleanup(
    vscode.commands.registerCommand(Commands.setBaselineAtCursor, () => setBaselineAtCursor(ctx)),
  );
}

async function setBaselineAtCursor(ctx: Ctx): Promise<void> {
  const target = await atCursor(ctx, "the profiled function");
  if (target === undefined) {
    return;
  }
  try {
    const result = await sendChecked(ctx, target.client, SetBaselineRequest, target.params);
    const run = result.baseline;
    void showInformation(
      run === null
        ? `${DISPLAY_NAME}: ${result.function} has no baseline now.`
        : `${DISPLAY_NAME}: run ${run.id} of ${result.function} is its baseline; later profiles are compared with it.`,
    );
  } catch (error) {
    reportFailure(ctx, SetBaselineRequest.method, error);
  }
}
