/**
 * Entry point: creates the {@link Ctx}, registers every feature from {@link FEATURES}, and
 * starts the server.
 *
 * A feature is a folder or module with one `register…(ctx)` function that registers its
 * commands, views and client handlers on the Ctx (extension-scoped, or per client through
 * `ctx.onClientCreated`). This list is the one place they are wired in, as the server's entry
 * point lists its feature modules.
 */
import type * as vscode from "vscode";
import { registerCommands } from "./commands";
import { Ctx } from "./ctx";
import { registerHistory } from "./history";
import { registerInterp } from "./interp";
import { registerKernelLines } from "./kernelLines";
import { registerReport } from "./report";
import { registerViews } from "./views";

/** The features, registered in this order before the first client starts. */
const FEATURES: readonly { name: string; register: (ctx: Ctx) => void }[] = [
  // Profile at cursor / file, Nsight Compute at cursor, Show Output, Restart Server.
  { name: "commands", register: registerCommands },
  // Generated code, assembly and load_inline documents beside the source, lines linked.
  { name: "views", register: registerViews },
  // The report panel, kernelLens/revealReport, and the trace and .ncu-rep custom editors.
  { name: "report", register: registerReport },
  // Set as Baseline at the cursor (the optimisation loop; its History tab is in the report).
  { name: "history", register: registerHistory },
  // Show Values and Debug Kernel: a Triton kernel's launch under Triton's interpreter.
  { name: "interp", register: registerInterp },
  // Profile Kernel Lines: Nsight Compute's source counters on a kernel's own lines.
  { name: "kernelLines", register: registerKernelLines },
];

let ctx: Ctx | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const created = new Ctx(context);
  ctx = created;
  for (const feature of FEATURES) {
    // One feature failing to register must not take the others (or the server) down.
    try {
      feature.register(created);
    } catch (error) {
      created.log.error(`Registering ${feature.name} failed: ${String(error)}`);
    }
  }
  void created.restart("activation");
}

export async function deactivate(): Promise<void> {
  await ctx?.dispose();
  ctx = undefined;
}
