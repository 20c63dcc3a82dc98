/**
 * The optimisation loop's palette command: "Kernel Lens: Set as Baseline" pins the latest run
 * of the function at the cursor (the server's `kernelLens/setBaseline`); its lenses then compare
 * every later profile with that run and say so; the function's More… menu has it too, and the
 * report's History tab pins any run. Each says so in a toast with Undo.
 */
import * as vscode from "vscode";
import { Commands, DISPLAY_NAME } from "./constants";
import type { Ctx } from "./ctx";
import type { LanguageClient } from "vscode-languageclient/node";
import type { Position, SetBaselineAtCursorArgs } from "./generated/wire";
import { HistoryRequest, SetBaselineRequest, isSetBaselineAtCursorArgs } from "./protocol";
import { atCursor, reportFailure, runningClient, sendChecked } from "./requests";
import { showInformation } from "./notify";

/** Registers Set as Baseline (extension-scoped). */
export function registerHistory(ctx: Ctx): void {
  ctx.pushExtCleanup(
    vscode.commands.registerCommand(Commands.setBaselineAtCursor, (args: unknown) =>
      setBaseline(ctx, args),
    ),
  );
}

/** The function a More… names (only its two fields go on to the server), else undefined. */
function functionArgs(args: unknown): SetBaselineAtCursorArgs | undefined {
  return isSetBaselineAtCursorArgs(args) ? { uri: args.uri, function: args.function } : undefined;
}

/**
 * Set as Baseline — the one explicit way to pin (issue 41: a click on the summary's time no
 * longer pins): the latest run of the function (`args` from its More… menu, else the one at
 * the cursor) becomes the reference of later runs; a toast says so and offers Undo, which puts
 * the baseline back as it was (the run pinned before, or none).
 */
async function setBaseline(ctx: Ctx, args: unknown): Promise<void> {
  const named = functionArgs(args);
  let client: LanguageClient | undefined;
  let params: SetBaselineAtCursorArgs | { uri: string; position: Position };
  if (named !== undefined) {
    client = await runningClient(ctx);
    params = named;
  } else {
    const target = await atCursor(ctx, "the profiled function");
    client = target?.client;
    if (target === undefined) {
      return;
    }
    params = target.params;
  }
  if (client === undefined) {
    return;
  }
  try {
    const before = await sendChecked(ctx, client, HistoryRequest, params);
    const result = await sendChecked(ctx, client, SetBaselineRequest, params);
    const run = result.baseline;
    if (run === null) {
      void showInformation(`${DISPLAY_NAME}: ${result.function} has no baseline now.`);
      return;
    }
    const undo = await showInformation(
      `${DISPLAY_NAME}: run ${run.id} of ${result.function} is its baseline; later profiles are compared with it.`,
      "Undo",
    );
    if (undo === "Undo") {
      const back = { uri: before.uri, function: result.function };
      await sendChecked(
        ctx,
        client,
        SetBaselineRequest,
        before.baseline === null ? { ...back, clear: true } : { ...back, run: before.baseline },
      );
      void showInformation(
        before.baseline === null
          ? `${DISPLAY_NAME}: ${result.function} has no baseline again.`
          : `${DISPLAY_NAME}: run ${before.baseline} of ${result.function} is its baseline again.`,
      );
    }
  } catch (error) {
    reportFailure(ctx, SetBaselineRequest.method, error);
  }
}
