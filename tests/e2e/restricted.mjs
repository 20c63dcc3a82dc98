/**
 * Workspace trust that holds (issue 45): a second code-server run whose workspace is opened in
 * Restricted Mode and never trusted. Started by `scripts/e2e.sh test` after run.mjs.
 *
 * The workspace (a copy of kernels/) is hostile, and everything of it that could run writes a
 * marker file outside it: a `.venv/bin/python` shim, and modules that shadow the standard
 * library's and pip's (`csv.py`, `email/__init__.py`, `pip/__main__.py`) in the folder
 * code-server is started in (the workspace itself). The user setting `kernelLens.python` is
 * `${workspaceFolder}/.venv/bin/python`. After every step that could run something, the marker
 * must be absent, or the scenario fails with what the marker recorded.
 *
 * Scenarios (KERNEL_LENS_E2E_SCENARIOS=90,91 runs a subset; none of 90-93 named: not run):
 *
 * 90. The server does not start on the workspace interpreter; the status item says why
 *     ("Restricted Mode: … is in the workspace; it runs once the folder is trusted"); it starts
 *     on python3 from PATH (outside the workspace) if that can run it. Scenarios 92 and 93 then
 *     set `kernelLens.python` to the test interpreter (outside) so that the server runs.
 * 91. Choose Interpreter (no Python extension in code-server) lists the workspace's .venv as
 *     "in the workspace · runs once the folder is trusted", unprobed.
 * 92. A trace file named `[Details](command:workbench.action.openSettings).pt.trace.json.gz`,
 *     big enough for the server's progress notification: the notification names the file, and
 *     no `a` element of the notifications has a `command:` href.
 * 93. Targets it was handed: kernelLens.showReport on /etc/passwd and kernelLens.profile on a
 *     file outside the workspace (keybindings with arguments) are refused; a Report panel whose
 *     webview state is forged to /etc/passwd (as a compromised webview would) is not restored
 *     after Reload Window, and no editor opens /etc/passwd.
 * 94. A crafted history: the workspace's `.kernel-lens/` holds a real run of square_three_ways
 *     whose device name is a Markdown image of a local beacon and a command link, and whose
 *     timing warning is another command link. The restored results show in Restricted Mode; a
 *     hover on `x**2` shows those strings as text: no `img`, no `a` with a `command:` href in
 *     the hover, and the beacon is never requested.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import http from "node:http";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import * as codeServer from "./codeserver.mjs";
import { keepKernelLensLogs, printResults } from "./common.mjs";
import { CHROMIUM_ARGS, playwright, Run } from "./ui.mjs";

const RUN_LIMIT_MS = 9 * 60_000;
const VIEWPORT = { width: 1400, height: 900 };
const THREE_WAYS = "def square_three_ways(x):";
const TRACE_NAME = "[Details](command:workbench.action.openSettings).pt.trace.json.gz";
/** Keybindings that run commands with arguments of anyone's making (scenario 93). */
const KEYS = {
  ownReport: ["ctrl+alt+shift+7", "Control+Alt+Shift+7"],
  passwdReport: ["ctrl+alt+shift+8", "Control+Alt+Shift+8"],
  outside: ["ctrl+alt+shift+9", "Control+Alt+Shift+9"],
};

function assert(condition, message) {
  if (!condition) throw new Error(message);
}

/**
 * The hostile workspace: the shim and the shadowing modules, each appending a line to
 * `marker` when it runs (the shim then runs the real interpreter, so nothing else changes).
 */
