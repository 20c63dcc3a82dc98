import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import {
  bundledLibs,
  expandVariables,
  findWheel,
  lastLine,
  pipInstallArgs,
  probeServer,
  resolveRelative,
  earlyAgentEnv,
  serverEnv,
  terminalText,
} from "../../extension/python";

/** The interpreter the probe tests run; any Python >= 3.10 without kernel_lens installed. */
const PYTHON = process.env["KERNEL_LENS_TEST_PYTHON"] ?? "python3";

describe("serverEnv", () => {
  it("prepends the bundled libs to PYTHONPATH and unbuffers Python", () => {
    const env = serverEnv("/ext", { PATH: "/bin", PYTHONPATH: "/mine" });
    assert.deepEqual(env, {
      PATH: "/bin",
      PYTHONPATH: [path.join("/ext", "bundled", "libs"), "/mine"].join(path.delimiter),
      PYTHONUNBUFFERED: "1",
    });
  });

  it("adds no empty PYTHONPATH entry", () => {
    assert.equal(serverEnv("/ext", { PYTHONPATH: "" })["PYTHONPATH"], bundledLibs("/ext"));
    assert.equal(serverEnv("/ext", {})["PYTHONPATH"], bundledLibs("/ext"));
  });

  it("leaves the given environment alone", () => {
    const base = { PYTHONPATH: "/mine" };
    serverEnv("/ext", base);
    assert.deepEqual(base, { PYTHONPATH: "/mine" });
  });
});

describe("expandVariables", () => {
  const vars = { workspaceFolder: "/ws", userHome: "/home/u", env: { VENV: "/venvs/a" } };

  it("expands the variables VS Code users write in path settings", () => {
    assert.equal(
      expandVariables("${workspaceFolder}/.venv/bin/python", vars),
      "/ws/.venv/bin/python",
    );
    assert.equal(expandVariables("${userHome}/py", vars), "/home/u/py");
    assert.equal(expandVariables("${env:VENV}/bin/python", vars), "/venvs/a/bin/python");
    assert.equal(expandVariables("~/py/bin/python", vars), "/home/u/py/bin/python");
  });

  it("leaves plain paths, unknown variables and a missing folder as written", () => {
    assert.equal(expandVariables("/usr/bin/python3", vars), "/usr/bin/python3");
    assert.equal(expandVariables("${config:x}", vars), "${config:x}");
    assert.equal(
      expandVariables("${workspaceFolder}/py", { userHome: "/h", env: {} }),
      "${workspaceFolder}/py",
    );
    assert.equal(expandVariables("a~/b", vars), "a~/b");
  });
});

describe("resolveRelative", () => {
  it("resolves a relative path against the workspace folder", () => {
    assert.equal(
      resolveRelative(path.join(".venv", "bin", "python"), path.resolve("/ws")),
      path.resolve("/ws", ".venv", "bin", "python"),
    );
  });

  it("leaves absolute paths, bare command names and folder-less workspaces alone", () => {
    const absolute = path.resolve("/usr/bin/python3");
    assert.equal(resolveRelative(absolute, "/ws"), absolute);
    assert.equal(resolveRelative("python3", "/ws"), "python3");
    assert.equal(resolveRelative("py/python", undefined), "py/python");
  });
});

describe("lastLine", () => {
  it("takes the exception line of a traceback", () => {
    const traceback =
      "Traceback (most recent call last):\n  File \"<string>\", line 1\nModuleNotFoundError: No module named 'pandas'\n\n";
    assert.equal(lastLine(traceback), "ModuleNotFoundError: No module named 'pandas'");
    assert.equal(lastLine(""), "");
  });
});

