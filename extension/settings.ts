/**
 * Typed `kernelLens.*` settings.
 *
 * Pure (no `vscode` import): `readSettings` takes anything with a `get(key)` method, which a
 * `vscode.WorkspaceConfiguration` is, so it is unit-tested with a plain object. The defaults
 * here must match `contributes.configuration` in package.json (tests/ts/manifest.test.ts).
 */
import {
  CLIENT_VSCODE,
  DEFAULT_BUDGET_MS,
  DEFAULT_WARMUP_MS,
  type InitializationOptions,
  type TimingOptions,
} from "./generated/wire";

/** The configuration section; every key below lives under it. */
export const SECTION = "kernelLens";

/** Every setting key, relative to {@link SECTION}. */
export type SettingKey =
  | "python"
  | "agentCommand"
  | "timeoutSeconds"
  | "compileTimeoutSeconds"
  | "timing.warmupMs"
  | "timing.budgetMs"
  | "timing.reps"
  | "lenses.showAll"
  | "profileMemory"
  | "attributeInPackages"
  | "distributed.nprocPerNode";

/**
 * Keys read once at server start (interpreter, `initializationOptions.agentCommand`): a change
 * restarts the server. Everything else the server pulls with `workspace/configuration`. These
 * are also the `restrictedConfigurations` of Restricted Mode, since they name programs to run.
 */
export const RESTART_KEYS = ["python", "agentCommand"] as const satisfies readonly SettingKey[];

/** When a plain Profile records memory. */
export type ProfileMemory = "auto" | "on" | "off";

const PROFILE_MEMORY: readonly ProfileMemory[] = ["auto", "on", "off"];

export interface Settings {
  /** Interpreter for the server; "" = the Python extension's, else `python3`. */
  python: string;
  /** argv prefix for the agent; empty = the server's own interpreter. */
  agentCommand: readonly string[];
  /** Time limit for one profiling job, in seconds (>= 1). */
  timeoutSeconds: number;
  /** Time limit for a compiler job (nvcc, Triton, torch.compile) when above `timeoutSeconds`. */
  compileTimeoutSeconds: number;
  timing: Readonly<TimingOptions>;
  /** Which lenses are shown (the server pulls this; see `analysis/lens_targets.py`). */
  lenses: Readonly<{ showAll: boolean }>;
  /**
   * Record memory on every Profile, as Profile Memory does (the server pulls this): `auto` =
   * when the function runs on CUDA, where it costs under 10%. Booleans (the old type) read as
   * `on`/`off`.
   */
  profileMemory: ProfileMemory;
  /**
   * Installed packages whose code counts as the user's (the server pulls this): a run attributes
   * to the innermost line in the workspace or in these packages' files (`transformers`, `timm`).
   */
  attributeInPackages: readonly string[];
  /**
   * Ranks of *Profile on N ranks* on a file that calls `init_process_group` (the server pulls
   * this): `0` = the visible GPUs, at least 2 (gloo on the CPU without GPUs).
   */
  distributed: Readonly<{ nprocPerNode: number }>;
}

export const DEFAULTS: Readonly<Settings> = {
  python: "",
  agentCommand: [],
  timeoutSeconds: 120,
  compileTimeoutSeconds: 600,
  timing: { warmupMs: DEFAULT_WARMUP_MS, budgetMs: DEFAULT_BUDGET_MS, reps: 0 },
  lenses: { showAll: false },
  profileMemory: "auto",
  attributeInPackages: [],
  distributed: { nprocPerNode: 0 },
};

/** A top-level Python package name (`transformers`, `timm`): an identifier, no dots. */
export function isPackageName(name: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name);
}

/** The part of `vscode.WorkspaceConfiguration` that {@link readSettings} needs. */
export interface ConfigGetter {
  get(key: string): unknown;
}

/** Settings plus one message per value that was invalid and replaced by its default. */
export interface ReadResult {
  settings: Settings;
  problems: string[];
}

/**
 * Reads and validates the settings from a `kernelLens` configuration section.
 *
 * Args:
 *   config: `vscode.workspace.getConfiguration("kernelLens")` or any getter of relative keys.
 *
 * Returns: the settings, with each invalid value replaced by its default and named in
 *   `problems` (for the output channel), so a typo never stops the server from starting.
 */
