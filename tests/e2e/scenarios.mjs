/**
 * The editor end-to-end scenarios, in the order they run (each builds on the state the one before
 * left: trust granted, square.py profiled). Every step has a time limit and asserts on what the
 * editor shows; screenshots are numbered across the run.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";

/** What the summary lens of a CPU run looks like: `0.131 ms ±0.6% · 3 ops · CPU` (or `4.80 µs ±…`). */
const SUMMARY = /\d (ms|µs) ±[\d.]+%.*CPU/;
/** A result of any kind (summary, per-line op, failure) rather than a Profile/trust link. */
const ANY_RESULT = /(ms|µs) ±|aten::|Profile failed|Profile cancelled/;
/** A row of lenses (links joined by " | ") with a plain `Profile` link among them. */
const PROFILE_LINK = /(?:^|\|\s*)Profile(?:\s*\||$)/;
/** The first profile starts the server's agent and imports torch. */
const FIRST_PROFILE_MS = 120_000;
const PROFILE_MS = 90_000;

const THREE_WAYS = "def square_three_ways(x):";
const SQUARE_POW = "def square_pow(x):";

function assert(condition, message) {
  if (!condition) throw new Error(message);
}

/** @typedef {import('./ui.mjs').Run} Run */

/** @type {{name: string, run: (r: Run) => Promise<void>}[]} */
export const SCENARIOS = [
  {
    name: "1. untrusted workspace, then trust and profile square_three_ways",
    async run(r) {
      await r.step("the workbench asks whether to trust the folder", 90_000, async () => {
        await r.open(r.url);
        await r.until(
          "the workspace trust dialog",
          async () => /trust the authors/.test((await r.dialogText()) ?? ""),
          60_000,
        );
        await r.shot("trust-prompt");
        await r.dialogButton("No, I don't trust the authors");
        await r.until("Restricted Mode in the status bar", async () =>
          (await r.statusBarText()).includes("Restricted Mode"),
        );
      });
      await r.step(
        "square.py in Restricted Mode: lenses ask for trust, nothing ran",
        90_000,
        async () => {
          await r.openFile("square.py");
          await r.gotoLine(await r.lineIn("square.py", THREE_WAYS));
          await r.waitLensAbove(THREE_WAYS, /Kernel Lens: trust this workspace to profile/, 60_000);
          const lenses = await r.lensTexts();
          assert(
            lenses.every((t) => !ANY_RESULT.test(t) && !PROFILE_LINK.test(t)),
            `Restricted Mode shows a result or a Profile lens: ${JSON.stringify(lenses)}`,
          );
          await r.shot("untrusted-lenses");
        },
      );
      await r.step("trust the workspace from the lens", 30_000, async () => {
        await r.clickLensAbove(THREE_WAYS, /trust this workspace/);
        const editor = r.page.locator(".workspace-trust-editor");
        await editor.waitFor({ timeout: 15_000 });
        await r.shot("workspace-trust-editor");
        await editor.getByRole("button", { name: "Trust", exact: true }).click();
        await r.until(
          "Restricted Mode to end",
          async () => !(await r.statusBarText()).includes("Restricted Mode"),
        );
        await r.command("View: Close Editor");
      });
      await r.step("Profile lenses replace the trust lenses", 30_000, async () => {
        await r.openFile("square.py");
        await r.gotoLine(await r.lineIn("square.py", THREE_WAYS));
        await r.waitLensAbove(THREE_WAYS, PROFILE_LINK);
        await r.until(
          "every visible trust lens to turn into Profile",
          async () => {
            const lenses = await r.lensTexts();
            return lenses.length > 0 && lenses.every((t) => !/trust this workspace/.test(t));
          },
          10_000,
        );
        await r.shot("profile-lenses");
      });
      await r.step(
        "click Profile above square_three_ways: progress, then results",
        FIRST_PROFILE_MS,
        async () => {
          await r.clickLensAbove(THREE_WAYS, /^Profile$/);
          // The job shows as a spinning "Profiling…" lens and in the status bar until it is done.
          const progress = await r.until(
            "the Profiling… lens (or already the result)",
            async () => {
              const row = await r.lensesAbove(THREE_WAYS);
              return /Profiling…|(ms|µs) ±/.test(row?.text ?? "") ? row.text : null;
            },
            30_000,
            50,
          );
          if (/Profiling…/.test(progress)) {
            r.log(`    lens: ${progress}; status bar: ${await r.statusBarText()}`);
            await r.shot("profiling");
          } else {
            r.log(`    the result came before a Profiling… lens was seen: ${progress}`);
          }
          const summary = await r.waitLensAbove(THREE_WAYS, SUMMARY, FIRST_PROFILE_MS - 10_000);
          assert(/3 ops/.test(summary.text), `summary lens lacks "3 ops": ${summary.text}`);
          assert(/Re-profile/.test(summary.text), `no Re-profile lens: ${summary.text}`);
          for (const [line, op] of [
            ["a = torch.square(x)", "aten::square"],
            ["b = x * x", "aten::mul"],
            ["c = x**2", "aten::pow"],
          ]) {
            // On a CPU the lens names the op; its time under the profiler is in the hover.
            const row = await r.waitLensAbove(line, new RegExp(`${op}\\b.*CPU`), 10_000);
            r.log(`    ${line}  ←  ${row.text}`);
          }
          r.log(`    summary: ${summary.text}`);
          await r.shot("profiled-square-three-ways");
        },
      );
    },
  },
  {
    name: "2. hovers: x**2 names aten::pow; an unprofiled function offers Profile",
    async run(r) {
      await r.step("hover the x**2 expression", 30_000, async () => {
        await r.page.keyboard.press("Escape");
        await r.hoverOn("c = x**2", "**");
        const text = await r.until(
          "a hover naming aten::pow",
          async () => {
            const hover = await r.hoverText();
            return hover?.includes("aten::pow") ? hover : null;
          },
          15_000,
        );
        r.log(`    hover: ${text.replace(/\s+/g, " ").slice(0, 200)}`);
        await r.shot("hover-aten-pow");
        await r.page.mouse.move(5, 400);
        await r.page.keyboard.press("Escape");
      });
      await r.step(
        "the hover of a function not yet profiled offers a working Profile link",
        PROFILE_MS,
        async () => {
          await r.hoverOn("return x * x", "*");
          const link = r.page.locator(".monaco-hover:visible a", { hasText: "Profile square_mul" });
          await link.first().waitFor({ state: "visible", timeout: 15_000 });
          await r.shot("hover-profile-link");
          await link.first().click();
          const row = await r.waitLensAbove("def square_mul(x):", SUMMARY, PROFILE_MS - 10_000);
          await r.waitLensAbove("return x * x", /aten::mul/, 10_000);
          r.log(`    summary: ${row.text}`);
        },
      );
    },
  },
  {
    name: "3. a syntax error fails the profile with a diagnostic; fixed, it profiles",
    async run(r) {
      const line = await r.lineIn("square.py", SQUARE_POW);
      await r.step("delete the ':' of def square_pow", 30_000, async () => {
        await r.gotoLine(line, SQUARE_POW.length + 1);
        await r.page.keyboard.press("End");
        await r.page.keyboard.press("Backspace");
        await r.waitLensAbove("def square_pow(x)", /syntax error/, 20_000);
        await r.shot("syntax-error-typed");
      });
      await r.step(
        "Kernel Lens: Profile Function at Cursor fails with 'syntax'",
        30_000,
        async () => {
          await r.command("Kernel Lens: Profile Function at Cursor");
          const row = await r.waitLensAbove("def square_pow(x)", /Profile failed: syntax/, 20_000);
          r.log(`    lens: ${row.text}`);
        },
      );
      await r.step("the Problems panel shows the error", 30_000, async () => {
        await r.command("View: Focus Problems (Errors, Warnings, Infos)");
        const text = await r.until(
          "a Kernel Lens syntax problem",
          async () => {
            const panel = await r.panelText();
            return /Profile failed \(syntax\)/.test(panel) ? panel : null;
          },
          15_000,
        );
        r.log(`    problems: ${text.replace(/\s+/g, " ").slice(0, 200)}`);
        await r.shot("syntax-error-problems");
      });
      await r.step("undo the edit and profile square_pow from its lens", PROFILE_MS, async () => {
        await r.gotoLine(line);
        await r.page.keyboard.press("Control+Z");
        await r.waitLensAbove(SQUARE_POW, PROFILE_LINK, 20_000);
        await r.clickLensAbove(SQUARE_POW, /^Profile$/);
        await r.waitLensAbove(SQUARE_POW, SUMMARY, PROFILE_MS - 10_000);
        await r.waitLensAbove("return x**2", /aten::pow/, 10_000);
        await r.until(
          "the syntax problem to clear",
          async () => !/Profile failed \(syntax\)/.test(await r.panelText()),
          10_000,
        );
        await r.shot("syntax-fixed-profiled");
      });
    },
  },
  {
    name: "4. cancel a long profile from its progress notification; the next profile works",
    async run(r) {
      const SLOW = "def sleep_a_minute():";
      const QUICK = "def quick_add(x):";
      await r.step("profile sleep_a_minute in slow.py", 30_000, async () => {
        await r.openFile("slow.py");
        await r.clickLensAbove(SLOW, /^Profile$/, 20_000);
        await r.waitLensAbove(SLOW, /Profiling/, 10_000);
      });
      await r.step("Cancel in the 'Profiling sleep_a_minute' notification", 30_000, async () => {
        const toast = r.page
          .locator(".notifications-toasts .notification-toast")
          .filter({ hasText: "Profiling sleep_a_minute" });
        try {
          await toast.first().waitFor({ state: "visible", timeout: 15_000 });
        } catch {
          throw new Error(
            "no notification 'Profiling sleep_a_minute' appeared; status bar: " +
              (await r.statusBarText()),
          );
        }
        await r.shot("cancellable-progress");
        await toast.first().getByRole("button", { name: "Cancel" }).click();
        const row = await r.waitLensAbove(SLOW, /Profile cancelled/, 20_000);
        r.log(`    lens: ${row.text}`);
        await r.shot("profile-cancelled");
      });
      await r.step("profile quick_add: the fresh agent answers", PROFILE_MS, async () => {
        await r.clickLensAbove(QUICK, /^Profile$/);
        const row = await r.waitLensAbove(QUICK, SUMMARY, PROFILE_MS - 10_000);
        await r.waitLensAbove("return x + 1", /aten::add/, 10_000);
        r.log(`    summary: ${row.text}`);
        await r.shot("after-cancel-profiled");
      });
    },
  },
  {
    name: "5. the Kernel Lens output channel shows the run's log",
    async run(r) {
      await r.step("Kernel Lens: Show Output", 30_000, async () => {
        await r.command("Kernel Lens: Show Output");
        const text = await r.until(
          "the output panel showing the Kernel Lens log",
          async () => {
            const panel = await r.panelText();
            return /\[timing\]/.test(panel) && /\[done\]/.test(panel) ? panel : null;
          },
          15_000,
        );
        const selected = await r.page
          .locator(".part.panel .monaco-select-box")
          .first()
          .evaluate((s) => s.selectedOptions?.[0]?.textContent ?? s.title ?? "")
          .catch(() => "");
        r.log(`    channel: ${selected}`);
        assert(
          /Kernel Lens/.test(selected),
          `the output panel shows "${selected}", not Kernel Lens`,
        );
        r.log(`    last lines: ${text.trim().split("\n").slice(-3).join(" | ")}`);
        await r.shot("output-channel");
      });
      await r.step("the channel's log holds the whole session", 10_000, async () => {
        const files = await findFiles(path.join(r.dataDir, "logs"), (f) => /Kernel Lens/.test(f));
        assert(files.length > 0, `no "Kernel Lens" log under ${r.dataDir}/logs`);
        const log = (await Promise.all(files.map((f) => readFile(f, "utf8")))).join("\n");
        for (const needle of ["profile square_three_ways", "[timing]", "[done]"]) {
          assert(
            log.includes(needle),
            `the Kernel Lens log lacks "${needle}" (${files.join(", ")})`,
          );
        }
        r.logFiles = files;
      });
    },
  },
];

/** Files under `dir` (recursively) whose path passes `keep`. */
export async function findFiles(dir, keep) {
  const found = [];
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true, recursive: true });
  } catch {
    return found;
  }
  for (const entry of entries) {
    const full = path.join(entry.parentPath ?? entry.path, entry.name);
    if (entry.isFile() && keep(full)) found.push(full);
  }
  return found;
}
