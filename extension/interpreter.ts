/**
 * Which Python runs the server: the `kernelLens.python` setting, else the interpreter selected
 * in the Python extension (ms-python.python) where it is installed, else `python3`.
 *
 * The Python extension is optional (it is absent in code-server), so it is looked up at run
 * time through `vscode.extensions` rather than declared in `extensionDependencies`.
 */
import * as os from "node:os";
import * as vscode from "vscode";
import { withTimeout } from "./async";
import { PYTHON_EXTENSION_ID } from "./constants";
import { DEFAULT_PYTHON, expandVariables, resolveRelative } from "./python";
import type { Settings } from "./settings";

export type InterpreterSource = "setting" | "python-extension" | "default";

export interface Interpreter {
  /** Executable path or command name. */
  python: string;
  source: InterpreterSource;
}

/** The part of the Python extension's API used here (`@vscode/python-extension` types). */
interface EnvironmentPath {
  id: string;
  path: string;
}

interface PythonEnvironmentsApi {
  getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
  resolveEnvironment(
    environment: EnvironmentPath | string,
  ): Promise<{ executable: { uri?: vscode.Uri | undefined } } | undefined>;
  onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
}

/** Time limit for activating the Python extension and asking it for the interpreter, in ms. */
const PYTHON_EXTENSION_TIMEOUT_MS = 15_000;

function isEnvironmentsApi(value: unknown): value is PythonEnvironmentsApi {
  if (typeof value !== "object" || value === null) {
    return false;
  }
  const api = value as Record<string, unknown>;
  return (
    typeof api["getActiveEnvironmentPath"] === "function" &&
    typeof api["resolveEnvironment"] === "function" &&
    typeof api["onDidChangeActiveEnvironmentPath"] === "function"
  );
}

/** The Python extension's environments API, or undefined where it is not installed. */
export async function pythonEnvironments(): Promise<PythonEnvironmentsApi | undefined> {
  const extension = vscode.extensions.getExtension<unknown>(PYTHON_EXTENSION_ID);
  if (extension === undefined) {
    return undefined;
  }
  const exports: unknown = extension.isActive
    ? extension.exports
    : await withTimeout(extension.activate(), PYTHON_EXTENSION_TIMEOUT_MS, "Python extension");
  const environments =
    typeof exports === "object" && exports !== null
      ? (exports as Record<string, unknown>)["environments"]
      : undefined;
  return isEnvironmentsApi(environments) ? environments : undefined;
}

function firstFolder(): vscode.WorkspaceFolder | undefined {
  return vscode.workspace.workspaceFolders?.[0];
}

/**
 * Resolves the interpreter for the server.
 *
 * Args:
 *   settings: the current settings (`python` may hold `${workspaceFolder}` and the like).
 *   log: where to say which interpreter was chosen and why another was not.
 */
export async function resolveInterpreter(
  settings: Settings,
  log: vscode.LogOutputChannel,
): Promise<Interpreter> {
  if (settings.python !== "") {
    const workspaceFolder = firstFolder()?.uri.fsPath;
    const python = expandVariables(settings.python, {
      workspaceFolder,
      userHome: os.homedir(),
      env: process.env,
    });
    return { python: resolveRelative(python, workspaceFolder), source: "setting" };
  }
  const executable = await pythonExtensionInterpreter(log);
  if (executable !== undefined) {
    return { python: executable, source: "python-extension" };
  }
  return { python: DEFAULT_PYTHON, source: "default" };
}

/** The interpreter selected in the Python extension, or undefined (not installed, none). */
export async function pythonExtensionInterpreter(
  log: vscode.LogOutputChannel,
): Promise<string | undefined> {
  try {
    const api = await pythonEnvironments();
    if (api !== undefined) {
      const envPath = api.getActiveEnvironmentPath(firstFolder()?.uri);
      const resolved = await withTimeout(
        api.resolveEnvironment(envPath),
        PYTHON_EXTENSION_TIMEOUT_MS,
        "Python extension resolveEnvironment",
      );
      const executable = resolved?.executable.uri?.fsPath;
      if (executable !== undefined && executable !== "") {
        return executable;
      }
      log.warn(
        `The Python extension has no interpreter for ${envPath.path}; using ${DEFAULT_PYTHON}`,
      );
    }
  } catch (error) {
    log.warn(`Could not ask the Python extension for its interpreter: ${String(error)}`);
  }
  return undefined;
}

/**
 * Calls `listener` when the Python extension's selected interpreter changes.
 *
 * Returns: the subscription, or undefined where the Python extension is not installed.
 */
export async function onDidChangePythonInterpreter(
  listener: () => void,
  log: vscode.LogOutputChannel,
): Promise<vscode.Disposable | undefined> {
  try {
    const api = await pythonEnvironments();
    return api?.onDidChangeActiveEnvironmentPath(() => listener());
  } catch (error) {
    log.warn(`Could not subscribe to the Python extension's interpreter: ${String(error)}`);
    return undefined;
  }
}