export function readSettings(config: ConfigGetter): ReadResult {
  const problems: string[] = [];
  const invalid: Invalid = (key, value, expected) => {
    problems.push(`${SECTION}.${key}: expected ${expected}, got ${JSON.stringify(value)}`);
  };
  const number = (key: SettingKey, fallback: number, min: number, integer: boolean): number =>
    readNumber(config, invalid, { key, fallback, min, integer });
  const checked = <T>(
    key: SettingKey,
    fallback: T,
    valid: (value: unknown) => boolean,
    expected: string,
  ): T => readChecked(config, invalid, { key, fallback, valid, expected });

  const python = checked("python", DEFAULTS.python, (v) => typeof v === "string", "a string");
  const agentCommand = checked(
    "agentCommand",
    DEFAULTS.agentCommand,
    (v) => Array.isArray(v) && v.every((a) => typeof a === "string"),
    "an array of strings",
  );
  const showAll = checked(
    "lenses.showAll",
    DEFAULTS.lenses.showAll,
    (v) => typeof v === "boolean",
    "true or false",
  );
  const profileMemory = readProfileMemory(config, invalid);
  const attributeInPackages = checked(
    "attributeInPackages",
    DEFAULTS.attributeInPackages,
    (v) => Array.isArray(v) && v.every((a) => typeof a === "string" && isPackageName(a.trim())),
    "an array of top-level package names",
  );

  return {
    settings: {
      python: python.trim(),
      agentCommand: [...agentCommand],
      timeoutSeconds: number("timeoutSeconds", DEFAULTS.timeoutSeconds, 1, false),
      compileTimeoutSeconds: number(
        "compileTimeoutSeconds",
        DEFAULTS.compileTimeoutSeconds,
        1,
        false,
      ),
      timing: {
        warmupMs: number("timing.warmupMs", DEFAULTS.timing.warmupMs, 0, false),
        budgetMs: number("timing.budgetMs", DEFAULTS.timing.budgetMs, 1, false),
        reps: number("timing.reps", DEFAULTS.timing.reps, 0, true),
      },
      lenses: { showAll },
      profileMemory,
      attributeInPackages: attributeInPackages.map((a) => a.trim()),
      distributed: {
        nprocPerNode: number(
          "distributed.nprocPerNode",
          DEFAULTS.distributed.nprocPerNode,
          0,
          true,
        ),
      },
    },
    problems,
  };
}

/** Records a value that was invalid (and replaced by its default). */
type Invalid = (key: SettingKey, value: unknown, expected: string) => void;

/** A setting's value when `valid` accepts it (unset: its default); else its default, and the
 * value said to be invalid. */
function readChecked<T>(
  config: ConfigGetter,
  invalid: Invalid,
  setting: { key: SettingKey; fallback: T; valid: (value: unknown) => boolean; expected: string },
): T {
  const value = config.get(setting.key) ?? setting.fallback;
  if (!setting.valid(value)) {
    invalid(setting.key, value, setting.expected);
    return setting.fallback;
  }
  return value as T;
}

/** A number setting at least `min` (an integer if asked); unset or invalid: its default. */
function readNumber(
  config: ConfigGetter,
  invalid: Invalid,
  setting: { key: SettingKey; fallback: number; min: number; integer: boolean },
): number {
  const { key, fallback, min, integer } = setting;
  const value = config.get(key);
  if (value === undefined || value === null) {
    return fallback;
  }
  if (
    typeof value !== "number" ||
    !Number.isFinite(value) ||
    value < min ||
    (integer && !Number.isInteger(value))
  ) {
    invalid(key, value, `${integer ? "an integer" : "a number"} >= ${min}`);
    return fallback;
  }
  return value;
}

/** `kernelLens.profileMemory`: `auto`, `on` or `off` (`true`/`false` read as `on`/`off`). */
function readProfileMemory(config: ConfigGetter, invalid: Invalid): ProfileMemory {
  const memoryValue = config.get("profileMemory") ?? DEFAULTS.profileMemory;
  if (typeof memoryValue === "boolean") {
    return memoryValue ? "on" : "off";
  }
  if (PROFILE_MEMORY.some((v) => v === memoryValue)) {
    return memoryValue as ProfileMemory;
  }
  invalid("profileMemory", memoryValue, '"auto", "on" or "off"');
  return DEFAULTS.profileMemory;
}

/** True when going from `before` to `after` needs a server restart (see {@link RESTART_KEYS}). */
export function needsRestart(before: Settings, after: Settings): boolean {
  return (
    before.python !== after.python ||
    before.agentCommand.length !== after.agentCommand.length ||
    before.agentCommand.some((arg, i) => arg !== after.agentCommand[i])
  );
}

/** The `initializationOptions` sent to the server for these settings. */
export function initializationOptions(
  settings: Settings,
  workspaceTrusted: boolean,
): InitializationOptions {
  return {
    agentCommand: settings.agentCommand.length > 0 ? [...settings.agentCommand] : null,
    timeoutSeconds: settings.timeoutSeconds,
    compileTimeoutSeconds: settings.compileTimeoutSeconds,
    workspaceTrusted,
    timing: { ...settings.timing },
    // The server's lenses and hovers may use VS Code's `$(icon)` titles, `command:` links and
    // this extension's own commands; other editors get plain ones (README: Other editors).
    client: CLIENT_VSCODE,
  };
}
