/**
 * What the user is offered when the interpreter cannot import the server: install the bundled
 * wheel into it, in a visible terminal (nothing is installed silently), or pick another
 * interpreter in the settings.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, realpathSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import { DISPLAY_NAME, PYTHON_EXTENSION_ID } from "./constants";
import { firstRunAdvice, torchCheckArgs } from "./firstRun";
import {
  HELD_DESCRIPTION,
  type Host,
  type ProbedInterpreter,
  candidates,
  describe,
  probeInterpreter,
  ranked,
  splitForTrust,
} from "./interpreters";
import { type ProbeResult, findWheel, pipInstallArgs, terminalText } from "./python";
import { SECTION } from "./settings";
import { insideWorkspace } from "./trust";
import { showError, withInertProgress } from "./notify";

export interface FixActions {
  log: vscode.LogOutputChannel;
  extensionPath: string;
  /** Restart the server once an install has finished. */
  restart: () => void;
}

/**
 * Whether `python` can import torch (undefined when that cannot be told in time); isolated, in
 * `cwd` (the extension's folder, never the workspace).
 */
function hasTorch(python: string, cwd: string): Promise<boolean | undefined> {
  return new Promise((resolve) => {
    execFile(
      python,
      torchCheckArgs(),
      { cwd, timeout: 15_000, killSignal: "SIGKILL", windowsHide: true },
      (error) => {
        if (error === null) {
          resolve(true);
        } else {
          resolve(typeof error.code === "number" && error.code === 1 ? false : undefined);
        }
      },
    );
  });
}

/** Whether a first-run problem's notification is still open (not answered, not dismissed). */
let pendingFix = false;

/**
 * The server started after all (the interpreter was fixed in the settings, or pip finished):
 * a first-run notification still open says something no longer true, and goes. VS Code has no
 * way to close one notification, so the open ones are cleared — only in that case.
 */
export async function withdrawFix(log: vscode.LogOutputChannel): Promise<void> {
  if (!pendingFix) {
    return;
  }
  pendingFix = false;
  log.info("The interpreter problem is fixed: its notification is withdrawn.");
  await vscode.commands.executeCommand("notifications.clearAll");
}

/**
 * Shows why `python` cannot run the server, naming what is missing (torch, Kernel Lens), with
 * the short actions that can fix it ({@link firstRunAdvice}). Resolves once the notification is
 * answered or dismissed; callers need not await it.
 */
export async function offerFix(
  python: string,
  result: Extract<ProbeResult, { ok: false }>,
  actions: FixActions,
): Promise<void> {
  const wheel = findWheel(path.join(actions.extensionPath, "bundled"));
  const torch =
    result.failure === "import-error" ? await hasTorch(python, actions.extensionPath) : undefined;
  const advice = firstRunAdvice(python, result, torch, wheel !== undefined);
  actions.log.error(
    `${advice.message} (${result.reason}; torch: ${torch === undefined ? "not checked" : String(torch)})`,
  );
  pendingFix = true;
  const choice = await showError(advice.message, ...advice.actions).then((picked) => {
    pendingFix = false;
    return picked;
  });
  if (choice === "Install Kernel Lens" && wheel !== undefined) {
    installInTerminal(python, wheel, actions);
  } else if (choice === "Choose Interpreter") {
    await chooseInterpreter(actions.extensionPath);
  } else if (choice === "Show Details") {
    actions.log.show();
  }
}

/**
 * The Python extension's interpreter picker where it is installed, else Kernel Lens's own;
 * its probes run isolated in `extensionPath`, never in the workspace.
 */
export async function chooseInterpreter(extensionPath: string): Promise<void> {
  if (vscode.extensions.getExtension(PYTHON_EXTENSION_ID) !== undefined) {
    await vscode.commands.executeCommand("python.setInterpreter");
  } else {
    await pickInterpreter(extensionPath);
  }
}