async function plant(workspace, marker) {
  const note = (what) =>
    `open(${JSON.stringify(marker)}, "a").write(${JSON.stringify(`${what} was imported\n`)})\n`;
  await mkdir(path.join(workspace, ".venv", "bin"), { recursive: true });
  const shim = path.join(workspace, ".venv", "bin", "python");
  await writeFile(
    shim,
    `#!/bin/sh\necho "the workspace's .venv/bin/python ran: $*" >> '${marker}'\nexec '${codeServer.PYTHON}' "$@"\n`,
  );
  await chmod(shim, 0o755);
  await writeFile(path.join(workspace, "csv.py"), note("the workspace's csv.py"));
  await mkdir(path.join(workspace, "email"), { recursive: true });
  await writeFile(path.join(workspace, "email", "__init__.py"), note("the workspace's email/"));
  await mkdir(path.join(workspace, "pip"), { recursive: true });
  await writeFile(path.join(workspace, "pip", "__init__.py"), note("the workspace's pip/"));
  await writeFile(path.join(workspace, "pip", "__main__.py"), note("the workspace's pip/__main__"));
}

/** Fails with what ran if the marker exists. */
async function assertNothingRan(r) {
  if (existsSync(r.marker)) {
    const text = await readFile(r.marker, "utf8").catch(() => "");
    throw new Error(`something of the untrusted workspace ran:\n${text.trim()}`);
  }
  r.log("    marker absent: nothing of the workspace ran");
}

/** A Chrome trace of about `events` events, the recorded H200 step repeated, gzipped. */
async function bigTrace(workspace, events) {
  const base = JSON.parse(
    await readFile(path.join(workspace, "matmul_relu.pt.trace.json"), "utf8"),
  );
  const timed = base.traceEvents.filter((e) => e.ph !== "M" && e.cat !== "Trace");
  const stamps = timed.filter((e) => typeof e.ts === "number");
  const t0 = Math.min(...stamps.map((e) => e.ts));
  const period = Math.max(...stamps.map((e) => e.ts + (e.dur ?? 0))) - t0 + 10;
  const out = base.traceEvents.filter((e) => e.ph === "M" || e.cat === "Trace");
  for (let k = 0; out.length < events; k++) {
    for (const e of timed) {
      out.push({ ...e, ts: typeof e.ts === "number" ? e.ts + k * period : e.ts });
    }
  }
  return gzipSync(JSON.stringify({ ...base, traceEvents: out }), { level: 1 });
}

/** Hovers the Kernel Lens status bar item and returns its tooltip's text. */
async function statusTooltip(r) {
  const item = r.page.locator(".part.statusbar .statusbar-item", { hasText: "Kernel Lens" });
  await item.first().hover();
  return r.until(
    "the Kernel Lens status item's tooltip",
    async () => {
      const hovers = await r.page
        .locator(".workbench-hover:visible, .monaco-hover:visible")
        .allInnerTexts();
      return hovers.find((t) => /Kernel Lens/.test(t)) ?? null;
    },
    10_000,
  );
}

/** Answers the trust dialog "No" if the window shows it (it asks at every start). */
async function answerTrustPrompt(r) {
  await r
    .until(
      "the trust dialog",
      async () => /trust the authors/.test((await r.dialogText()) ?? ""),
      20_000,
    )
    .then(() => r.dialogButton("No, I don't trust the authors"))
    .catch(() => r.log("    (no trust dialog)"));
}

/**
 * Sets the user setting `kernelLens.python` to the test interpreter (outside the workspace),
 * as a user would, and waits for the server to run on it: the lenses ask for trust.
 */
async function serverOutside(r) {
  const file = path.join(r.dataDir, "User", "settings.json");
  const settings = JSON.parse(await readFile(file, "utf8"));
  if (settings["kernelLens.python"] !== codeServer.PYTHON) {
    settings["kernelLens.python"] = codeServer.PYTHON;
    await writeFile(file, JSON.stringify(settings, null, 2));
    // code-server does not see the file change: the window reads it again as it reloads.
    await r.reloadWindow();
    await answerTrustPrompt(r);
  }
  await r.openFile("square.py");
  await r.gotoLine(await r.lineIn("square.py", THREE_WAYS));
  await r.waitLensAbove(THREE_WAYS, /Kernel Lens: trust this workspace to profile/, 90_000);
  await r.command("Notifications: Clear All Notifications");
}

