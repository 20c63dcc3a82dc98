/**
 * Targets the extension made, not ones it was handed: a Report panel restored from its
 * webview's saved state, a hover or lens link, a webview message or a command argument names a
 * document by URI; only a `file:` URI (or a cell of a notebook file) inside a workspace folder
 * (by its real path), or a document open in the editor, is acted on. The server checks too; this is the client's check.
 *
 * Pure (no `vscode` import, the file system injected): tests/ts/targets.test.ts.
 */
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { isWithin } from "./trust";

export interface TargetContext {
  /** The workspace folders' paths. */
  folders: readonly string[];
  /** The URIs (as strings) of the documents open in the editor. */
  openDocuments: readonly string[];
  /** Whether an open document outside the folders is accepted (not for a restored panel). */
  allowOpen: boolean;
  /** The real path of a file (links resolved), or the path itself when it cannot be resolved. */
  real(file: string): string;
}

/**
 * The local path of a `file:` URI, or of the notebook of a `vscode-notebook-cell:` URI (a cell
 * of a local notebook); undefined for anything else (another scheme, a host).
 */
export function localPath(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return undefined;
  }
  if (url.host !== "" && url.host !== "localhost") {
    return undefined;
  }
  try {
    if (url.protocol === "file:") {
      return path.normalize(fileURLToPath(url));
    }
    if (url.protocol === "vscode-notebook-cell:") {
      // Same encoding as file: (VS Code's Uri.toString), without file:'s URL rules.
      return path.normalize(fileURLToPath(new URL(`file://${url.pathname}`)));
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/**
 * Why `uri` is not a target Kernel Lens acts on, or undefined when it is: a `file:` URI whose
 * real path is inside a workspace folder's, or (with `allowOpen`) an open document's URI.
 */
export function targetProblem(uri: unknown, ctx: TargetContext): string | undefined {
  if (typeof uri !== "string" || uri === "") {
    return "no document named";
  }
  if (ctx.allowOpen && ctx.openDocuments.includes(uri)) {
    return undefined;
  }
  const file = localPath(uri);
  if (file === undefined) {
    return `${uri} is not a local file`;
  }
  const real = ctx.real(file);
  const inside = ctx.folders.some((folder) => isWithin(real, ctx.real(folder)));
  return inside ? undefined : `${file} is not in a workspace folder`;
}

/** The `uri` of a command's first argument (`{uri, function, …}`), if it has one. */
export function commandTargetUri(args: readonly unknown[]): unknown {
  const first = args[0];
  if (typeof first !== "object" || first === null || !("uri" in first)) {
    return undefined;
  }
  return first.uri;
}
