/**
 * Everything about the server's Python process that needs node but not `vscode`: its
 * environment, checking an interpreter can import the server, and the install command.
 */
import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import * as path from "node:path";

/** The server's module, run as `<python> -m kernel_lens.lsp`. */
export const SERVER_MODULE = "kernel_lens.lsp";

/** The interpreter used when neither the setting nor the Python extension names one. */
export const DEFAULT_PYTHON = "python3";

/** Oldest Python the server supports (pyproject.toml `requires-python`). */
export const MIN_PYTHON: readonly [number, number] = [3, 10];

/** Folder (under the extension) holding `kernel_lens` and its pure-Python LSP dependencies. */
export function bundledLibs(extensionPath: string): string {
  return path.join(extensionPath, "bundled", "libs");
}

/**
 * The environment for the server process (and the import check).
 *
 * Args:
 *   extensionPath: the extension's install folder.
 *   base: the environment to extend, normally `process.env`.
 *
 * Returns: a copy of `base` with `bundled/libs` prepended to PYTHONPATH and
 *   PYTHONUNBUFFERED=1 (so the server's stderr reaches the output channel as it is written).
 */
export function serverEnv(extensionPath: string, base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const existing = base["PYTHONPATH"];
  const entries = [bundledLibs(extensionPath)];
  if (existing !== undefined && existing !== "") {
    entries.push(existing);
  }
  return { ...base, PYTHONPATH: entries.join(path.delimiter), PYTHONUNBUFFERED: "1" };
}

/**
 * Where the server may start its agent at once, before its own imports
 * (`server/kernel_lens/early_agent.py`): a trusted workspace whose agent is the default local
 * one, in the workspace's first folder (the folder the server would give it).
 */
export interface EarlyAgent {
  trusted: boolean;
  agentCommand: readonly string[];
  folder: string | undefined;
}

/** The environment variables that ask the server for its early agent, or none. */
export function earlyAgentEnv(early: EarlyAgent | undefined): Record<string, string> {
  if (early === undefined || !early.trusted || early.agentCommand.length > 0) {
    return {};
  }
  const env: Record<string, string> = { KERNEL_LENS_EARLY_AGENT: "1" };
  if (early.folder !== undefined) {
    env["KERNEL_LENS_EARLY_AGENT_CWD"] = early.folder;
  }
  return env;
}

/** Values for {@link expandVariables}. */
export interface Variables {
  workspaceFolder?: string | undefined;
  userHome: string;
  env: NodeJS.ProcessEnv;
}

/**
 * Expands `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and a leading `~` in a path
 * setting, as VS Code's own settings do. Unknown or unavailable variables are left as written,
 * so the error that follows names them.
 */
export function expandVariables(value: string, vars: Variables): string {
  let result = value.replace(
    /\$\{(workspaceFolder|userHome|env:([^}]+))\}/g,
    (match, name, env) => {
      if (name === "workspaceFolder") {
        return vars.workspaceFolder ?? match;
      }
      if (name === "userHome") {
        return vars.userHome;
      }
      return vars.env[env as string] ?? "";
    },
  );
  if (result === "~" || result.startsWith("~/") || result.startsWith("~\\")) {
    result = vars.userHome + result.slice(1);
  }
  return result;
}

/**
 * Resolves a relative interpreter path (`.venv/bin/python`) against the workspace folder, as
 * the server runs outside it. Bare command names (`python3`) are left to the PATH lookup.
 */
export function resolveRelative(python: string, workspaceFolder: string | undefined): string {
  if (workspaceFolder === undefined || path.isAbsolute(python) || !/[\\/]/.test(python)) {
    return python;
  }
  return path.resolve(workspaceFolder, python);
}

/** Why an interpreter cannot run the server. */
export type ProbeFailure = "not-found" | "too-old" | "import-error" | "timeout";

export type ProbeResult =
  | { ok: true }
  | {
      ok: false;
      failure: ProbeFailure;
      /** One line for a notification, e.g. "ModuleNotFoundError: No module named 'pandas'". */
      reason: string;
      /** Everything the interpreter printed, for the output channel. */
      detail: string;
    };

/** Exit status of the probe script when the interpreter is too old. */
const TOO_OLD_EXIT = 3;