/** `a` elements of the notifications (toasts and centre): `{href, text}`. */
async function notificationLinks(r) {
  return r.page
    .locator(".notifications-toasts a, .notifications-center a")
    .evaluateAll((nodes) =>
      nodes.map((n) => ({ href: n.getAttribute("href") ?? "", text: n.textContent ?? "" })),
    );
}

/**
 * A local HTTP server that counts the requests for `/beacon.png` (an image a hover would
 * fetch if a stored string became Markdown): `{url, hits(), close()}`.
 */
async function beacon() {
  const seen = [];
  const server = http.createServer((req, res) => {
    seen.push(req.url ?? "");
    res.writeHead(200, { "content-type": "image/png" });
    res.end();
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/beacon.png`,
    hits: () => seen.length,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/**
 * A crafted history in `workspace/.kernel-lens/`: a real CPU profile of square_three_ways (the
 * CLI, run outside the workspace before anything is planted in it) whose device name and
 * timing warning were rewritten into Markdown an attacker would store, recorded through the
 * history's own API. Returns the strings planted.
 */
function craftHistory(workspace, work, beaconUrl) {
  const square = path.join(workspace, "square.py");
  const device = `NVIDIA ![beacon](${beaconUrl}) [Open Settings](command:workbench.action.openSettings) <img src="${beaconUrl}?html">`;
  const warning = `noisy [Re-run](command:workbench.action.openSettings) ![w](${beaconUrl}?warning)`;
  const script = [
    "import json, sys",
    "from kernel_lens.history import record_run",
    "path, device, warning, root = sys.argv[1:5]",
    "result = json.load(sys.stdin)",
    "result['device'] = device",
    "timing = result.setdefault('timing', {})",
    "timing['warning'] = warning",
    "timing['warnings'] = [warning]",
    "text = open(path, encoding='utf-8').read()",
    "lines = text.splitlines()",
    "fn = lines[result['first_line'] - 1 : result['last_line']]",
    "record_run(path, result['function'], result, text=fn, file_text=text, compare_with=None, roots=[root])",
  ].join("\n");
  const profiled = execFileSync(
    codeServer.PYTHON,
    ["-m", "kernel_lens.cli", "profile", `${square}::square_three_ways`, "--json", "--no-history"],
    { cwd: work, encoding: "utf8", timeout: 240_000, maxBuffer: 64 << 20 },
  );
  execFileSync(codeServer.PYTHON, ["-I", "-c", script, square, device, warning, workspace], {
    cwd: work,
    input: profiled,
    encoding: "utf8",
    timeout: 60_000,
  });
  return { device, warning };
}

/** @type {{name: string, run: (r: Run) => Promise<void>}[]} */
export const RESTRICTED_SCENARIOS = [
  {
    name: "90. Restricted Mode: kernelLens.python in the workspace is not run, the status item says why",
    async run(r) {
      await r.step("square.py opens; the workspace's interpreter is not run", 60_000, async () => {
        await r.openFile("square.py");
        // The server starts on python3 from PATH where that can run it, else not at all (the
        // first-run notification then names that python3): either way after its probe.
        await r.until(
          "the server's start to settle",
          async () => !/\$\(loading|starting/.test(await r.statusBarText()),
          30_000,
        );
        await new Promise((resolve) => setTimeout(resolve, 3_000));
        await assertNothingRan(r);
      });
      await r.step(
        "the status item says why the setting's interpreter is not run",
        30_000,
        async () => {
          const tooltip = await statusTooltip(r);
          r.log(`    tooltip: ${tooltip.replace(/\s+/g, " ")}`);
          assert(
            /Restricted Mode: .*\.venv\/bin\/python is in the workspace; it runs once the folder is trusted/.test(
              tooltip.replace(/\s+/g, " "),
            ),
            `the status item does not say why: ${tooltip}`,
          );
          await r.shot("restricted-status-held");
          await r.parkMouse();
          await assertNothingRan(r);
        },
      );
    },
  },
  {
    name: "91. Restricted Mode: Choose Interpreter lists the workspace's .venv, unprobed",
    async run(r) {
      await r.step("the picker lists .venv as held, the others probed", 60_000, async () => {
        await r.command("Kernel Lens: Choose Interpreter");
        const picker = r.page.locator(".quick-input-widget");
        const rows = await r.until(
          "the interpreters in the picker",
          async () => {
            if (!(await picker.isVisible())) return null;
            const texts = await picker
              .locator(".quick-input-list .monaco-list-row")
              .allInnerTexts();
            return texts.some((t) => /Python \d+\.\d+\.\d+ · /.test(t)) ? texts : null;
          },
          30_000,
        );
        const flat = rows.map((t) => t.replace(/\s+/g, " "));
        r.log(`    ${flat.join(" | ")}`);
        const venv = flat.find((t) => /\.venv\/bin\/python/.test(t));
        assert(venv !== undefined, "the workspace's .venv is not listed");
        assert(
          /in the workspace · runs once the folder is trusted/.test(venv),
          `the .venv entry is not marked as held: ${venv}`,
        );
        assert(!/Python \d/.test(venv), `the .venv entry was probed: ${venv}`);
        await r.shot("restricted-choose-interpreter");
        await r.page.keyboard.press("Escape");
        // The probes of the other candidates have answered (the list is shown): had one run
        // with the workspace as its working folder, csv.py or email/ would have been imported.
        await assertNothingRan(r);
      });
    },
  },
  {
    name: "92. Restricted Mode: a trace file named as a command link shows as text in the notification",
    async run(r) {
      await r.step("the server runs on an interpreter outside the workspace", 120_000, async () => {
        await serverOutside(r);
        await assertNothingRan(r);
      });
      await r.step("write the trace into the workspace", 60_000, async () => {
        const data = await bigTrace(r.workspace, 120_000);
        await writeFile(path.join(r.workspace, TRACE_NAME), data);
        r.log(`    ${TRACE_NAME}: ${(data.length / 1e6).toFixed(1)} MB gzipped`);
      });
      await r.step("its reading progress names it, with no link", 120_000, async () => {
        await r.command("View: Close All Editor Groups");
        await r.openFromExplorer(TRACE_NAME);
        const toast = await r.until(
          "the reading progress notification",
          async () =>
            (await r.toastTexts()).find((t) => /Reading .*\.pt\.trace\.json\.gz/.test(t)) ?? null,
          90_000,
          100,
        );
        const links = await notificationLinks(r);
        r.log(`    toast: ${toast}`);
        r.log(`    links in the notifications: ${JSON.stringify(links)}`);
        await new Promise((resolve) => setTimeout(resolve, 600)); // the toast's fade-in
        await r.shot("restricted-trace-name-notification");
        assert(
          toast.replace(/\u200b/g, "").includes(`Reading ${TRACE_NAME}`),
          `the notification does not show the name as text: ${toast}`,
        );
        const commands = links.filter((l) => /^\s*command:/i.test(l.href) || l.text === "Details");
        assert(commands.length === 0, `a link in the notification: ${JSON.stringify(commands)}`);
      });
      await r.step("close the viewer", 20_000, async () => {
        await r.command("View: Close All Editor Groups");
        await assertNothingRan(r);
      });
    },
  },
  {
    name: "93. Restricted Mode: targets it was handed (forged report state, command arguments) open and run nothing",
    async run(r) {
      const tabs = () => r.page.locator(".tabs-container .tab").allInnerTexts();
      await r.step("the server runs on an interpreter outside the workspace", 120_000, async () => {
        await serverOutside(r);
      });
      await r.step("kernelLens.showReport on /etc/passwd is refused", 30_000, async () => {
        await r.openFile("square.py");
        await r.page.keyboard.press(KEYS.passwdReport[1]);
        const toast = await r.until(
          "the refusal",
          async () => (await r.toastTexts()).find((t) => /no report: .*passwd/.test(t)) ?? null,
          15_000,
        );
        r.log(`    ${toast}`);
        assert((await r.webviews()).length === 0, "a Kernel Lens webview opened");
        assert(!(await tabs()).some((t) => /passwd/.test(t)), "an editor shows passwd");
      });
      await r.step(
        "kernelLens.profile on a file outside the workspace is refused",
        30_000,
        async () => {
          await r.page.keyboard.press(KEYS.outside[1]);
          const toast = await r.until(
            "the refusal",
            async () =>
              (await r.toastTexts()).find((t) =>
                /kernelLens\.profile refused: .*outside\.py/.test(t),
              ) ?? null,
            15_000,
          );
          r.log(`    ${toast}`);
          await r.shot("restricted-targets-refused");
          await assertNothingRan(r);
          await r.command("Notifications: Clear All Notifications");
        },
      );
      /**
       * As a compromised webview would (its script holds the VS Code API): its saved state names
       * `target`. The content frame has no `parent` any more; its host frame relays the state.
       */
      const forge = async (view, target) => {
        // After the report came (the webview saves its own target when it does).
        await r.until(
          "the report panel to finish loading",
          async () => {
            const now = (await r.webviews()).find((v) => v.frame === view.frame);
            return now !== undefined && !/Loading the report/.test(now.text);
          },
          60_000,
        );
        // The panel saves its own target again with each report it is sent (a restored window
        // sends one more as its editors come back; late on a loaded machine): forge once the
        // tabs have settled, and again after a pause, so that the last state saved is ours.
        let last = "";
        let still = 0;
        await r.until(
          "the tabs to settle",
          async () => {
            const now = (await tabs()).join(" | ");
            still = now === last ? still + 1 : 0;
            last = now;
            return still >= 3;
          },
          30_000,
          500,
        );
        for (const pause of [2000, 1500]) {
          await view.frame.parentFrame().evaluate((t) => {
            window.__vscode_post_message__("do-update-state", JSON.stringify({ target: t }));
          }, target);
          await new Promise((resolve) => setTimeout(resolve, pause));
        }
      };
      const square = `file://${path.join(r.workspace, "square.py")}`;
      await r.step(
        "control: a report panel whose state names a workspace file comes back after Reload Window",
        120_000,
        async () => {
          await r.page.keyboard.press(KEYS.ownReport[1]);
          const view = await r.waitWebview("the report panel", (v) => v.mode === "report", 30_000);
          await forge(view, { uri: square, function: "square_three_ways" });
          await r.reloadWindow();
          await answerTrustPrompt(r);
          const restored = await r.waitWebview(
            "the restored report panel",
            (v) => v.mode === "report",
            45_000,
          );
          r.log(`    restored: ${(await tabs()).map((t) => t.replace(/\s+/g, " ")).join(" | ")}`);
          await r.shot("restricted-report-restored-control");
          // As a compromised webview would: its saved state names another target.
          await forge(restored, { uri: "file:///etc/passwd", function: "passwd" });
        },
      );
      await r.step(
        "forged to /etc/passwd: after Reload Window no panel, no passwd",
        120_000,
        async () => {
          await r.reloadWindow();
          await answerTrustPrompt(r);
          await r.until("the restored editors", async () => (await tabs()).length > 0, 30_000);
          // The panel's serializer answers as the window restores its editors.
          await new Promise((resolve) => setTimeout(resolve, 8_000));
          const shown = await tabs();
          r.log(`    tabs: ${shown.map((t) => t.replace(/\s+/g, " ")).join(" | ")}`);
          await r.shot("restricted-report-forged-state");
          assert(!shown.some((t) => /passwd/.test(t)), `restored from the forged state: ${shown}`);
          assert((await r.webviews()).length === 0, "a Kernel Lens webview was restored");
          await assertNothingRan(r);
        },
      );
    },
  },
  {
    name: "94. Restricted Mode: a crafted history's strings show as text in the hover (no image fetched, no command link)",
    async run(r) {
      await r.step("the server runs on an interpreter outside the workspace", 120_000, async () => {
        await serverOutside(r);
      });
      await r.step(
        "the restored run's hover on x**2 shows the stored strings as text",
        90_000,
        async () => {
          await r.openFile("square.py");
          await r.gotoLine(await r.lineIn("square.py", "c = x**2"));
          const text = await r.until(
            "the restored run's hover",
            async () => {
              await r.hoverOn("c = x**2", "x**2");
              const shown = await r.hoverText();
              return shown !== null && /aten::pow/.test(shown) ? shown : null;
            },
            60_000,
            500,
          );
          const hover = r.page.locator(".monaco-hover:visible").first();
          const images = await hover.locator("img").count();
          const links = await hover.locator("a").evaluateAll((nodes) =>
            nodes.map((n) => ({
              href: n.getAttribute("href") ?? n.getAttribute("data-href") ?? "",
              text: n.textContent ?? "",
            })),
          );
          r.log(`    hover: ${text.replace(/\s+/g, " ").slice(0, 400)}`);
          r.log(`    links in the hover: ${JSON.stringify(links)}`);
          await new Promise((resolve) => setTimeout(resolve, 1_500)); // an image would load by now
          await r.shot("restricted-crafted-history-hover");
          assert(images === 0, `the hover holds ${images} image(s)`);
          const commands = links.filter(
            (l) => /command:/i.test(l.href) && !/command:kernelLens\.profile\b/.test(l.href),
          );
          assert(
            commands.length === 0,
            `a stored string became a link: ${JSON.stringify(commands)}`,
          );
          assert(
            text.includes("Open Settings") && text.includes("beacon"),
            `the stored strings are not shown as text: ${text}`,
          );
          assert(r.beacon.hits() === 0, `the hover fetched the beacon ${r.beacon.hits()} time(s)`);
          await r.parkMouse();
          await assertNothingRan(r);
        },
      );
    },
  },
];

