import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import {
  DEFAULTS,
  RESTART_KEYS,
  type ConfigGetter,
  type Settings,
  initializationOptions,
  needsRestart,
  readSettings,
} from "../../extension/settings";
import { DEFAULT_BUDGET_MS, DEFAULT_WARMUP_MS } from "../../extension/generated/wire";

/** A configuration getter over a plain object of relative keys. */
function config(values: Record<string, unknown>): ConfigGetter {
  return { get: (key) => values[key] };
}

function settings(overrides: Partial<Settings> = {}): Settings {
  return { ...DEFAULTS, agentCommand: [...DEFAULTS.agentCommand], ...overrides };
}

describe("readSettings", () => {
  it("gives the defaults for an empty configuration", () => {
    assert.deepEqual(readSettings(config({})), { settings: settings(), problems: [] });
  });

  it("reads every key", () => {
    const result = readSettings(
      config({
        python: " /opt/py/bin/python ",
        agentCommand: ["ssh", "gpuhost", "python3"],
        timeoutSeconds: 30,
        compileTimeoutSeconds: 900,
        "timing.warmupMs": 0,
        "timing.budgetMs": 1000,
        "timing.reps": 50,
        "lenses.showAll": true,
        profileMemory: "on",
        attributeInPackages: ["transformers", " timm "],
        "distributed.nprocPerNode": 4,
      }),
    );
    assert.deepEqual(result, {
      settings: {
        python: "/opt/py/bin/python",
        agentCommand: ["ssh", "gpuhost", "python3"],
        timeoutSeconds: 30,
        compileTimeoutSeconds: 900,
        timing: { warmupMs: 0, budgetMs: 1000, reps: 50 },
        lenses: { showAll: true },
        profileMemory: "on",
        attributeInPackages: ["transformers", "timm"],
        distributed: { nprocPerNode: 4 },
      },
      problems: [],
    });
  });

  it("replaces invalid values by their defaults and names each one", () => {
    const result = readSettings(
      config({
        python: 3,
        agentCommand: "ssh gpuhost python3",
        timeoutSeconds: 0,
        compileTimeoutSeconds: "long",
        "timing.warmupMs": -1,
        "timing.budgetMs": Number.NaN,
        "timing.reps": 2.5,
      }),
    );
    assert.deepEqual(result.settings, settings());
    assert.deepEqual(result.problems, [
      "kernelLens.python: expected a string, got 3",
      'kernelLens.agentCommand: expected an array of strings, got "ssh gpuhost python3"',
      "kernelLens.timeoutSeconds: expected a number >= 1, got 0",
      'kernelLens.compileTimeoutSeconds: expected a number >= 1, got "long"',
      "kernelLens.timing.warmupMs: expected a number >= 0, got -1",
      "kernelLens.timing.budgetMs: expected a number >= 1, got null",
      "kernelLens.timing.reps: expected an integer >= 0, got 2.5",
    ]);
  });

  it("takes profileMemory as auto, on or off, reading the old booleans as on and off", () => {
    const result = readSettings(config({ profileMemory: "yes" }));
    assert.equal(result.settings.profileMemory, "auto");
    assert.deepEqual(result.problems, [
      'kernelLens.profileMemory: expected "auto", "on" or "off", got "yes"',
    ]);
    assert.equal(readSettings(config({ profileMemory: true })).settings.profileMemory, "on");
    assert.equal(readSettings(config({ profileMemory: false })).settings.profileMemory, "off");
    assert.equal(readSettings(config({ profileMemory: "off" })).settings.profileMemory, "off");
  });

  it("takes attributeInPackages as top-level package names only", () => {
    const result = readSettings(config({ attributeInPackages: ["transformers.models"] }));
    assert.deepEqual(result.settings.attributeInPackages, []);
    assert.deepEqual(result.problems, [
      'kernelLens.attributeInPackages: expected an array of top-level package names, got ["transformers.models"]',
    ]);
    assert.deepEqual(
      readSettings(config({ attributeInPackages: ["timm"] })).settings.attributeInPackages,
      ["timm"],
    );
  });

  it("rejects an agent command with a non-string element", () => {
    const result = readSettings(config({ agentCommand: ["srun", 1] }));
    assert.deepEqual(result.settings.agentCommand, []);
    assert.equal(result.problems.length, 1);
  });

  it("returns a copy of the agent command", () => {
    const argv = ["python3"];
    const result = readSettings(config({ agentCommand: argv }));
    argv.push("-X");
    assert.deepEqual(result.settings.agentCommand, ["python3"]);
  });
});

describe("needsRestart", () => {
  it("is false for equal settings, and for runtime-only changes", () => {
    assert.equal(needsRestart(settings(), settings()), false);
    assert.equal(
      needsRestart(
        settings(),
        settings({ timeoutSeconds: 5, timing: { warmupMs: 1, budgetMs: 2, reps: 3 } }),
      ),
      false,
    );
  });

  it("is true when the interpreter changes", () => {
    assert.equal(needsRestart(settings(), settings({ python: "/usr/bin/python3" })), true);
  });

  it("is true when the agent command changes in any element or its length", () => {
    const ssh = settings({ agentCommand: ["ssh", "a", "python3"] });
    assert.equal(needsRestart(ssh, settings({ agentCommand: ["ssh", "b", "python3"] })), true);
    assert.equal(needsRestart(ssh, settings({ agentCommand: ["ssh", "a"] })), true);
    assert.equal(needsRestart(ssh, settings({ agentCommand: [] })), true);
    assert.equal(needsRestart(ssh, settings({ agentCommand: ["ssh", "a", "python3"] })), false);
  });

  it("covers exactly the restart keys", () => {
    assert.deepEqual([...RESTART_KEYS], ["python", "agentCommand"]);
  });
});

describe("initializationOptions", () => {
  it("sends null for an empty agent command", () => {
    assert.deepEqual(initializationOptions(settings(), false), {
      agentCommand: null,
      timeoutSeconds: 120,
      compileTimeoutSeconds: 600,
      workspaceTrusted: false,
      timing: { warmupMs: 25, budgetMs: 500, reps: 0 },
      client: "vscode",
    });
  });

  it("sends the agent command and trust as given", () => {
    const options = initializationOptions(
      settings({ agentCommand: ["srun", "--gres=gpu:1", "python3"] }),
      true,
    );
    assert.deepEqual(options.agentCommand, ["srun", "--gres=gpu:1", "python3"]);
    assert.equal(options.workspaceTrusted, true);
  });
});

describe("the timing defaults", () => {
  it("are the wire's, in the settings the editor contributes too", () => {
    const manifest = JSON.parse(readFileSync("package.json", "utf8")) as {
      contributes: { configuration: { properties: Record<string, { default?: unknown }> } };
    };
    const properties = manifest.contributes.configuration.properties;
    assert.equal(properties["kernelLens.timing.warmupMs"]?.default, DEFAULT_WARMUP_MS);
    assert.equal(properties["kernelLens.timing.budgetMs"]?.default, DEFAULT_BUDGET_MS);
    assert.equal(DEFAULTS.timing.warmupMs, DEFAULT_WARMUP_MS);
    assert.equal(DEFAULTS.timing.budgetMs, DEFAULT_BUDGET_MS);
  });
});
