/**
 * Show Values and Debug Kernel, the parts that need no `vscode`: the text after each kernel
 * line, the program-id picker's items and its input's check, and the debugpy launch
 * configuration a Debug Kernel session resolves to. Unit-tested under plain node.
 */
import type { ValuesLine, ValuesResult } from "../generated/wire";

/** The debug type the extension contributes (its adapter is `python -m debugpy.adapter`). */
export const DEBUG_TYPE = "kernelLens";
/** The module a Debug Kernel session runs (in the user's interpreter). */
export const DEBUG_MODULE = "kernel_lens.agent.stages.interp_debug";
/** The longest text after a line (the hover has the rest). */
export const MAX_AFTER = 160;

/** The command that installs debugpy into `python` (quoted for a shell). */
export function installCommand(python: string): string {
  return `"${python.replace(/"/g, '\\"')}" -m pip install debugpy`;
}

/** What Debug Kernel says when `python` lacks debugpy: why, and the command that fixes it. */
export function debugpyMissing(python: string): string {
  return (
    `Kernel Lens: Debug Kernel needs debugpy in ${python} (the debugger it runs). ` +
    `Install it with: ${installCommand(python)}`
  );
}

/** `(3, 0, 0)`. */
export function pidText(pid: readonly number[]): string {
  return `(${pid.join(", ")})`;
}

/** `4 × 1 × 1`. */
export function gridText(grid: readonly number[]): string {
  return grid.join(" × ");
}

/** The text after one kernel line: its values, `  ·  `-separated, cut at {@link MAX_AFTER}. */
export function afterText(line: ValuesLine): string {
  const passes = line.hits > 1 ? ` [pass ${line.hit}/${line.hits}]` : "";
  const text = line.values.map((v) => v.text).join("   ") + passes;
  return text.length > MAX_AFTER ? `${text.slice(0, MAX_AFTER - 1)}…` : text;
}

/** The text after the kernel's `def` line: which program, and where it ran. */
export function headerText(result: ValuesResult): string {
  const stopped = result.error === null ? "" : " · the interpreter stopped (see Problems)";
  const oob =
    result.oob.length === 0
      ? ""
      : ` · ${result.oob.length} line${result.oob.length === 1 ? "" : "s"} out of bounds`;
  const outside = result.in_grid ? "" : " · outside the grid: no line ran";
  return (
    `program ${pidText(result.pid)} of ${gridText(result.grid)} · Triton interpreter, ` +
    `not GPU time${outside}${oob}${stopped}`
  );
}

/** One choice of the program-id picker. */
export interface PickChoice {
  label: string;
  description?: string;
  /** `first`, `last`, `other` (ask), or for a loop's pass `iteration:first|last|other`. */
  action: string;
}

/** The picker's choices: first, last, any program; a loop's first, last or any pass. */
export function pickChoices(last: ValuesResult | undefined): PickChoice[] {
  const grid = last?.grid;
  const lastPid = grid === undefined ? undefined : grid.map((g) => Math.max(g - 1, 0));
  const shown = last === undefined ? undefined : pidText(last.pid);
  const mark = (pid: string): string | undefined => (pid === shown ? "shown now" : undefined);
  const choices: PickChoice[] = [
    {
      label: "$(arrow-up) First program",
      action: "first",
      ...(last === undefined
        ? {}
        : {
            description: [pidText([0, 0, 0]), mark(pidText([0, 0, 0]))].filter(Boolean).join(" · "),
          }),
    },
    {
      label: "$(arrow-down) Last program",
      action: "last",
      ...(lastPid === undefined
        ? { description: "where masks bite" }
        : {
            description: [pidText(lastPid), "where masks bite", mark(pidText(lastPid))]
              .filter(Boolean)
              .join(" · "),
          }),
    },
    {
      label: "$(edit) Other program…",
      action: "other",
      ...(grid === undefined ? {} : { description: `x, y, z in ${gridText(grid)}` }),
    },
  ];
  if (last !== undefined && last.lines.some((l) => l.hits > 1)) {
    const passes = Math.max(...last.lines.map((l) => l.hits));
    choices.push(
      { label: "$(debug-step-back) First pass of each loop", action: "iteration:first" },
      { label: "$(debug-step-over) Last pass of each loop", action: "iteration:last" },
      {
        label: "$(edit) Pass number…",
        action: "iteration:other",
        description: `1 … ${passes - 1 > 0 ? passes - 1 : passes}`,
      },
    );
  }
  return choices;
}

/**
 * `x[, y[, z]]` typed in the picker, checked against the grid: `undefined` when it is fine,
 * else why not.
 */
export function programProblem(
  text: string,
  grid: readonly number[] | undefined,
): string | undefined {
  const parts = text.split(",").map((p) => p.trim());
  if (parts.length < 1 || parts.length > 3 || parts.some((p) => !/^\d+$/.test(p))) {
    return "x, y, z: one to three non-negative integers";
  }
  const pid = parts.map(Number);
  if (grid !== undefined) {
    for (let i = 0; i < pid.length; i++) {
      const bound = grid[i] ?? 1;
      if ((pid[i] ?? 0) >= bound) {
        return `the grid is ${gridText(grid)}: axis ${i} goes up to ${bound - 1}`;
      }
    }
  }
  return undefined;
}

/** The Debug Kernel launch configuration, as the user (or the lens) writes it. */
export interface KernelDebugConfig {
  type: string;
  request: string;
  name: string;
  /** The kernel's file. */
  kernelFile: string;
  kernel: string;
  /** `first`, `last` or `x,y,z`. */
  pid?: string;
  [key: string]: unknown;
}

/**
 * The debugpy launch configuration of a Debug Kernel session: the module that runs the
 * kernel's launch under the interpreter, the user's interpreter, and the import path with the
 * block resolver for the Variables view (`pathSeparator`: the platform's `:` or `;`).
 */
export function debugpyConfig(
  config: KernelDebugConfig,
  python: string,
  libs: string,
  pathSeparator: string,
  basePythonPath: string | undefined,
  join: (...parts: string[]) => string,
): Record<string, unknown> {
  const plugins = join(libs, "kernel_lens", "agent", "debug_plugins");
  const paths = [
    plugins,
    libs,
    ...(basePythonPath ?? "").split(pathSeparator).filter((p) => p !== ""),
  ];
  const { kernelFile, kernel, pid, ...rest } = config;
  const env = (rest["env"] ?? {}) as Record<string, string>;
  return {
    ...rest,
    module: DEBUG_MODULE,
    args: [kernelFile, kernel, "--pid", pid ?? "first"],
    python: [python],
    env: { ...env, TRITON_INTERPRET: "1", PYTHONPATH: paths.join(pathSeparator) },
    justMyCode: rest["justMyCode"] ?? true,
    console: rest["console"] ?? "internalConsole",
  };
}