// ---- the run ------------------------------------------------------------------------------

const only = (process.env.KERNEL_LENS_E2E_SCENARIOS ?? "").split(",").filter(Boolean);
const selected = RESTRICTED_SCENARIOS.filter(
  (s) => only.length === 0 || only.includes(s.name.split(".")[0]),
);
if (selected.length === 0) {
  console.log("[e2e] Restricted Mode run: no scenario of it selected");
  process.exit(0);
}

const outDir = path.join(
  process.env.KERNEL_LENS_E2E_OUT ?? (await mkdtemp(path.join(os.tmpdir(), "kernel-lens-e2e-"))),
  "restricted",
);
await mkdir(outDir, { recursive: true });
console.log(`[e2e] Restricted Mode run: screenshots and logs in ${outDir}`);
const work = await mkdtemp(path.join(os.tmpdir(), "kernel-lens-e2e-restricted-"));
const marker = path.join(work, "MARKER");
const startedAt = Date.now();
const results = [];
let server = null;
let browser = null;
let run = null;
let beaconServer = null;

async function finish(fatal) {
  if (fatal) {
    results.push({
      name: run?.scenario || "start-up",
      ok: false,
      step: run?.stepName ?? "",
      error: String(fatal?.message ?? fatal),
    });
    if (run) await run.shot("FAILED").catch(() => {});
  }
  await keepKernelLensLogs(work, outDir).catch(() => {});
  await browser?.close().catch(() => {});
  await server?.stop();
  await beaconServer?.close().catch(() => {});
  const passed = results.filter((r) => r.ok).length;
  const failed = results.length - passed;
  if (failed === 0) await rm(work, { recursive: true, force: true });
  else console.error(`[e2e] workspace and code-server data kept in ${work}`);
  console.log("");
  printResults(results);
  console.log(`[e2e] screenshots and logs: ${outDir}`);
  console.log(
    `Restricted Mode: ${passed} passed, ${failed} failed in ${((Date.now() - startedAt) / 1000).toFixed(0)} s`,
  );
  process.exit(failed > 0 || fatal ? 1 : 0);
}

