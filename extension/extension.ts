/**
 * Entry point: creates the {@link Ctx}, registers the commands and the views beside the source,
 * and starts the server.
 */
import type * as vscode from "vscode";
import { registerCommands } from "./commands";
import { Ctx } from "./ctx";
import { registerReport } from "./report";
import { registerViewCommands } from "./viewCommands";

let ctx: Ctx | undefined;

export function activate(context: vscode.ExtensionContext): void {
  ctx = new Ctx(context);
  registerCommands(ctx);
  registerViewCommands(ctx);
  registerReport(ctx);
  void ctx.restart("activation");
}

export async function deactivate(): Promise<void> {
  await ctx?.dispose();
  ctx = undefined;
}
