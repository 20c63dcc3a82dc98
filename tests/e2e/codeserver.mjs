/**
 * A private code-server for the editor end-to-end tests and scripts/try.sh: a copy of kernels/
 * as the workspace, preset user settings, the packaged .vsix installed, loopback only, no auth.
 */
import { spawn, spawnSync } from "node:child_process";
import { createWriteStream } from "node:fs";
import { chmod, copyFile, cp, mkdir, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** The cache that `scripts/e2e.sh setup` fills (code-server, playwright-core). */
export const CACHE = process.env.E2E_CACHE ?? path.join(ROOT, ".e2e-cache");

const CODE_SERVER = path.join(CACHE, "node_modules", ".bin", "code-server");

/** The interpreter that runs the Kernel Lens server and agent. */
export const PYTHON =
  process.env.KERNEL_LENS_E2E_PYTHON ?? path.join(ROOT, ".venv", "bin", "python");

/** The packaged extension under test. */
export const VSIX = path.join(ROOT, "dist", "kernel-lens.vsix");

/**
 * User settings: quiet start (no welcome page, tips, telemetry or update prompts) and the
 * extension's settings; `forTest`: a short timing budget (a CPU profile takes seconds) and a
 * job time limit (45 s) below the 60 s sleep of fixtures/slow.py, so a cancel that did not
 * work shows as a timeout, not as a result.
 */
export function userSettings({ trusted, forTest }) {
  const test = forTest
    ? { "kernelLens.timing.budgetMs": 100, "kernelLens.timeoutSeconds": 45 }
    : {};
  return {
    "workbench.startupEditor": "none",
    "workbench.welcomePage.walkthroughs.openOnInstall": false,
    "workbench.tips.enabled": false,
    "workbench.enableExperiments": false,
    "workbench.editor.enablePreview": false,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.ignoreRecommendations": true,
    "extensions.autoCheckUpdates": false,
    "extensions.autoUpdate": false,
    "chat.commandCenter.enabled": false,
    "git.enabled": false,
    "editor.minimap.enabled": false,
    "editor.unicodeHighlight.ambiguousCharacters": false,
    "editor.occurrencesHighlight": "off",
    "editor.hover.delay": 300,
    "files.autoSave": "off",
    "security.workspace.trust.startupPrompt": "always",
    "security.workspace.trust.enabled": !trusted,
    "kernelLens.python": PYTHON,
    ...test,
  };
}

/**
 * Profiler output recorded on an H200 (tests/data/h200/, see its README), copied into the
 * workspace under these names so that the custom editors can be opened from the explorer.
 */
export const RECORDED_FILES = {
  "triton_fused_full.ncu-rep": "tests/data/h200/triton_fused_full.ncu-rep",
  // The report's kernel file, for its source counters on the kernel's lines: scenario 160.
  "triton_fused_kernel.py": "tests/data/h200/triton_fused_kernel.py",
  // A planted strided read and its report (tests/data/inside/h200): the blame, scenario 164.
  "tl_strided.py": "tests/data/inside/tl_strided.py",
  "tl_strided.ncu-rep": "tests/data/inside/h200/tl_strided.ncu-rep",
  "matmul_relu.pt.trace.json": "tests/data/h200/matmul_relu_trace.json",
  // Shaped like the public Triton tutorials (GPU-only at module level): scenario 41.
  "tutorial_add.py": "tests/data/gpu_only/vector_add_cuda.py",
  // Trains the "installed" tinymodel (on PYTHONPATH, outside the workspace): scenario 70.
  "tiny_train.py": "tests/data/examples/installed/train.py",
  "tiny_step.py": "tests/data/examples/installed/step.py",
  // Real traces of other eras and devices (tests/data/real_traces/README.md): scenario 49.
  "resnet50_2021.pt.trace.json.gz":
    "tests/data/real_traces/kineto_2021-01_v100_resnet50_excerpt.json.gz",
  "mtia_inference.pt.trace.json.gz": "tests/data/real_traces/hta_mtia_inference_excerpt.json.gz",
};

/** Free TCP port on 127.0.0.1 (closed again before code-server takes it). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Lays out `base`: `kernels/` (a copy of the repo's kernels/ and of {@link RECORDED_FILES}, plus
 * tests/e2e/fixtures/*.py and settings for a test unless `forTest` is false), `trusted`: workspace trust off or on,
 * `data/User/settings.json`, `data/ext` and `config.yaml` (so ~/.config/code-server is untouched).
 *
 * @returns {Promise<{workspace: string, dataDir: string, extDir: string, config: string, sitePackages: string | null, tritonCache: string | null}>}
 */
export async function prepare(base, { trusted, forTest = true }) {
  const workspace = path.join(base, "kernels");
  const dataDir = path.join(base, "data");
  const extDir = path.join(dataDir, "ext");
  const config = path.join(base, "config.yaml");
  await cp(path.join(ROOT, "kernels"), workspace, {
    recursive: true,
    filter: (src) => !src.includes("__pycache__"),
  });
  if (forTest) {
    await cp(path.join(ROOT, "tests", "e2e", "fixtures"), workspace, { recursive: true });
  }
  for (const [name, from] of Object.entries(RECORDED_FILES)) {
    await copyFile(path.join(ROOT, from), path.join(workspace, name));
    await chmod(path.join(workspace, name), 0o644);
  }
  await mkdir(path.join(dataDir, "User"), { recursive: true });
  await mkdir(extDir, { recursive: true });
  await writeFile(
    path.join(dataDir, "User", "settings.json"),
    JSON.stringify(userSettings({ trusted, forTest }), null, 2),
  );
  await writeFile(config, "auth: none\ncert: false\n");
  // A package "installed" outside the workspace, as pip would (scenario 70): code-server (and
  // so the server and the agent) gets its folder on PYTHONPATH.
  const sitePackages = path.join(base, "env", "site-packages");
  if (forTest) {
    await cp(
      path.join(ROOT, "tests", "data", "examples", "installed", "tinymodel"),
      path.join(sitePackages, "tinymodel"),
      { recursive: true },
    );
  }
  // Triton's cache as the machine that recorded tl_strided.ncu-rep left it: the blame finds the
  // binary that ran there (its cubin) by its instructions (scenario 164).
  const tritonCache = path.join(base, "env", "triton-cache");
  if (forTest) {
    const entry = path.join(tritonCache, "e2e-recorded");
    await mkdir(entry, { recursive: true });
    await copyFile(
      path.join(ROOT, "tests", "data", "inside", "h200", "triton", "strided_sum_kernel.cubin"),
      path.join(entry, "strided_sum_kernel.cubin"),
    );
  }
  return {
    workspace,
    dataDir,
    extDir,
    config,
    sitePackages: forTest ? sitePackages : null,
    tritonCache: forTest ? tritonCache : null,
  };
}

function baseArgs(dirs) {
  return [
    "--config",
    dirs.config,
    "--user-data-dir",
    dirs.dataDir,
    "--extensions-dir",
    dirs.extDir,
  ];
}

/** Installs the .vsix into the private extensions folder (throws with the CLI's output). */
export function installExtension(dirs, vsix = VSIX) {
  const run = spawnSync(CODE_SERVER, [...baseArgs(dirs), "--install-extension", vsix, "--force"], {
    encoding: "utf8",
    timeout: 120_000,
  });
  if (run.status !== 0) {
    throw new Error(
      `code-server --install-extension ${vsix} exited ${run.status}:\n${run.stdout}${run.stderr}`,
    );
  }
  return run.stdout.trim();
}

/**
 * Starts code-server in its own process group on 127.0.0.1 (in `cwd`, with `env` added to
 * this process's environment) and waits for /healthz.
 *
 * @returns {Promise<{url: string, port: number, pid: number, stop: () => Promise<void>}>}
 */
export async function start(
  dirs,
  { logFile, port, extraArgs = [], timeoutMs = 60_000, cwd, env = {} } = {},
) {
  const bindPort = port ?? (await freePort());
  const args = [
    ...baseArgs(dirs),
    "--auth",
    "none",
    "--bind-addr",
    `127.0.0.1:${bindPort}`,
    "--disable-telemetry",
    "--disable-update-check",
    "--disable-getting-started-override",
    "--ignore-last-opened",
    ...extraArgs,
    dirs.workspace,
  ];
  const child = spawn(CODE_SERVER, args, {
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    // `cwd`: the folder the editor is started in (the Restricted Mode run starts it in the
    // workspace, whose modules must then never shadow an interpreter's).
    ...(cwd === undefined ? {} : { cwd }),
    env: {
      ...process.env,
      PASSWORD: "",
      ...(dirs.sitePackages
        ? {
            PYTHONPATH: [dirs.sitePackages, process.env.PYTHONPATH]
              .filter((p) => p !== undefined && p !== "")
              .join(path.delimiter),
          }
        : {}),
      ...(dirs.tritonCache ? { TRITON_CACHE_DIR: dirs.tritonCache } : {}),
      ...env,
    },
  });
  if (logFile) {
    const out = createWriteStream(logFile);
    child.stdout.pipe(out);
    child.stderr.pipe(out);
  } else {
    child.stdout.pipe(process.stdout);
    child.stderr.pipe(process.stderr);
  }
  let exited = null;
  const exitedPromise = new Promise((resolve) =>
    child.on("exit", (code, signal) => {
      exited = { code, signal };
      resolve(exited);
    }),
  );
  const pid = child.pid;
  /** Stops code-server and everything it started (its process group), by its PID. */
  const stop = async () => {
    if (exited !== null) return;
    for (const [signal, waitMs] of [
      ["SIGTERM", 5_000],
      ["SIGKILL", 5_000],
    ]) {
      try {
        process.kill(-pid, signal);
      } catch {
        return;
      }
      const done = await Promise.race([
        exitedPromise,
        new Promise((resolve) => setTimeout(() => resolve(null), waitMs)),
      ]);
      if (done !== null) {
        // The extension host, language server and agent are in the same group.
        try {
          process.kill(-pid, "SIGKILL");
        } catch {
          /* already gone */
        }
        return;
      }
    }
  };
  const url = `http://127.0.0.1:${bindPort}/?folder=${encodeURIComponent(dirs.workspace)}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exited !== null) {
      throw new Error(`code-server exited at start-up (${JSON.stringify(exited)}); see ${logFile}`);
    }
    try {
      const res = await fetch(`http://127.0.0.1:${bindPort}/healthz`);
      if (res.ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`code-server did not answer /healthz within ${timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return { url, port: bindPort, pid, stop };
}
