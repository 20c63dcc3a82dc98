/**
 * Entry point: creates the {@link Ctx}, registers the commands and starts the server.
 */
import type * as vscode from "vscode";
import { registerCommands } from "./commands";
import { Ctx } from "./ctx";

let ctx: Ctx | undefined;

export function activate(context: vscode.ExtensionContext): void {
  ctx = new Ctx(context);
  registerCommands(ctx);
  void ctx.restart("activation");
}

export async function deactivate(): Promise<void> {
  await ctx?.dispose();
  ctx = undefined;
}
