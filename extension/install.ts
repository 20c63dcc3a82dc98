/**
 * What the user is offered when the interpreter cannot import the server: install the bundled
 * wheel into it, in a visible terminal (nothing is installed silently), or pick another
 * interpreter in the settings.
 */
import * as path from "node:path";
import * as vscode from "vscode";
import { DISPLAY_NAME } from "./constants";
import { type ProbeResult, findWheel, pipInstallArgs } from "./python";
import { SECTION } from "./settings";

const INSTALL = "Install Kernel Lens into this interpreter";
const OPEN_SETTINGS = "Open Settings";
const SHOW_OUTPUT = "Show Output";

export interface FixActions {
  log: vscode.LogOutputChannel;
  extensionPath: string;
  /** Restart the server once an install has finished. */
  restart: () => void;
}

/**
 * Shows why `python` cannot run the server, with the actions that can fix it.
 * Resolves once the notification is answered or dismissed; callers need not await it.
 */
export async function offerFix(
  python: string,
  result: Extract<ProbeResult, { ok: false }>,
  actions: FixActions,
): Promise<void> {
  const wheel = findWheel(path.join(actions.extensionPath, "bundled"));
  const choices: string[] = [];
  // A missing or too old interpreter cannot be fixed by installing into it.
  if (result.failure === "import-error" && wheel !== undefined) {
    choices.push(INSTALL);
  }
  choices.push(OPEN_SETTINGS, SHOW_OUTPUT);
  const choice = await vscode.window.showErrorMessage(
    `${DISPLAY_NAME} cannot start with ${python}: ${result.reason}`,
    ...choices,
  );
  if (choice === INSTALL && wheel !== undefined) {
    installInTerminal(python, wheel, actions);
  } else if (choice === OPEN_SETTINGS) {
    await vscode.commands.executeCommand("workbench.action.openSettings", `${SECTION}.python`);
  } else if (choice === SHOW_OUTPUT) {
    actions.log.show();
  }
}

/** How often the install terminal is checked for its exit, and for how long, in ms. */
const POLL_MS = 500;
const INSTALL_TIMEOUT_MS = 15 * 60_000;

/**
 * Runs `<python> -m pip install <wheel>` as the process of a new terminal, shown to the user,
 * with a progress notification until it exits. Success restarts the server; failure says so
 * (the terminal stays open with pip's error).
 */
function installInTerminal(python: string, wheel: string, actions: FixActions): void {
  const args = pipInstallArgs(wheel);
  actions.log.info(`Installing into ${python}: ${python} ${args.join(" ")}`);
  // Run pip itself as the terminal's process: no shell quoting, and the inherited environment
  // has no bundled PYTHONPATH, so pip installs every dependency the interpreter lacks.
  const terminal = vscode.window.createTerminal({
    name: `${DISPLAY_NAME}: install`,
    shellPath: python,
    shellArgs: args,
  });
  terminal.show();
  void vscode.window
    .withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Installing Kernel Lens into ${python} (see the terminal)…`,
      },
      () => exitCode(terminal),
    )
    .then((code) => {
      actions.log.info(`pip install finished with exit code ${String(code)}`);
      if (code === 0) {
        actions.restart();
      } else {
        void vscode.window.showErrorMessage(
          `Installing Kernel Lens into ${python} failed (exit code ${String(code)}); pip's error is in the terminal.`,
        );
      }
    });
}

/**
 * The exit code of a terminal's process: from `exitStatus` (set when the process exits, before
 * or without the terminal closing), or undefined if it was closed or ran too long.
 */
function exitCode(terminal: vscode.Terminal): Promise<number | undefined> {
  return new Promise((resolve) => {
    const started = Date.now();
    const finish = (code: number | undefined): void => {
      clearInterval(timer);
      subscription.dispose();
      resolve(code);
    };
    const timer = setInterval(() => {
      if (terminal.exitStatus !== undefined) {
        finish(terminal.exitStatus.code);
      } else if (Date.now() - started > INSTALL_TIMEOUT_MS) {
        finish(undefined);
      }
    }, POLL_MS);
    const subscription = vscode.window.onDidCloseTerminal((closed) => {
      if (closed === terminal) {
        finish(closed.exitStatus?.code);
      }
    });
  });
}
