/**
 * Names the extension registers with VS Code. Pure, so the manifest test can check them
 * against package.json.
 */

/** Commands the extension itself registers (the server's own `kernelLens.profile` and
 * `kernelLens.profileAll` are registered by vscode-languageclient; see `protocol.ts`). */
export const Commands = {
  profileAtCursor: "kernelLens.profileAtCursor",
  profileFile: "kernelLens.profileFile",
  showOutput: "kernelLens.showOutput",
  restartServer: "kernelLens.restartServer",
} as const;

export type Command = (typeof Commands)[keyof typeof Commands];

/** Language client id (also the prefix vscode-languageclient uses for its own settings). */
export const CLIENT_ID = "kernelLens";

/** Name of the output channel, the language client and the status bar item. */
export const DISPLAY_NAME = "Kernel Lens";

/** The language the server serves. */
export const LANGUAGE = "python";

/** The Python extension, used for the interpreter when installed (never required). */
export const PYTHON_EXTENSION_ID = "ms-python.python";