describe("probeServer", () => {
  let root: string;

  /** A fake extension folder whose bundled kernel_lens/lsp/__init__.py holds `source`. */
  function extensionWith(name: string, source: string): string {
    const ext = path.join(root, name);
    const lsp = path.join(bundledLibs(ext), "kernel_lens", "lsp");
    mkdirSync(lsp, { recursive: true });
    writeFileSync(path.join(bundledLibs(ext), "kernel_lens", "__init__.py"), "");
    writeFileSync(path.join(lsp, "__init__.py"), source);
    return ext;
  }

  async function probe(ext: string, timeoutMs = 20_000, python = PYTHON) {
    return probeServer(python, serverEnv(ext, process.env), bundledLibs(ext), timeoutMs);
  }

  before(() => {
    root = mkdtempSync(path.join(tmpdir(), "kernel-lens-probe-"));
  });

  after(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it("passes when the bundled server imports", async () => {
    assert.deepEqual(await probe(extensionWith("ok", "")), { ok: true });
  });

  it("names the missing module when the import fails", async () => {
    const result = await probe(extensionWith("missing", "import kernel_lens_no_such_dependency\n"));
    assert.equal(result.ok, false);
    assert.ok(!result.ok);
    assert.equal(result.failure, "import-error");
    assert.equal(
      result.reason,
      "ModuleNotFoundError: No module named 'kernel_lens_no_such_dependency'",
    );
    assert.match(result.detail, /^Traceback/);
  });

  it("imports nothing from its working folder (a workspace's csv.py)", async () => {
    const ext = extensionWith("isolated", "import csv\n");
    const cwd = path.join(root, "hostile");
    mkdirSync(path.join(cwd, "kernel_lens"), { recursive: true });
    const marker = path.join(root, "hostile-ran");
    const payload = `open(${JSON.stringify(marker)}, "w").close()\nraise SystemExit(9)\n`;
    writeFileSync(path.join(cwd, "kernel_lens", "__init__.py"), payload);
    writeFileSync(path.join(cwd, "csv.py"), payload);
    const result = await probeServer(PYTHON, serverEnv(ext, process.env), cwd, 20_000);
    assert.deepEqual(result, { ok: true });
    assert.equal(existsSync(marker), false);
  });

  it("kills an import that hangs", async () => {
    const result = await probe(extensionWith("hang", "import time\ntime.sleep(30)\n"), 300);
    assert.ok(!result.ok);
    assert.equal(result.failure, "timeout");
  });

  it("reports an interpreter that does not exist", async () => {
    const result = await probe(extensionWith("absent", ""), 5_000, path.join(root, "no-python"));
    assert.ok(!result.ok);
    assert.equal(result.failure, "not-found");
    assert.match(result.reason, /no-python" was not found or cannot be run \(ENOENT\)/);
  });

  it("reports an interpreter that is too old", { skip: process.platform === "win32" }, async () => {
    // Stands in for Python 3.9: exits as the probe script does on an old version.
    const fake = path.join(root, "python3.9");
    writeFileSync(
      fake,
      '#!/bin/sh\necho "Python 3.9 is too old: Kernel Lens needs Python 3.10 or newer" >&2\nexit 3\n',
    );
    chmodSync(fake, 0o755);
    const result = await probe(extensionWith("old", ""), 5_000, fake);
    assert.ok(!result.ok);
    assert.equal(result.failure, "too-old");
    assert.equal(result.reason, "Python 3.9 is too old: Kernel Lens needs Python 3.10 or newer");
  });
});

describe("findWheel", () => {
  it("finds the bundled wheel, or nothing", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "kernel-lens-wheel-"));
    try {
      assert.equal(findWheel(dir), undefined);
      assert.equal(findWheel(path.join(dir, "absent")), undefined);
      writeFileSync(path.join(dir, "kernel_lens-0.1.0-py3-none-any.whl"), "");
      writeFileSync(path.join(dir, "other-1.0-py3-none-any.whl"), "");
      assert.equal(findWheel(dir), path.join(dir, "kernel_lens-0.1.0-py3-none-any.whl"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("installs the wheel with pip, dependencies included", () => {
    assert.deepEqual(pipInstallArgs("/ext/bundled/k.whl"), [
      "-I",
      "-m",
      "pip",
      "install",
      "/ext/bundled/k.whl",
    ]);
  });
});

describe("terminalText", () => {
  it("ends lines with CR LF, keeping progress-bar carriage returns", () => {
    assert.equal(terminalText("a\nb\r\nc\rd"), "a\r\nb\r\nc\rd");
  });
});

describe("earlyAgentEnv", () => {
  it("asks for the early agent only in a trusted workspace with the default agent", () => {
    assert.deepEqual(earlyAgentEnv({ trusted: true, agentCommand: [], folder: "/ws" }), {
      KERNEL_LENS_EARLY_AGENT: "1",
      KERNEL_LENS_EARLY_AGENT_CWD: "/ws",
    });
    assert.deepEqual(earlyAgentEnv({ trusted: true, agentCommand: [], folder: undefined }), {
      KERNEL_LENS_EARLY_AGENT: "1",
    });
    assert.deepEqual(earlyAgentEnv({ trusted: false, agentCommand: [], folder: "/ws" }), {});
    assert.deepEqual(
      earlyAgentEnv({ trusted: true, agentCommand: ["ssh", "gpu", "python3"], folder: "/ws" }),
      {},
    );
    assert.deepEqual(earlyAgentEnv(undefined), {});
  });
});
