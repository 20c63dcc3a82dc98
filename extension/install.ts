/**
 * What the user is offered when the interpreter cannot import the server: install the bundled
 * wheel into it, in a visible terminal (nothing is installed silently), or pick another
 * interpreter in the settings.
 */
import { spawn, type ChildProcess } from "node:child_process";
import * as path from "node:path";
import * as vscode from "vscode";
import { DISPLAY_NAME } from "./constants";
import { type ProbeResult, findWheel, pipInstallArgs, terminalText } from "./python";
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

/**
 * Runs `<python> -m pip install <wheel>` in a terminal of its own (a pseudoterminal that shows
 * pip's output and stays open after it exits), with a progress notification until pip exits.
 * Success restarts the server; failure says so and leaves pip's error on screen.
 */
function installInTerminal(python: string, wheel: string, actions: FixActions): void {
  const args = pipInstallArgs(wheel);
  const commandLine = [python, ...args].join(" ");
  actions.log.info(`Installing into ${python}: ${commandLine}`);
  const output = new vscode.EventEmitter<string>();
  const write = (text: string): void => output.fire(terminalText(text));
  let child: ChildProcess | undefined;

  const exited = new Promise<number | undefined>((resolve) => {
    const pty: vscode.Pseudoterminal = {
      onDidWrite: output.event,
      open: () => {
        write(`$ ${commandLine}\n`);
        // pip is the process itself: no shell quoting, and this environment has no bundled
        // PYTHONPATH, so pip installs every dependency the interpreter lacks.
        child = spawn(python, args, { env: process.env, windowsHide: true });
        child.stdout?.on("data", (data: Buffer) => write(data.toString()));
        child.stderr?.on("data", (data: Buffer) => write(data.toString()));
        child.on("error", (error) => {
          write(`\n${error.message}\n`);
          resolve(undefined);
        });
        child.on("close", (code) => {
          write(`\npip exited with code ${String(code)}; this terminal can be closed.\n`);
          resolve(code ?? undefined);
        });
      },
      close: () => {
        child?.kill();
        output.dispose();
      },
      handleInput: (data) => {
        if (data === "\x03") {
          child?.kill("SIGINT");
        }
      },
    };
    vscode.window.createTerminal({ name: `${DISPLAY_NAME}: install`, pty }).show();
  });

  void vscode.window
    .withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Installing Kernel Lens into ${python} (see the terminal)…`,
      },
      () => exited,
    )
    .then((code) => {
      actions.log.info(`pip install finished with exit code ${String(code)}`);
      if (code === 0) {
        actions.restart();
      } else {
        void vscode.window.showErrorMessage(
          `Installing Kernel Lens into ${python} failed; pip's error is in the terminal.`,
        );
      }
    });
}
