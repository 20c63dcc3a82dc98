/**
 * What Restricted Mode lets the extension run: no interpreter inside a workspace folder
 * (a `.venv` of the folder, a `kernelLens.python` naming `${workspaceFolder}`, a `PATH` entry
 * pointing into it) is executed until the folder is trusted. Paths are compared as written
 * and as their real paths, so a link into the folder, or the folder reached through a link,
 * counts as inside.
 *
 * Pure (no `vscode` import, the file system injected): tests/ts/trust.test.ts.
 */
import { existsSync, realpathSync, statSync } from "node:fs";
import * as path from "node:path";

/** The file system the checks read (injected for the tests). */
export interface PathHost {
  /** The real path of `file` (links resolved), or `file` itself when it cannot be resolved. */
  real(file: string): string;
  /** Whether `file` exists (a command found on `PATH` must). */
  exists(file: string): boolean;
  /** The `PATH` the command names are looked up on. */
  pathEnv: string | undefined;
  /** The folder relative paths (and relative `PATH` entries) are resolved against. */
  cwd: string;
  platform: NodeJS.Platform;
}

/** Whether `file` is `folder` or below it (both absolute). */
export function isWithin(file: string, folder: string): boolean {
  const relative = path.relative(folder, file);
  const up = relative === ".." || relative.startsWith(`..${path.sep}`);
  return relative === "" || (!up && !path.isAbsolute(relative));
}

/**
 * Whether `file` lies inside one of `folders`: as written, through its real path, or through
 * its folder's real path (a venv's `python` links to its base interpreter outside, yet running
 * it runs the venv: its folder is what counts).
 */
export function insideWorkspace(
  file: string,
  folders: readonly string[],
  host: Pick<PathHost, "real" | "cwd">,
): boolean {
  const absolute = path.resolve(host.cwd, file);
  const forms = new Set([
    absolute,
    host.real(absolute),
    path.join(host.real(path.dirname(absolute)), path.basename(absolute)),
  ]);
  const roots = new Set(
    folders.flatMap((folder) => {
      const resolved = path.resolve(host.cwd, folder);
      return [resolved, host.real(resolved)];
    }),
  );
  return [...forms].some((form) => [...roots].some((root) => isWithin(form, root)));
}

/**
 * Where `python` runs from: a path resolved against `cwd`, a command name looked up on `PATH`
 * as the system would (undefined when it is found nowhere).
 */
export function locate(python: string, host: PathHost): string | undefined {
  if (path.isAbsolute(python) || /[\\/]/.test(python)) {
    return path.resolve(host.cwd, python);
  }
  const names =
    host.platform === "win32" && !python.toLowerCase().endsWith(".exe")
      ? [`${python}.exe`, python]
      : [python];
  // An empty PATH entry means the working folder, as for the shell.
  for (const dir of (host.pathEnv ?? "").split(path.delimiter)) {
    for (const name of names) {
      const file = path.resolve(host.cwd, dir === "" ? "." : dir, name);
      if (host.exists(file)) {
        return file;
      }
    }
  }
  return undefined;
}

/** The status item's and the log's words for an interpreter held back until trust. */
export function heldMessage(python: string): string {
  return `Restricted Mode: ${python} is in the workspace; it runs once the folder is trusted`;
}

export interface ServerInterpreterInput {
  trusted: boolean;
  /** The interpreter asked for (setting, Python extension or default), expanded and resolved. */
  wanted: string;
  /** The Python extension's interpreter, where it has one (a fallback in Restricted Mode). */
  pythonExtension: string | undefined;
  /** The fallback of last resort, a command name (`python3`). */
  fallback: string;
  /** The workspace folders' paths. */
  folders: readonly string[];
  host: PathHost;
}

export interface ServerInterpreterChoice {
  /** The interpreter to start the server with; undefined when none may run before trust. */
  python: string | undefined;
  /** Why `wanted` is not run ({@link heldMessage}); undefined when it is. */
  held?: string;
}

/**
 * The interpreter the server may start with. Trusted: the one asked for. Restricted Mode: the
 * one asked for unless it is inside a workspace folder; then the Python extension's
 * interpreter if it is outside, else the fallback found on `PATH` if that is outside, else none.
 */
export function serverInterpreter(input: ServerInterpreterInput): ServerInterpreterChoice {
  const { host, folders } = input;
  if (input.trusted) {
    return { python: input.wanted };
  }
  const wanted = locate(input.wanted, host);
  if (wanted === undefined || !insideWorkspace(wanted, folders, host)) {
    // Not found anywhere: nothing of the workspace runs; the probe will say it is missing.
    return { python: input.wanted };
  }
  const held = heldMessage(input.wanted);
  for (const candidate of [input.pythonExtension, input.fallback]) {
    if (candidate === undefined || candidate === "") {
      continue;
    }
    const found = locate(candidate, host);
    if (found !== undefined && !insideWorkspace(found, folders, host)) {
      return { python: found, held };
    }
  }
  return { python: undefined, held };
}

/** {@link PathHost} on the real file system, relative to this process's working folder. */
export function nodePathHost(): PathHost {
  return {
    real: (file) => {
      try {
        return realpathSync(file);
      } catch {
        return file;
      }
    },
    exists: (file) => {
      try {
        return existsSync(file) && statSync(file).isFile();
      } catch {
        return false;
      }
    },
    pathEnv: process.env["PATH"],
    cwd: process.cwd(),
    platform: process.platform,
  };
}
