/**
 * Choose Interpreter without the Python extension: the candidates found (workspace
 * environments, conda, PATH), in order, each once; the probe's answer read back.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import {
  candidates,
  describe as describeInterpreter,
  HELD_DESCRIPTION,
  parseProbe,
  probeInterpreter,
  probeVersionArgs,
  ranked,
  splitForTrust,
  type Host,
} from "../../extension/interpreters";

function host(files: string[], dirs: Record<string, string[]>, env: NodeJS.ProcessEnv): Host {
  return {
    exists: (file) => files.includes(file),
    real: (file) => (file === "/bin" ? "/usr/bin" : file),
    listDir: (dir) => dirs[dir] ?? [],
    env,
    home: "/home/u",
    platform: "linux",
  };
}

describe("candidates", () => {
  it("lists the workspace's environments, conda's, then PATH's, each path once", () => {
    const files = [
      "/w/.venv/bin/python",
      "/w/venv/bin/python",
      "/opt/conda/envs/torch/bin/python",
      "/home/u/miniconda3/bin/python",
      "/home/u/miniconda3/envs/a/bin/python",
      "/usr/bin/python3",
      "/usr/local/bin/python3",
      "/bin/python3",
    ];
    const found = candidates(
      ["/w"],
      host(
        files,
        { "/home/u/miniconda3/envs": ["b", "a"] },
        {
          CONDA_PREFIX: "/opt/conda/envs/torch",
          PATH: "/usr/local/bin:/usr/bin:/bin:/usr/local/bin",
        },
      ),
    );
    assert.deepEqual(
      found.map((c) => `${c.source} ${c.path}`),
      [
        "workspace /w/.venv/bin/python",
        "workspace /w/venv/bin/python",
        "conda /opt/conda/envs/torch/bin/python",
        "conda /home/u/miniconda3/bin/python",
        "conda /home/u/miniconda3/envs/a/bin/python",
        "PATH /usr/local/bin/python3",
        "PATH /usr/bin/python3",
      ],
    );
  });

  it("is empty where nothing exists", () => {
    assert.deepEqual(candidates(["/w"], host([], {}, { PATH: "/usr/bin" })), []);
  });
});

describe("the probe", () => {
  const venv = { path: "/w/.venv/bin/python", source: "workspace" as const };
  it("reads the versions, torch first in the ranking", () => {
    const withTorch = parseProbe(venv, "3.11.9\t2.13.0\t0.1.0\n");
    const without = parseProbe({ path: "/usr/bin/python3", source: "PATH" }, "3.12.3\t-\t-\n");
    assert.ok(withTorch !== undefined && without !== undefined);
    assert.equal(describeInterpreter(withTorch), "Python 3.11.9 · torch 2.13.0 · workspace");
    assert.equal(describeInterpreter(without), "Python 3.12.3 · no torch · PATH");
    assert.equal(without.kernelLens, null);
    assert.deepEqual(
      ranked([without, withTorch]).map((f) => f.path),
      ["/w/.venv/bin/python", "/usr/bin/python3"],
    );
  });

  it("rejects an answer that is not one", () => {
    assert.equal(parseProbe(venv, "Traceback (most recent call last):"), undefined);
  });
});

describe("splitForTrust", () => {
  const found = [
    { path: "/w/.venv/bin/python", source: "workspace" as const },
    { path: "/w/bin/python3", source: "PATH" as const },
    { path: "/usr/bin/python3", source: "PATH" as const },
  ];
  const inside = (file: string): boolean => file.startsWith("/w/");

  it("probes every candidate in a trusted workspace", () => {
    assert.deepEqual(splitForTrust(found, true, inside), { probe: found, held: [] });
  });

  it("lists the workspace's interpreters unprobed in Restricted Mode, whatever their source", () => {
    const { probe, held } = splitForTrust(found, false, inside);
    assert.deepEqual(
      probe.map((c) => c.path),
      ["/usr/bin/python3"],
    );
    assert.deepEqual(
      held.map((c) => c.path),
      ["/w/.venv/bin/python", "/w/bin/python3"],
    );
    assert.equal(HELD_DESCRIPTION, "in the workspace · runs once the folder is trusted");
  });

  it("runs the probe isolated: a csv.py or email/ of its working folder never runs", async () => {
    assert.deepEqual(probeVersionArgs().slice(0, 2), ["-I", "-c"]);
    const dir = mkdtempSync(path.join(tmpdir(), "kernel-lens-shadow-"));
    try {
      const marker = path.join(dir, "ran");
      const payload = `open(${JSON.stringify(marker)}, "w").close()\n`;
      writeFileSync(path.join(dir, "csv.py"), payload);
      mkdirSync(path.join(dir, "email"));
      writeFileSync(path.join(dir, "email", "__init__.py"), payload);
      const python = process.env["KERNEL_LENS_TEST_PYTHON"] ?? "python3";
      const found = await probeInterpreter({ path: python, source: "PATH" }, dir);
      assert.match(found?.python ?? "", /^3\.\d+\.\d+$/);
      assert.equal(existsSync(marker), false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