const deadline = setTimeout(
  () => void finish(new Error(`the run passed its limit of ${RUN_LIMIT_MS / 60_000} min`)),
  RUN_LIMIT_MS,
);
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => void finish(new Error(`interrupted by ${signal}`)));
}

try {
  const dirs = await codeServer.prepare(work, { trusted: false });
  // Before anything is planted: the CLI's own run must not be the one that imports them.
  beaconServer = await beacon();
  if (selected.some((s) => s.name.startsWith("94."))) {
    craftHistory(dirs.workspace, work, beaconServer.url);
    console.log("[e2e] crafted history written to .kernel-lens/");
  }
  await plant(dirs.workspace, marker);
  const settingsFile = path.join(dirs.dataDir, "User", "settings.json");
  const settings = JSON.parse(await readFile(settingsFile, "utf8"));
  settings["kernelLens.python"] = "${workspaceFolder}/.venv/bin/python";
  await writeFile(settingsFile, JSON.stringify(settings, null, 2));
  const square = path.join(dirs.workspace, "square.py");
  await writeFile(
    path.join(dirs.dataDir, "User", "keybindings.json"),
    JSON.stringify([
      {
        key: KEYS.ownReport[0],
        command: "kernelLens.showReport",
        args: { uri: `file://${square}`, function: "square_three_ways" },
      },
      {
        key: KEYS.passwdReport[0],
        command: "kernelLens.showReport",
        args: { uri: "file:///etc/passwd", function: "passwd" },
      },
      {
        key: KEYS.outside[0],
        command: "kernelLens.profile",
        args: { uri: `file://${path.join(work, "outside.py")}`, function: "f" },
      },
    ]),
  );
  await writeFile(
    path.join(work, "outside.py"),
    `open(${JSON.stringify(marker)}, "a").write("outside.py ran\\n")\ndef f():\n    pass\n`,
  );
  console.log(`[e2e] ${codeServer.installExtension(dirs).split("\n").pop()}`);
  // Started in the workspace: its modules would shadow an interpreter's run there.
  server = await codeServer.start(dirs, {
    logFile: path.join(outDir, "code-server.log"),
    cwd: dirs.workspace,
  });

  console.log(`[e2e] code-server pid ${server.pid} at ${server.url}`);
  browser = await playwright().chromium.launch({
    executablePath: process.env.KERNEL_LENS_E2E_CHROMIUM ?? "/usr/bin/chromium",
    args: CHROMIUM_ARGS,
    headless: process.env.KERNEL_LENS_E2E_HEADED !== "1",
  });
  const page = await browser.newPage({ viewport: VIEWPORT });
  run = new Run(page, outDir, dirs.workspace);
  run.url = server.url;
  run.marker = marker;
  run.beacon = beaconServer;
  run.dataDir = dirs.dataDir;
  run.scenario = "start-up";
  await run.step("the folder opens untrusted (and stays so)", 120_000, async () => {
    await run.open(run.url);
    await run.until(
      "the workspace trust dialog",
      async () => /trust the authors/.test((await run.dialogText()) ?? ""),
      90_000,
    );
    await run.shot("restricted-trust-prompt");
    await run.dialogButton("No, I don't trust the authors");
    await run.until("Restricted Mode in the status bar", async () =>
      (await run.statusBarText()).includes("Restricted Mode"),
    );
  });
  for (const scenario of selected) {
    run.scenario = scenario.name;
    run.stepName = "";
    run.log(`scenario ${scenario.name}`);
    const began = Date.now();
    try {
      await scenario.run(run);
      results.push({ name: scenario.name, ok: true, seconds: (Date.now() - began) / 1000 });
    } catch (error) {
      results.push({
        name: scenario.name,
        ok: false,
        step: run.stepName,
        error: String(error?.message ?? error),
        seconds: (Date.now() - began) / 1000,
      });
      console.error(
        `[e2e] FAILED  ${scenario.name} at "${run.stepName}": ${error?.message ?? error}`,
      );
      await run.shot("FAILED").catch(() => {});
      run.epoch += 1;
      await Promise.race([
        run.closeEverything(),
        new Promise((resolve) => setTimeout(resolve, 20_000)),
      ]).catch(() => {});
    }
  }
  clearTimeout(deadline);
  await finish(null);
} catch (error) {
  clearTimeout(deadline);
  await finish(error);
}