/** The real path of `file`, or `file` itself when it cannot be resolved. */
export function realPath(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

interface InterpreterItem extends vscode.QuickPickItem {
  python?: string;
  browse?: true;
  settings?: true;
}

/**
 * Without the Python extension: the interpreters found (workspace environments, conda, `PATH`),
 * each with its Python and torch versions, those with torch first; the pick is written to
 * `kernelLens.python` for the workspace (the server restarts on it). A path can be browsed
 * for, or typed in the setting. In Restricted Mode the interpreters inside a workspace folder
 * are listed without being run: their versions are unknown until the folder is trusted.
 */
async function pickInterpreter(extensionPath: string): Promise<void> {
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  const host: Host = {
    exists: (file) => existsSync(file),
    real: realPath,
    listDir: (dir) => {
      try {
        return readdirSync(dir);
      } catch {
        return [];
      }
    },
    env: process.env,
    home: os.homedir(),
    platform: process.platform,
  };
  const { probe, held } = splitForTrust(
    candidates(folders, host),
    vscode.workspace.isTrusted,
    (file) => insideWorkspace(file, folders, { real: realPath, cwd: extensionPath }),
  );
  const found = await withInertProgress(
    { location: vscode.ProgressLocation.Window, title: `${DISPLAY_NAME}: finding interpreters` },
    async () =>
      ranked(
        (await Promise.all(probe.map((c) => probeInterpreter(c, extensionPath)))).filter(
          (f): f is ProbedInterpreter => f !== undefined,
        ),
      ),
  );
  const current = vscode.workspace.getConfiguration(SECTION).get<string>("python") ?? "";
  const items: InterpreterItem[] = [
    ...held.map((c) => ({
      label: c.path,
      description: HELD_DESCRIPTION,
      ...(c.path === current ? { detail: "the current setting" } : {}),
      python: c.path,
    })),
    ...found.map((f) => ({
      label: f.path,
      description: describe(f),
      ...(f.path === current ? { detail: "the current setting" } : {}),
      python: f.path,
    })),
    { label: "$(folder-opened) Browse for an interpreter…", browse: true },
    { label: "$(settings-gear) Open the setting kernelLens.python", settings: true },
  ];
  const picked = await vscode.window.showQuickPick(items, {
    title: `${DISPLAY_NAME}: the interpreter of your PyTorch project`,
    placeHolder:
      found.length + held.length === 0
        ? "No interpreter found in the workspace, conda or PATH"
        : "Kernel Lens runs your code with it (torch is the user's)",
  });
  let python = picked?.python;
  if (picked?.settings === true) {
    await vscode.commands.executeCommand("workbench.action.openSettings", `${SECTION}.python`);
    return;
  }
  if (picked?.browse === true) {
    const chosen = await vscode.window.showOpenDialog({
      canSelectMany: false,
      title: `${DISPLAY_NAME}: a Python interpreter`,
    });
    python = chosen?.[0]?.fsPath;
  }
  if (python !== undefined) {
    const target =
      folders.length > 0 ? await pickSettingsTarget() : vscode.ConfigurationTarget.Global;
    if (target !== undefined) {
      await vscode.workspace.getConfiguration(SECTION).update("python", python, target);
    }
  }
}

interface TargetItem extends vscode.QuickPickItem {
  target: vscode.ConfigurationTarget;
}

/**
 * Where the chosen interpreter is kept: the workspace's `.vscode/settings.json` (a file in the
 * user's project, written only when asked) or the user settings; the one that holds the setting
 * now first. Undefined when dismissed.
 */
async function pickSettingsTarget(): Promise<vscode.ConfigurationTarget | undefined> {
  const inspected = vscode.workspace.getConfiguration(SECTION).inspect<string>("python");
  const workspace: TargetItem = {
    label: "This workspace",
    description: "writes .vscode/settings.json in the project",
    target: vscode.ConfigurationTarget.Workspace,
  };
  const user: TargetItem = {
    label: "Your user settings",
    description: "every workspace without its own setting; no file in the project",
    target: vscode.ConfigurationTarget.Global,
  };
  const items = inspected?.workspaceValue !== undefined ? [workspace, user] : [user, workspace];
  const picked = await vscode.window.showQuickPick(items, {
    title: `${DISPLAY_NAME}: keep this interpreter for…`,
  });
  return picked?.target;
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
        // Isolated (-I) and in the extension's folder: no workspace module can stand in for pip.
        child = spawn(python, args, {
          env: process.env,
          cwd: actions.extensionPath,
          windowsHide: true,
        });
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

  void withInertProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: `Installing Kernel Lens into ${python} (see the terminal)…`,
    },
    () => exited,
  ).then((code) => {
    actions.log.info(`pip install finished with exit code ${String(code)}`);
    if (code === 0) {
      actions.restart();
    } else {
      void showError(
        `Installing Kernel Lens into ${python} failed; pip's error is in the terminal.`,
      );
    }
  });
}
