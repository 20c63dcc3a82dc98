/**
 * The interpreters *Choose Interpreter* lists when the Python extension is not installed: the
 * workspace's virtual environments (`.venv`, `venv`, `env`), the active and the usual conda
 * environments, and `python3` / `python` on `PATH`; each is probed for its Python and torch
 * versions (from package metadata: torch is not imported, so a probe takes milliseconds). In
 * Restricted Mode those inside a workspace folder are listed but not run ({@link splitForTrust}).
 *
 * Pure but for {@link probeInterpreter} (a child process), so the candidate list is unit-tested.
 */
import { execFile } from "node:child_process";
import * as path from "node:path";

/** What a candidate is, for the picker's description. */
export type InterpreterSource = "workspace" | "conda" | "PATH";

export interface Candidate {
  path: string;
  source: InterpreterSource;
}

/** What a probe found: the Python version, and torch's and Kernel Lens's (null when absent). */
export interface ProbedInterpreter extends Candidate {
  python: string;
  torch: string | null;
  kernelLens: string | null;
}

/** The file system and environment the candidate list reads (injected for the tests). */
export interface Host {
  exists(file: string): boolean;
  /** The file's real path (`/bin` → `/usr/bin` on merged-usr systems), to list it once. */
  real(file: string): string;
  listDir(dir: string): string[];
  env: NodeJS.ProcessEnv;
  home: string;
  platform: NodeJS.Platform;
}

function binary(prefix: string, platform: NodeJS.Platform): string {
  return platform === "win32"
    ? path.join(prefix, "python.exe")
    : path.join(prefix, "bin", "python");
}

/**
 * The candidates in the order they are offered, each path once: the workspace folders'
 * environments first (the project's own), then conda's (the active one first), then `PATH`'s.
 */
export function candidates(workspaceFolders: readonly string[], host: Host): Candidate[] {
  const seen = new Set<string>();
  const out: Candidate[] = [];
  const add = (file: string, source: InterpreterSource): void => {
    if (!host.exists(file)) {
      return;
    }
    // The same directory reached twice (`/bin` and `/usr/bin`): once. A venv's python is a
    // link to its base interpreter, so the directory is compared, not the binary.
    const key = path.join(host.real(path.dirname(file)), path.basename(file));
    if (!seen.has(key)) {
      seen.add(key);
      out.push({ path: file, source });
    }
  };
  for (const folder of workspaceFolders) {
    for (const name of [".venv", "venv", "env", ".env"]) {
      add(binary(path.join(folder, name), host.platform), "workspace");
    }
  }
  const conda = host.env["CONDA_PREFIX"];
  if (conda !== undefined && conda !== "") {
    add(binary(conda, host.platform), "conda");
  }
  for (const root of ["miniconda3", "anaconda3", "miniforge3", "mambaforge", ".conda"]) {
    const base = path.join(host.home, root);
    add(binary(base, host.platform), "conda");
    for (const env of host.listDir(path.join(base, "envs")).sort()) {
      add(binary(path.join(base, "envs", env), host.platform), "conda");
    }
  }
  const dirs = (host.env["PATH"] ?? "").split(path.delimiter).filter((d) => d !== "");
  for (const name of host.platform === "win32" ? ["python.exe"] : ["python3", "python"]) {
    for (const dir of dirs) {
      add(path.join(dir, name), "PATH");
    }
  }
  return out;
}

/** Prints `<python version>\t<torch version or ->\t<kernel-lens version or ->`. */
export const PROBE_VERSIONS = [
  "import sys",
  "from importlib import metadata",
  "def v(name):",
  "    try:",
  "        return metadata.version(name)",
  "    except Exception:",
  "        return '-'",
  "print('%d.%d.%d' % sys.version_info[:3], v('torch'), v('kernel-lens'), sep='\\t')",
].join("\n");

/** The probe's output read back (undefined when it is not one). */
export function parseProbe(candidate: Candidate, stdout: string): ProbedInterpreter | undefined {
  const [python, torch, kernelLens] = stdout.trim().split("\t");
  if (python === undefined || !/^\d+\.\d+\.\d+$/.test(python)) {
    return undefined;
  }
  return {
    ...candidate,
    python,
    torch: torch === undefined || torch === "-" ? null : torch,
    kernelLens: kernelLens === undefined || kernelLens === "-" ? null : kernelLens,
  };
}

/**
 * The probe's arguments, after the interpreter: isolated (`-I`: no `PYTHON*` variables, no user
 * site, neither the working folder nor the script's on `sys.path`), so no module of a workspace
 * can shadow the one the probe imports.
 */
export function probeVersionArgs(): string[] {
  return ["-I", "-c", PROBE_VERSIONS];
}

/**
 * Runs the probe in `candidate` (at most `timeoutMs`), isolated and in `cwd` (a folder outside
 * the workspace, e.g. the extension's); undefined when it does not answer.
 */
export function probeInterpreter(
  candidate: Candidate,
  cwd: string,
  timeoutMs = 10_000,
): Promise<ProbedInterpreter | undefined> {
  return new Promise((resolve) => {
    execFile(
      candidate.path,
      probeVersionArgs(),
      { cwd, timeout: timeoutMs, killSignal: "SIGKILL", windowsHide: true },
      (error, stdout) => resolve(error === null ? parseProbe(candidate, stdout) : undefined),
    );
  });
}

/** The picker's line for a probed interpreter: `Python 3.11.9 · torch 2.5.1 · workspace`. */
export function describe(found: ProbedInterpreter): string {
  const torch = found.torch === null ? "no torch" : `torch ${found.torch}`;
  return `Python ${found.python} · ${torch} · ${found.source}`;
}

/** The picker's line for an interpreter of an untrusted workspace, listed but not probed. */
export const HELD_DESCRIPTION = "in the workspace · runs once the folder is trusted";

/**
 * The candidates split into those that may be probed now and those held back: in Restricted
 * Mode, every candidate inside a workspace folder (`inside`) is listed, never run.
 */
export function splitForTrust(
  found: readonly Candidate[],
  trusted: boolean,
  inside: (file: string) => boolean,
): { probe: Candidate[]; held: Candidate[] } {
  if (trusted) {
    return { probe: [...found], held: [] };
  }
  return {
    probe: found.filter((c) => !inside(c.path)),
    held: found.filter((c) => inside(c.path)),
  };
}

/** Those with torch first (a PyTorch project's interpreter), keeping the candidates' order. */
export function ranked(found: readonly ProbedInterpreter[]): ProbedInterpreter[] {
  return [...found.filter((f) => f.torch !== null), ...found.filter((f) => f.torch === null)];
}