/**
 * Checks the version first: an old Python would fail on syntax with a far less clear message.
 * Run isolated (`-I`), it rebuilds the import path the server has: the `PYTHONPATH` entries,
 * passed as arguments, first; the user's site-packages unless `PYTHONNOUSERSITE` is set.
 */
const PROBE_SCRIPT = [
  "import os, site, sys",
  `if sys.version_info < (${MIN_PYTHON.join(", ")}):`,
  `    sys.stderr.write("Python %d.%d is too old: Kernel Lens needs Python ${MIN_PYTHON.join(".")} or newer\\n" % sys.version_info[:2])`,
  `    sys.exit(${TOO_OLD_EXIT})`,
  "sys.path[0:0] = [p for p in sys.argv[1:] if p]",
  "if not os.environ.get('PYTHONNOUSERSITE') and os.path.isdir(site.getusersitepackages()):",
  "    site.addsitedir(site.getusersitepackages())",
  `import ${SERVER_MODULE}`,
].join("\n");

/**
 * The arguments of the import check, after the interpreter: isolated (`-I`: neither the
 * working folder nor `PYTHON*` variables count), so no workspace file can shadow a module;
 * `pythonPath` (the server's `PYTHONPATH` entries, the bundled libs first) is put on
 * `sys.path` by the script itself.
 */
export function probeArgs(pythonPath: readonly string[]): string[] {
  return ["-I", "-c", PROBE_SCRIPT, ...pythonPath];
}

/** The last non-empty line of a traceback: the exception and its message. */
export function lastLine(text: string): string {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "");
  return lines.at(-1) ?? "";
}

/**
 * Runs `<python> -I -c "import kernel_lens.lsp"` (after a version check) with the server's
 * import path and reports whether the server can start, and if not, why.
 *
 * Args:
 *   python: interpreter path or command name.
 *   env: the server environment (see {@link serverEnv}); its PYTHONPATH is passed to the
 *     isolated interpreter as arguments.
 *   cwd: working folder; not the workspace, so a workspace file cannot shadow a module.
 *   timeoutMs: time limit in milliseconds; the interpreter is killed past it.
 */
export function probeServer(
  python: string,
  env: NodeJS.ProcessEnv,
  cwd: string,
  timeoutMs: number,
): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const pythonPath = (env["PYTHONPATH"] ?? "").split(path.delimiter).filter((p) => p !== "");
    execFile(
      python,
      probeArgs(pythonPath),
      { env, cwd, timeout: timeoutMs, killSignal: "SIGKILL", windowsHide: true },
      (error, stdout, stderr) => {
        if (error === null) {
          resolve({ ok: true });
          return;
        }
        const detail = `${stdout}${stderr}`.trim();
        const code = error.code;
        if (code === "ENOENT" || code === "EACCES") {
          resolve({
            ok: false,
            failure: "not-found",
            reason: `Python interpreter "${python}" was not found or cannot be run (${code})`,
            detail: error.message,
          });
        } else if (error.killed) {
          resolve({
            ok: false,
            failure: "timeout",
            reason: `"${python} -c 'import ${SERVER_MODULE}'" did not finish within ${timeoutMs / 1000} s`,
            detail,
          });
        } else if (code === TOO_OLD_EXIT) {
          resolve({ ok: false, failure: "too-old", reason: lastLine(stderr), detail });
        } else {
          resolve({
            ok: false,
            failure: "import-error",
            reason: lastLine(stderr) || error.message,
            detail,
          });
        }
      },
    );
  });
}

/** The `kernel_lens-*.whl` in `folder` (the extension's `bundled/`; the last by name if several). */
export function findWheel(folder: string): string | undefined {
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return undefined;
  }
  const wheels = names.filter((name) => /^kernel_lens-.+\.whl$/.test(name)).sort();
  const newest = wheels.at(-1);
  return newest === undefined ? undefined : path.join(folder, newest);
}

/**
 * Arguments, after the interpreter, that install the bundled wheel and its dependencies;
 * isolated (`-I`), so a `pip/` of the working folder is never what runs.
 */
export function pipInstallArgs(wheel: string): string[] {
  return ["-I", "-m", "pip", "install", wheel];
}

/** Process output made fit for a terminal, which needs CR LF to start a new line. */
export function terminalText(text: string): string {
  return text.replace(/\r?\n/g, "\r\n");
}
