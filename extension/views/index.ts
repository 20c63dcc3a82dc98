/**
 * The views beside the source: read-only `kernel-lens:` documents with torch.compile's generated
 * code (`compiledCommands.ts`), a `@triton.jit` kernel's compiled stages (the same), and the files
 * of a `load_inline(...)` module (`inlineCommands.ts`), each with its lines linked to the source's
 * (`documents.ts`, `lineMap.ts`); and Compare Assembly's diff editor (`asmDiff.ts`). The pure
 * parts (`virtualDocs.ts`, `lineMap.ts`, `inline.ts`, `asmDiffModel.ts`) import no `vscode` and
 * are unit-tested under node.
 */
import type { Ctx } from "../ctx";
import { registerAsmDiff } from "./asmDiff";
import { registerCompiledCommands } from "./compiledCommands";
import { Views } from "./documents";
import { registerInlineCommands } from "./inlineCommands";

/** Creates the views' document provider and registers their commands, all extension-scoped. */
export function registerViews(ctx: Ctx): void {
  const views = new Views();
  ctx.pushExtCleanup(views);
  registerCompiledCommands(ctx, views);
  registerInlineCommands(ctx, views);
  registerAsmDiff(ctx, views);
}
