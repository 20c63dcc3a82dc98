/**
 * What a command sends to name its function or kernel: the name a code lens or a view gave, or
 * else the cursor, which the server resolves (`server/kernel_lens/analysis/functions.py`); the
 * extension does not read Python itself. The server's answer carries the name it resolved, and
 * when the cursor is in no function it fails with a message for the user ({@link isUserReady}).
 *
 * Pure (no `vscode` import), so it is unit-tested under plain node.
 */
import { DISPLAY_NAME } from "./constants";
import type { AsmStage, AssemblyParams, Position } from "./generated/wire";

/** A function or kernel by name, or the cursor in its document. */
export type Pointer = { name: string } | { position: Position };

/**
 * The cursor as the protocol sends it: only the 0-based line and UTF-16 character (an editor's
 * position object carries more than the wire needs).
 */
export function cursorPosition(position: { line: number; character: number }): Position {
  return { line: position.line, character: position.character };
}

/** `{uri, position}` for the cursor at `position` of the document at `uri`. */
export function cursorParams(
  uri: string,
  position: { line: number; character: number },
): { uri: string; position: Position } {
  return { uri, position: cursorPosition(position) };
}

/** Params that name a function: `{uri, function}`, or `{uri, position}` for the server to resolve. */
export function functionParams(
  uri: string,
  at: Pointer,
): { uri: string; function: string } | { uri: string; position: Position } {
  return "name" in at ? { uri, function: at.name } : cursorParams(uri, at.position);
}

/** `kernelLens/assembly` params: the kernel by name, else the kernel at the cursor. */
export function assemblyParams(uri: string, at: Pointer, stage: AsmStage): AssemblyParams {
  return "name" in at
    ? { uri, kernel: at.name, stage }
    : { ...cursorParams(uri, at.position), stage };
}

/**
 * How a title names what a command is about before the server has answered: its name, or
 * `the function at line 12` (1-based, as the editor shows it).
 */
export function pointerLabel(at: Pointer, what: "function" | "kernel"): string {
  return "name" in at ? at.name : `the ${what} at line ${at.position.line + 1}`;
}

/**
 * Whether a server error message is a complete sentence for the user about what was asked,
 * shown as is: it starts with "Kernel Lens: " (e.g. "Kernel Lens: put the cursor in a
 * @triton.jit kernel (line 12 is not in one)."). Other errors say what broke.
 */
export function isUserReady(message: string): boolean {
  return message.startsWith(`${DISPLAY_NAME}: `);
}
