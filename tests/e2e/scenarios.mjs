/**
 * The editor end-to-end scenarios, in the order they run (each builds on the state the one before
 * left: trust granted, square.py profiled; scenario 10, marked `last`, runs after all others).
 * Every step has a time limit and asserts on what the editor shows; screenshots are numbered
 * across the run. Webviews are read inside their frames (`Run.webviews`), and what their
 * canvases draw through the recorder `ui.mjs` installs in every frame (`Run.canvasText`).
 */
import { existsSync } from "node:fs";
import { copyFile, readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { ARGS_SCENARIOS } from "./args.mjs";
import { INTERP_SCENARIOS } from "./interp.mjs";
import { KERNEL_LINES_SCENARIOS } from "./kernelLines.mjs";
import { NOTEBOOK_SCENARIO } from "./notebook.mjs";
import { WALK41_SCENARIOS } from "./walk41.mjs";

/** Whether nvcc can be found the way the server looks for it. */
/** Whether this machine has an NVIDIA GPU (its device nodes), where launches run for real. */
const HAS_CUDA = existsSync("/dev/nvidiactl") || existsSync("/dev/nvidia0");

function hasNvcc() {
  const home = process.env.CUDA_HOME ?? process.env.CUDA_PATH;
  if (home) return existsSync(`${home}/bin/nvcc`);
  const dirs = (process.env.PATH ?? "").split(":");
  return dirs.some((d) => d && existsSync(`${d}/nvcc`)) || existsSync("/usr/local/cuda/bin/nvcc");
}

/** What the summary lens of a CPU run looks like: `0.131 ms ±0.6% · 3 ops · CPU` (or `4.80 µs ±…`). */
// The final summary: a lens still timing ("… · CPU · timing…") is not it (the streamed lens
// already matches the rest, and its Re-profile is not there yet).
const SUMMARY = /^(?!.*timing…).*\d (ms|µs) ±[\d.]+%.*CPU/;
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

/**
 * Profiles the function whose def line is `lineText` again and waits for a new result: the row
 * must change from what it showed before the click (a result restored from the history, or an
 * earlier run) and read as a summary. A warm profile can be over before a poll sees
 * "Profiling…", so that is not waited for.
 */
async function profileFresh(r, lineText, timeoutMs) {
  const before = (await r.lensesAbove(lineText))?.text ?? "";
  await r.clickLensAbove(lineText, /^(Re-profile( longer)?|Profile)$/);
  await r.parkMouse();
  return r.until(
    `a new result above "${lineText}"`,
    async () => {
      const row = await r.lensesAbove(lineText);
      const says = row !== null && (SUMMARY.test(row.text) || SUMMARY.test(row.hover));
      return says && row.text !== before ? row : null;
    },
    timeoutMs,
  );
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
  {
    name: "6. Show Assembly: square_kernel's PTX beside the source, lines linked both ways",
    async run(r) {
      const JIT = "@triton.jit";
      const LOAD = "x = tl.load(";
      const STORE = "tl.store(out_ptr";
      const ptx = r.editorIn(/\.ptx$/);
      const source = r.editorIn("triton_square.py");
      await r.step(
        "Show Assembly above square_kernel: a stage picker, PTX preselected",
        60_000,
        async () => {
          await r.hidePanel();
          await r.openFile("triton_square.py");
          await r.gotoLine(await r.lineIn("triton_square.py", "def square(x, BLOCK_SIZE"));
          await r.clickLensAbove(JIT, /^Show Assembly$/, 30_000);
          const picker = r.page.locator(".quick-input-widget");
          const seen = await r.until(
            "the stage picker of square_kernel",
            async () => {
              if (!(await picker.isVisible())) return null;
              const title = await picker.locator(".quick-input-title").innerText();
              const labels = await picker
                .locator(".quick-input-list .monaco-list-row .label-name")
                .allInnerTexts();
              const active = await picker
                .locator(".quick-input-list .monaco-list-row.focused .label-name")
                .allInnerTexts();
              return /Show Assembly of square_kernel/.test(title) && labels.length > 0
                ? { title, labels, active }
                : null;
            },
            15_000,
          );
          r.log(`    picker: ${seen.title}: ${seen.labels.join(", ")}; active: ${seen.active}`);
          for (const stage of ["TTIR", "TTGIR", "LLIR", "PTX", "SASS"]) {
            assert(seen.labels.includes(stage), `the stage picker lacks ${stage}: ${seen.labels}`);
          }
          assert(
            seen.active.length === 1 && seen.active[0] === "PTX",
            `PTX is not the preselected stage: ${JSON.stringify(seen.active)}`,
          );
          await r.shot("assembly-stage-picker");
          await r.page.keyboard.press("Enter");
        },
      );
      await r.step(
        "the PTX opens in a second editor group; the lens counts registers",
        120_000,
        async () => {
          const titles = await r.until(
            "an editor group showing square_kernel.ptx beside triton_square.py",
            async () => {
              const t = await r.groupTitles();
              return t.length >= 2 &&
                t.includes("triton_square.py") &&
                t.includes("square_kernel.ptx")
                ? t
                : null;
            },
            110_000,
          );
          r.log(`    editor groups: ${titles.join(" | ")}`);
          const top = await r.until(
            "the PTX text",
            async () => {
              const lines = await r.visibleLines(ptx);
              return lines.some((l) => /^\.target sm_\d+/.test(l.trim())) ? lines : null;
            },
            15_000,
          );
          r.log(`    ${top.find((l) => /\.target/.test(l)).trim()}`);
          const lens = await r.waitLensAbove(JIT, /PTX · \d+ regs · 0 spills · sm_\d+/, 15_000);
          r.log(`    lens: ${lens.text}`);
          await r.shot("assembly-ptx");
        },
      );
      await r.step(
        "cursor on the tl.load line: the PTX's ld.global lines light up",
        30_000,
        async () => {
          const before = await r.linkedLines(ptx);
          assert(
            !before.some((l) => /ld\.global/.test(l)),
            `an ld.global line was highlighted before the cursor moved: ${JSON.stringify(before)}`,
          );
          await r.clickInLine(LOAD, "tl.load", source);
          const lit = await r.until(
            "highlighted ld.global lines in the PTX",
            async () => {
              const lines = await r.linkedLines(ptx);
              return lines.some((l) => /ld\.global/.test(l)) ? lines : null;
            },
            10_000,
          );
          r.log(
            `    ${lit.length} highlighted PTX lines in sight, e.g. ${lit.find((l) => /ld\.global/.test(l)).trim()}`,
          );
          assert(
            !lit.some((l) => /st\.global/.test(l)),
            `the tl.load line highlights a store: ${JSON.stringify(lit)}`,
          );
          await r.shot("assembly-linked-source-to-ptx");
        },
      );
      await r.step(
        "cursor on an st.global line of the PTX: the tl.store line lights up",
        30_000,
        async () => {
          // Selecting the store line highlights its lines in the PTX and reveals the first; the
          // st.global lines further down may need a scroll.
          await r.clickInLine(STORE, "tl.store", source);
          await r.until(
            "highlighted st.global lines in the PTX",
            async () => {
              if ((await r.linkedLines(ptx)).some((l) => /st\.global/.test(l))) return true;
              if ((await r.visibleLines(ptx)).some((l) => /st\.global/.test(l))) return false;
              await r.scroll(ptx, 120);
              return false;
            },
            10_000,
            300,
          );
          assert(
            (await r.linkedLines(source)).length === 0,
            "the source has highlighted lines before a PTX line was selected",
          );
          await r.clickInLine("st.global", "st.global", ptx);
          const lit = await r.until(
            "the tl.store line highlighted in the source",
            async () => {
              const lines = await r.linkedLines(source);
              return lines.length > 0 ? lines : null;
            },
            10_000,
          );
          r.log(`    source lines highlighted: ${lit.map((l) => l.trim()).join(" | ")}`);
          assert(
            lit.length === 1 && lit[0].includes(STORE),
            `an st.global line should highlight the tl.store line only: ${JSON.stringify(lit)}`,
          );
          const status = await r.statusBarText();
          assert(/PTX · sm_\d+/.test(status), `no PTX facts in the status bar: ${status}`);
          r.log(`    status bar: ${status.match(/PTX · [^]*?spill\w*/)?.[0] ?? status}`);
          await r.shot("assembly-linked-ptx-to-source");
        },
      );
      await r.step("close the PTX editor", 15_000, async () => {
        await r.command("View: Close All Editor Groups");
      });
    },
  },
  {
    name: "7. Generated Code: torch.compile's output of matmul_relu beside the source",
    async run(r) {
      const FN = "def matmul_relu(x, y):";
      const generated = r.editorIn("matmul_relu.compiled.py");
      await r.step(
        "Generated Code above matmul_relu: a progress notification",
        60_000,
        async () => {
          await r.openFile("fusion.py");
          await r.gotoLine(await r.lineIn("fusion.py", FN));
          await r.clickLensAbove(FN, /^Generated Code$/, 30_000);
          const toast = await r.until(
            "a 'torch.compile matmul_relu' notification (or already the code)",
            async () => {
              const toasts = await r.toastTexts();
              const shown = toasts.find((t) => /torch\.compile matmul_relu/.test(t));
              if (shown) return shown;
              return (await r.groupTitles()).includes("matmul_relu.compiled.py") ? "(done)" : null;
            },
            30_000,
            100,
          );
          r.log(`    notification: ${toast}`);
          if (toast !== "(done)") await r.shot("generated-code-progress");
        },
      );
      await r.step("the generated Python opens beside the source", 240_000, async () => {
        await r.until(
          "an editor group showing matmul_relu.compiled.py",
          async () => (await r.groupTitles()).includes("matmul_relu.compiled.py"),
          230_000,
          500,
        );
        await generated.click({ position: { x: 200, y: 100 } });
        const status = await r.statusBarText();
        r.log(`    status bar: ${status}`);
        assert(/Python/.test(status), `the generated code is not Python: ${status}`);
        assert(
          /matmul_relu: .* eager → .* compiled/.test(status),
          `no eager → compiled facts in the status bar: ${status}`,
        );
        for (const needle of ["extern_kernels.mm", "cpp_fused_"]) {
          const count = await r.find(needle);
          r.log(`    find ${needle}: ${count}`);
          assert(/^\d+ of \d+$/.test(count), `the generated code has no "${needle}": ${count}`);
        }
        await r.closeFind();
      });
      await r.step("cursor on the relu line: the fused C++ kernel lights up", 30_000, async () => {
        const source = r.editorIn("fusion.py");
        await r.clickInLine("z = torch.relu(z)", "relu", source);
        const lit = await r.until(
          "a highlighted cpp_fused_ line in the generated code",
          async () => {
            const lines = await r.linkedLines(generated);
            return lines.some((l) => /cpp_fused_/.test(l)) ? lines : null;
          },
          10_000,
        );
        r.log(`    highlighted: ${lit.map((l) => l.trim()).join(" | ")}`);
        await r.shot("generated-code");
      });
      await r.step("close the generated code", 15_000, async () => {
        await r.command("View: Close All Editor Groups");
      });
    },
  },
  {
    name: "8. Report panel: summary, timeline; a BLOCK_SIZE sweep, applied and undone",
    async run(r) {
      const PANEL = "Kernel Lens: square_three_ways";
      const reportOf = (fn) => (v) => v.mode === "report" && v.title === fn;
      await r.step(
        "the Report lens above square_three_ways opens the panel",
        PROFILE_MS,
        async () => {
          await r.openFile("square.py");
          await r.gotoLine(await r.lineIn("square.py", THREE_WAYS));
          await r.waitLensAbove(THREE_WAYS, /Re-profile|Profile/, 20_000);
          // A fresh run (the row may show a result restored from the history, without its trace).
          const row = await profileFresh(r, THREE_WAYS, PROFILE_MS - 30_000);
          r.log(`    summary: ${row.text}`);
          await r.clickLensAbove(THREE_WAYS, /^Report$/);
          await r.until(
            `a "${PANEL}" editor beside square.py`,
            async () => {
              const t = await r.groupTitles();
              return t.length >= 2 && t.includes("square.py") && t.includes(PANEL) ? t : null;
            },
            15_000,
          );
        },
      );
      await r.step("Summary tab: the per-line table names aten::mul", 30_000, async () => {
        const view = await r.waitWebview(
          "the report of square_three_ways with its per-line table",
          (v) => reportOf("square_three_ways")(v) && /aten::mul/.test(v.text),
          25_000,
        );
        assert(view.tab === "Summary", `the report opened on "${view.tab}", not Summary`);
        const rows = await view.frame.locator("table.lines tbody tr").allInnerTexts();
        const norm = rows.map((t) => t.replace(/\s+/g, " ").trim());
        r.log(`    ${norm.length} rows: ${norm.join(" | ")}`);
        for (const [line, op] of [
          ["torch.square(x)", "aten::square"],
          ["x * x", "aten::mul"],
          ["x**2", "aten::pow"],
        ]) {
          assert(
            norm.some((t) => t.includes(line) && t.includes(op)),
            `no row with ${line} → ${op}: ${JSON.stringify(norm)}`,
          );
        }
        await r.parkMouse();
        await r.shot("report-summary");
      });
      await r.step("Timeline tab: lanes drawn, legend shown", 30_000, async () => {
        const view = await r.waitWebview("the report", reportOf("square_three_ways"));
        await view.frame.getByRole("tab", { name: "Timeline" }).click();
        await r.parkMouse();
        const facts = await r.until(
          "the timeline's events line",
          async () => {
            const text = await view.frame.locator("section.timeline .toolbar").innerText();
            return /\d+ of \d+ events shown/.test(text) ? text.replace(/\s+/g, " ") : null;
          },
          15_000,
        );
        r.log(`    toolbar: ${facts}`);
        for (const label of ["source line", "ATen op"]) {
          assert(facts.includes(label), `the legend lacks "${label}": ${facts}`);
        }
        const box = await view.frame.locator("canvas.timeline-body").boundingBox();
        assert(
          box && box.width > 100 && box.height > 40,
          `the timeline canvas is ${JSON.stringify(box)}`,
        );
        // The lane titles are drawn on the canvas, not in the DOM.
        const drawn = await r.until(
          "a CPU thread lane title drawn on the timeline",
          async () => {
            const texts = await r.canvasText(view.frame);
            return texts.some((t) => /CPU thread \d+/.test(t)) ? texts : null;
          },
          10_000,
        );
        r.log(
          `    lane titles drawn: ${[...new Set(drawn.filter((t) => /^[▾▸] /.test(t)))].join(" | ")}`,
        );
        await r.shot("report-timeline");
      });
      const SQUARE = "def square(x, BLOCK_SIZE=";
      let best;
      await r.step(
        "Sweep BLOCK_SIZE above square in triton_square.py: the Sweep tab",
        180_000,
        async () => {
          // The panel has the focus since its tab was clicked: open the file in the first group.
          await r.command("View: Focus First Editor Group");
          await r.openFile("triton_square.py");
          await r.gotoLine(await r.lineIn("triton_square.py", SQUARE));
          await r.clickLensAbove(SQUARE, /^Sweep BLOCK_SIZE$/);
          const view = await r.waitWebview(
            "the report of square on its Sweep tab with a result",
            (v) =>
              reportOf("square")(v) &&
              v.tab === "Sweep" &&
              /Best BLOCK_SIZE = \d+|Interpreter-mode sweep of BLOCK_SIZE/.test(v.text),
            170_000,
          );
          // Without a GPU the kernel runs under Triton's interpreter: its times say nothing of a
          // GPU, so the sweep is labelled and offers no value to apply (issue 16).
          const interpreted = /Interpreter-mode sweep of BLOCK_SIZE/.test(view.text);
          const titles = await r.groupTitles();
          assert(
            titles.includes("Kernel Lens: square"),
            `the panel's title: ${titles.join(" | ")}`,
          );
          const table = await view.frame.locator("table.sweep-table tbody tr").allInnerTexts();
          const rows = table.map((t) => t.replace(/\s+/g, " ").trim());
          r.log(`    ${rows.join(" | ")}`);
          const bestRows = await view.frame
            .locator("table.sweep-table tbody tr.best")
            .allInnerTexts();
          assert(bestRows.length === (interpreted ? 0 : 1), `${bestRows.length} rows marked best`);
          if (!interpreted) {
            best = Number(bestRows[0].trim().split(/\s+/)[0]);
            assert(/\bbest\b/.test(bestRows[0]), `the best row does not say best: ${bestRows[0]}`);
          }
          const canvas = await view.frame.locator("section.sweep canvas").boundingBox();
          assert(
            canvas && canvas.width > 100 && canvas.height > 100,
            `the chart is ${JSON.stringify(canvas)}`,
          );
          const drawn = await r.canvasText(view.frame);
          assert(
            drawn.some((t) => /BLOCK_SIZE \(log2 scale\)/.test(t)),
            `the chart's axis title was not drawn: ${JSON.stringify(drawn.slice(0, 40))}`,
          );
          if (interpreted) {
            const applies = await view.frame.getByRole("button", { name: /^Apply / }).count();
            assert(applies === 0, "an interpreter-mode sweep offers Apply");
            r.log("    interpreter-mode sweep: labelled, no Apply");
          } else {
            const apply = view.frame.getByRole("button", { name: `Apply BLOCK_SIZE = ${best}` });
            await apply.waitFor({ state: "visible", timeout: 5_000 });
            r.log(`    best BLOCK_SIZE = ${best}`);
          }
          await r.parkMouse();
          await r.shot("report-sweep");
        },
      );
      await r.step(
        "Apply BLOCK_SIZE: the default in the source changes; undo restores it",
        30_000,
        async () => {
          if (best === undefined) {
            r.log("    (an interpreter-mode sweep has nothing to apply: needs a GPU)");
            return;
          }
          const source = r.editorIn("triton_square.py");
          const view = await r.waitWebview(
            "the Sweep tab",
            (v) => reportOf("square")(v) && v.tab === "Sweep",
          );
          await view.frame.getByRole("button", { name: `Apply BLOCK_SIZE = ${best}` }).click();
          const edited = await r.until(
            `def square(x, BLOCK_SIZE=${best}) in the editor`,
            async () =>
              (await r.visibleLines(source)).find((l) =>
                l.includes(`def square(x, BLOCK_SIZE=${best}):`),
              ),
            15_000,
          );
          r.log(`    after Apply: ${edited.trim()}`);
          await r.shot("sweep-applied");
          await r.clickInLine(SQUARE, "def", source);
          await r.page.keyboard.press("Control+Z");
          const restored = await r.until(
            "def square(x, BLOCK_SIZE=1024) again",
            async () =>
              (await r.visibleLines(source)).find((l) =>
                l.includes("def square(x, BLOCK_SIZE=1024):"),
              ),
            10_000,
          );
          r.log(`    after undo: ${restored.trim()}`);
          const dirty = await r.page
            .locator(".tabs-container .tab.dirty .label-name", { hasText: "triton_square.py" })
            .count();
          assert(dirty === 0, "triton_square.py is still modified after the undo");
        },
      );
      await r.step("close the editors", 15_000, async () => {
        await r.command("View: Close All Editor Groups");
      });
    },
  },
  {
    name: "9. recorded profiler files open in Kernel Lens's viewers (Chrome trace, Nsight Compute)",
    async run(r) {
      await r.step(
        "matmul_relu.pt.trace.json from the explorer: the timeline with a GPU lane",
        60_000,
        async () => {
          await r.openFromExplorer("matmul_relu.pt.trace.json");
          const view = await r.waitWebview(
            "the trace viewer with its timeline",
            (v) =>
              v.mode === "trace" &&
              v.title === "matmul_relu.pt.trace.json" &&
              /events shown/.test(v.text),
            45_000,
          );
          assert(view.tab === "Timeline", `the trace opened on "${view.tab}", not Timeline`);
          const drawn = await r.until(
            "a GPU stream lane title drawn on the timeline",
            async () => {
              const texts = await r.canvasText(view.frame);
              return texts.some((t) => /GPU \d+ · stream \d+/.test(t)) ? texts : null;
            },
            10_000,
          );
          const lanes = [...new Set(drawn.filter((t) => /^[▾▸] /.test(t)))];
          r.log(`    lane titles drawn: ${lanes.join(" | ")}`);
          assert(
            lanes.some((t) => /CPU thread \d+/.test(t)),
            `no CPU thread lane: ${lanes.join(" | ")}`,
          );
          r.log(`    ${view.text.split("\n").find((l) => /events shown/.test(l))}`);
          await r.shot("trace-file");
          await view.frame.getByRole("tab", { name: "Summary" }).click();
          const summary = await r.waitWebview(
            "the trace's Summary tab naming the GEMM kernel",
            (v) => v.mode === "trace" && v.tab === "Summary" && /sm80_xmma_gemm/.test(v.text),
            10_000,
          );
          r.log(`    summary: ${summary.text.replace(/\s+/g, " ").slice(0, 240)}`);
          await r.shot("trace-file-summary");
        },
      );
      await r.step(
        "triton_fused_full.ncu-rep from the explorer: kernel, GPU and hints",
        60_000,
        async () => {
          await r.openFromExplorer("triton_fused_full.ncu-rep");
          const view = await r.waitWebview(
            "the Nsight Compute viewer showing triton_poi_fused_add_mul_relu_0",
            (v) =>
              v.mode === "ncu" &&
              v.title === "triton_fused_full.ncu-rep" &&
              /triton_poi_fused_add_mul_relu_0/.test(v.text),
            45_000,
          );
          const hints = await view.frame.locator("ol.hints > li .hint-head strong").allInnerTexts();
          r.log(`    hints: ${hints.join(" | ")}`);
          assert(
            hints[0] === "Low Utilization",
            `the first hint is "${hints[0]}", not Low Utilization`,
          );
          const metrics = await view.frame.locator(".metrics").first().innerText();
          r.log(`    metrics: ${metrics.replace(/\s+/g, " ")}`);
          await r.shot("ncu-file");
          // The report says which GPU ran the kernel (the server sends it as `device`).
          assert(
            /NVIDIA H200/.test(view.text),
            "the Nsight Compute viewer does not show the GPU (NVIDIA H200) the report was recorded on",
          );
        },
      );
      await r.step("close the viewers", 15_000, async () => {
        await r.command("View: Close All Editor Groups");
      });
    },
  },
  {
    name: "49. real traces of other eras and devices: a PyTorch 1.8 trace (2021 schema) has its lanes; an MTIA trace names its device",
    async run(r) {
      await r.step(
        "resnet50_2021.pt.trace.json.gz (Kernel/Runtime/Operator categories): CPU, runtime and GPU lanes",
        60_000,
        async () => {
          await r.openFromExplorer("resnet50_2021.pt.trace.json.gz");
          const view = await r.waitWebview(
            "the trace viewer with its timeline",
            (v) =>
              v.mode === "trace" &&
              v.title === "resnet50_2021.pt.trace.json.gz" &&
              /events shown/.test(v.text),
            45_000,
          );
          const drawn = await r.until(
            "the GPU stream, runtime and CPU lane titles drawn",
            async () => {
              const texts = await r.canvasText(view.frame);
              const lanes = [...new Set(texts.filter((t) => /^[▾▸] /.test(t)))];
              return lanes.some((t) => /GPU 0 · stream 7/.test(t)) &&
                lanes.some((t) => /CUDA runtime/.test(t)) &&
                lanes.some((t) => /CPU thread/.test(t))
                ? lanes
                : null;
            },
            10_000,
          );
          r.log(`    lane titles drawn: ${drawn.join(" | ")}`);
          await r.shot("trace-2021-schema");
          await view.frame.getByRole("tab", { name: "Summary" }).click();
          const summary = await r.waitWebview(
            "its Summary tab: GPU busy time and the AddFunctor kernel",
            (v) =>
              v.mode === "trace" &&
              v.tab === "Summary" &&
              /GPU busy/.test(v.text) &&
              /vectorized_elementwise_kernel/.test(v.text),
            10_000,
          );
          r.log(`    summary: ${summary.text.replace(/\s+/g, " ").slice(0, 240)}`);
          await r.shot("trace-2021-schema-summary");
        },
      );
      await r.step(
        "mtia_inference.pt.trace.json.gz: MTIA lanes and an MTIA summary",
        60_000,
        async () => {
          await r.openFromExplorer("mtia_inference.pt.trace.json.gz");
          const view = await r.waitWebview(
            "the MTIA trace's timeline",
            (v) =>
              v.mode === "trace" &&
              v.title === "mtia_inference.pt.trace.json.gz" &&
              /events shown/.test(v.text),
            45_000,
          );
          const drawn = await r.until(
            "the MTIA device and runtime lane titles drawn",
            async () => {
              const texts = await r.canvasText(view.frame);
              const lanes = [...new Set(texts.filter((t) => /^[▾▸] /.test(t)))];
              return lanes.some((t) => /MTIA 17 · stream \d+/.test(t)) &&
                lanes.some((t) => /MTIA runtime/.test(t))
                ? lanes
                : null;
            },
            10_000,
          );
          r.log(`    lane titles drawn: ${drawn.join(" | ")}`);
          assert(!drawn.some((t) => /GPU \d/.test(t)), `a GPU lane in an MTIA trace: ${drawn}`);
          assert(
            /MTIA runtime/.test(view.text) && !/CUDA runtime/.test(view.text),
            "the timeline's legend does not name the MTIA runtime",
          );
          await view.frame.getByRole("tab", { name: "Summary" }).click();
          const summary = await r.waitWebview(
            "its Summary tab naming ARTEMIS (MTIA)",
            (v) => v.mode === "trace" && v.tab === "Summary" && /ARTEMIS \(MTIA\)/.test(v.text),
            10_000,
          );
          assert(/MTIA busy/.test(summary.text), "the summary does not say MTIA busy");
          r.log(`    summary: ${summary.text.replace(/\s+/g, " ").slice(0, 300)}`);
          await r.shot("trace-mtia-summary");
        },
      );
      await r.step("close the editors", 15_000, async () => {
        await r.command("View: Close All Editor Groups");
      });
    },
  },
  {
    name: "11. load_inline: the PTX of the inline CUDA source beside the source",
    needs: () => (hasNvcc() ? null : "nvcc is not installed (CUDA_HOME, PATH, /usr/local/cuda)"),
    async run(r) {
      const CALL = "return load_inline(";
      await r.step(
        "the load_inline lens: nvcc compiles, with a progress notification",
        60_000,
        async () => {
          await r.openFile("inline_square.py");
          await r.gotoLine(await r.lineIn("inline_square.py", CALL));
          await r.clickLensAbove(CALL, /^load_inline: PTX, sources, nvcc$/, 30_000);
          const toast = await r.until(
            "an 'nvcc: compiling' notification (or already the PTX)",
            async () => {
              const shown = (await r.toastTexts()).find((t) => /nvcc: compiling/.test(t));
              if (shown) return shown;
              return (await r.groupTitles()).some((t) => t.endsWith(".ptx")) ? "(done)" : null;
            },
            30_000,
            100,
          );
          r.log(`    notification: ${toast}`);
          if (toast !== "(done)") await r.shot("load-inline-progress");
        },
      );
      await r.step("the PTX opens beside the source", 180_000, async () => {
        const titles = await r.until(
          "an editor group showing kernel_lens_inline_square.ptx",
          async () => {
            const t = await r.groupTitles();
            return t.includes("kernel_lens_inline_square.ptx") && t.includes("inline_square.py")
              ? t
              : null;
          },
          170_000,
          500,
        );
        r.log(`    editor groups: ${titles.join(" | ")}`);
        const ptx = r.editorIn("kernel_lens_inline_square.ptx");
        const top = await r.until(
          "the PTX's .target line",
          async () => {
            const lines = await r.visibleLines(ptx);
            return lines.find((l) => /^\.target sm_\d+/.test(l.trim()));
          },
          15_000,
        );
        r.log(`    ${top.trim()}`);
        await ptx.click({ position: { x: 300, y: 60 } });
        const status = await r.statusBarText();
        r.log(`    status bar: ${status}`);
        assert(
          /kernel_lens_inline_square\.ptx · sm_\d+/.test(status),
          `no PTX facts in the status bar: ${status}`,
        );
        const entry = await r.find("square_kernel");
        assert(/^\d+ of \d+$/.test(entry), `the PTX has no square_kernel: ${entry}`);
        const load = await r.find("ld.global");
        assert(/^\d+ of \d+$/.test(load), `the PTX has no ld.global: ${load}`);
        await r.closeFind();
      });
      await r.step(
        "cursor on the PTX's ld.global line: the CUDA line in the Python string lights up",
        30_000,
        async () => {
          const ptx = r.editorIn("kernel_lens_inline_square.ptx");
          const source = r.editorIn("inline_square.py");
          await r.clickInLine("ld.global", "ld.global", ptx);
          const lit = await r.until(
            "the load's line of CUDA_SOURCE highlighted",
            async () => {
              const lines = await r.linkedLines(source);
              return lines.length > 0 ? lines : null;
            },
            10_000,
          );
          r.log(`    source lines highlighted: ${lit.map((l) => l.trim()).join(" | ")}`);
          assert(
            lit.some((l) => l.includes("float v = in[i];")),
            `ld.global should highlight "float v = in[i];": ${JSON.stringify(lit)}`,
          );
          await r.shot("load-inline-ptx");
        },
      );
      await r.step("close the editors", 15_000, async () => {
        await r.command("View: Close All Editor Groups");
      });
    },
  },
  {
    name: "30. a lecture-style script, no set-up: inputs from its own run, Profile Script, the quick fix",
    async run(r) {
      const FILE = "lecture_square.py";
      await r.step(
        "Profile square_2: its inputs come from the script's own call",
        PROFILE_MS,
        async () => {
          await r.closeEverything();
          await r.openFile(FILE);
          await r.clickLensAbove("def square_2(a):", /^Profile$/, 30_000);
          const row = await r.waitLensAbove("def square_2(a):", SUMMARY, PROFILE_MS - 15_000);
          r.log(`    summary: ${row.text}`);
          await r.waitLensAbove("return a * a", /aten::mul/, 10_000);
        },
      );
      await r.step("the hover says where the inputs were captured", 30_000, async () => {
        await r.hoverOn("return a * a", "*");
        const text = await r.until(
          "a hover naming the captured inputs",
          async () => {
            const hover = await r.hoverText();
            return hover?.includes("captured at") ? hover : null;
          },
          15_000,
        );
        const call = await r.lineIn(FILE, "time_pytorch_function(square_2, b)");
        assert(
          text.includes(`captured at ${FILE}:${call}`) && text.includes("float32[256, 256]"),
          `the hover does not say where the inputs came from: ${text}`,
        );
        r.log(`    hover: ${text.replace(/\s+/g, " ").slice(0, 240)}`);
        await r.shot("captured-inputs-hover");
        await r.page.mouse.move(5, 400);
        await r.page.keyboard.press("Escape");
      });
      await r.step("the Report says where the inputs came from", 60_000, async () => {
        await r.clickLensAbove("def square_2(a):", /^Report$/, 15_000);
        const view = await r.waitWebview(
          "the report of square_2 with its inputs",
          (v) => v.mode === "report" && v.text.includes("captured at lecture_square.py"),
          45_000,
        );
        assert(view.text.includes("a: Tensor float32[256, 256] cpu"), view.text.slice(0, 600));
        await r.shot("report-inputs");
        await r.closeEverything();
        await r.openFile(FILE);
      });
      await r.step(
        "Profile Script: one run as __main__, ops on the module-level lines",
        PROFILE_MS,
        async () => {
          await r.gotoLine(1);
          await r.clickLensAbove('"""Shaped like GPU MODE', /Profile Script/, 30_000);
          const row = await r.waitLensAbove(
            '"""Shaped like GPU MODE',
            /script · .* wall, one run/,
            PROFILE_MS - 15_000,
          );
          r.log(`    script: ${row.text}`);
          assert(!/median|±/.test(row.text), `a script's one run shown as a median: ${row.text}`);
          await r.waitLensAbove("b = torch.randn(256, 256)", /aten::randn/, 10_000);
          await r.shot("profile-script");
        },
      );
      await r.step(
        "a function the script never calls: message on its def, then the quick fix",
        PROFILE_MS,
        async () => {
          await r.clickInLine("return a * a * a", "a * a * a");
          await r.command("Kernel Lens: Profile Function at Cursor");
          const failed = await r.waitLensAbove(
            "def cube(a):",
            /Profile failed: inputs/,
            PROFILE_MS - 30_000,
          );
          r.log(`    lens: ${failed.text}`);
          await r.clickInLine("def cube(a):", "cube");
          await r.page.keyboard.press("Control+.");
          // VS Code's Quick Fix menu lists the action, preselected (it is the preferred fix).
          const fix = r.page
            .locator(".action-widget")
            .getByText("Add an inputs directive above the def");
          await fix.first().waitFor({ state: "visible", timeout: 15_000 });
          await r.shot("inputs-quick-fix");
          await r.page.keyboard.press("Enter");
          await r.until(
            "the directive inserted above the def",
            async () =>
              (await r.visibleLines()).some((l) =>
                l.includes("# kernel-lens: inputs = (torch.randn(1024),)"),
              ),
            10_000,
          );
          await r.clickLensAbove("def cube(a):", /^Profile$/, 30_000);
          const row = await r.waitLensAbove("def cube(a):", SUMMARY, PROFILE_MS - 45_000);
          r.log(`    after the fix: ${row.text}`);
          await r.shot("after-quick-fix");
          await r.page.keyboard.press("Control+Z");
        },
      );
    },
  },
  {
    name: "10. no Content Security Policy violations in Kernel Lens's webviews (whole run)",
    last: true,
    async run(r) {
      const isCsp = (m) => /Content Security Policy|Refused to/i.test(m.text);
      await r.step(
        "the console listener sees a webview's CSP reports (a deliberate one)",
        60_000,
        async () => {
          if ((await r.webviews()).length === 0) {
            await r.openFromExplorer("matmul_relu.pt.trace.json");
          }
          const view = await r.waitWebview("a Kernel Lens webview", (v) => v.mode !== "", 45_000);
          const from = r.console.length;
          // An inline script: the webview's policy allows only its nonce'd script.
          await view.frame.evaluate(() => {
            const script = document.createElement("script");
            script.textContent = "window.__kernelLensE2eCanary = 1;";
            document.body.append(script);
          });
          const canary = await r.until(
            "the blocked inline script reported on the console",
            async () => r.console.slice(from).filter(isCsp),
            10_000,
          );
          for (const m of canary) m.canary = true;
          r.log(
            `    canary: ${canary.map((m) => `${m.url} ${m.text.slice(0, 160)}`).join(" || ")}`,
          );
          const ran = await view.frame.evaluate(() => window.__kernelLensE2eCanary === 1);
          assert(
            !ran,
            "the inline script ran: the webview has no effective Content Security Policy",
          );
        },
      );
      await r.step("no other CSP report came from a Kernel Lens webview", 10_000, async () => {
        const reports = r.console.filter((m) => isCsp(m) && !m.canary);
        // The workbench's own pages (code-server's UI, its extension host frame) are not
        // Kernel Lens's; everything else is: the webview frames (the only webviews in this
        // run are Kernel Lens's), and reports without a source URL, which is how Chromium
        // reports a webview's blocked inline script or style.
        const workbenchOnly = (m) =>
          m.url !== "" &&
          !m.url.includes("/webview/") &&
          !/vscode-webview|webview|report\.(js|css)|kernel-lens/i.test(m.text);
        const ignored = reports.filter(workbenchOnly);
        const ours = reports.filter((m) => !workbenchOnly(m));
        for (const m of ignored) {
          r.log(`    ignored (workbench): [${m.scenario}] ${m.url} ${m.text.slice(0, 200)}`);
        }
        const errors = r.console.filter((m) => m.kind === "pageerror");
        for (const m of errors)
          r.log(`    uncaught error [${m.scenario}]: ${m.text.slice(0, 200)}`);
        r.log(
          `    ${r.console.length} console messages in the run (browser-console.log), ` +
            `${reports.length} CSP reports besides the deliberate one, ${ignored.length} ignored`,
        );
        assert(
          ours.length === 0,
          `${ours.length} CSP reports from Kernel Lens webviews:\n` +
            ours.map((m) => `  [${m.scenario} / ${m.step}] ${m.url} ${m.text}`).join("\n"),
        );
      });
    },
  },
  {
    name: "31. a new user's view: lenses only where they mean something, a short row, one-line errors",
    async run(r) {
      const FORWARD = "def forward(self, x):";
      const STEP = "def train_step(model, x):";
      const none = async (file, lines) => {
        for (const line of lines) {
          const row = await r.lensesAbove(line);
          assert(row === null, `${file}: a lens above "${line}": ${row?.text}`);
        }
      };
      await r.step("a trusted workspace (standalone: open it and trust it)", 120_000, async () => {
        if (!r.page.url().startsWith("http")) {
          await r.open(r.url);
          await r.until(
            "the workspace trust dialog",
            async () => /trust the authors/.test((await r.dialogText()) ?? ""),
            60_000,
          );
          await r.dialogButton("Yes, I trust the authors");
        }
        await r.closeEverything();
      });
      await r.step("the Get Started walkthrough lists Kernel Lens's steps", 60_000, async () => {
        await r.quickInput(">Welcome: Open Walkthrough...");
        await r.page.keyboard.press("Enter");
        const input = r.page.locator(".quick-input-widget .quick-input-box input");
        await input.waitFor({ state: "visible", timeout: 10_000 });
        await input.fill("Kernel Lens");
        const row = r.page
          .locator(".quick-input-list .monaco-list-row")
          .filter({ hasText: "Get Started with Kernel Lens" })
          .first();
        await r.until("the walkthrough in the picker", () => row.isVisible(), 15_000);
        await row.click();
        const page = r.page.locator(".gettingStartedContainer");
        const text = await r.until(
          "the walkthrough's steps",
          async () => {
            const t = (await page.count()) > 0 ? await page.first().innerText() : "";
            return /Choose the interpreter/.test(t) && /Trust the workspace/.test(t) ? t : null;
          },
          20_000,
        );
        for (const step of ["Profile a function", "Open the Report", "Show the assembly"]) {
          assert(text.includes(step), `the walkthrough lacks "${step}"`);
        }
        await r.parkMouse();
        await r.shot("walkthrough");
        await r.closeEverything();
      });
      await r.step("mlp.py: Profile on forward and train_step only", 90_000, async () => {
        await r.openFile("mlp.py");
        await r.waitLensAbove(FORWARD, PROFILE_LINK, 60_000);
        await r.waitLensAbove(STEP, PROFILE_LINK, 10_000);
        await none("mlp.py", [
          "def __init__(self, dim: int = 32, hidden: int = 64)",
          "def mlp_inputs():",
          "def count_params(model):",
          "def _fmt(n):",
        ]);
        const init = await r.lensesAbove("def __init__(self");
        assert(init === null, `Sweep or Profile above MLP.__init__: ${init?.text}`);
        r.log(`    rows: ${JSON.stringify(await r.lensTexts())}`);
        await r.shot("lenses-nn-module");
      });
      await r.step("numba_square.py: no Show Assembly on @cuda.jit", 30_000, async () => {
        await r.openFile("numba_square.py");
        const launcher = await r.waitLensAbove("def square(a, threads=128):", PROFILE_LINK);
        assert(/Sweep threads/.test(launcher.text), `no Sweep threads: ${launcher.text}`);
        await none("numba_square.py", ["@cuda.jit", "def square_inputs():"]);
        const texts = await r.lensTexts();
        assert(!texts.some((t) => /Show Assembly/.test(t)), `Show Assembly: ${texts}`);
        r.log(`    rows: ${JSON.stringify(texts)}`);
        await r.shot("lenses-numba");
      });
      await r.step("profile train_step: a short row, lines as shares", PROFILE_MS, async () => {
        await r.openFile("mlp.py");
        await r.clickLensAbove(STEP, /^Profile$/, 30_000);
        const row = await r.waitLensAbove(STEP, SUMMARY, PROFILE_MS - 15_000);
        r.log(`    row: ${row.text}`);
        const links = row.links.map((l) => l.text);
        assert(
          links.length <= 4 &&
            links.some((l) => /^Re-profile( longer)?$/.test(l)) &&
            links.includes("More…"),
          `the row is not summary + Re-profile + one action + More…: ${JSON.stringify(links)}`,
        );
        const line = await r.waitLensAbove("loss = model(x)", /% of [\d.]+ (µs|ms)/, 10_000);
        r.log(`    line: ${line.text}`);
        // Half the editor's width: the row must fit in 60 characters or so.
        assert(row.text.length < 110, `the row is too long: ${row.text.length} characters`);
        await r.shot("short-row");
      });
      await r.step("More…: the other actions, Nsight Compute with its reason", 30_000, async () => {
        await r.clickLensAbove(STEP, /^More…$/);
        const rows = r.page.locator(".quick-input-list .monaco-list-row");
        const texts = await r.until(
          "the quick pick of the other actions",
          async () => {
            // The pick's own rows (it always lists Nsight Compute), not a list that an
            // earlier quick input (Quick Open's recent files) left in the widget.
            const all = await rows.evaluateAll((ns) => ns.map((n) => n.textContent ?? ""));
            return all.length >= 2 && all.some((t) => /Nsight Compute/.test(t)) ? all : null;
          },
          10_000,
        );
        r.log(`    items: ${JSON.stringify(texts)}`);
        assert(
          texts.some((t) => /Generated Code/.test(t)),
          `no Generated Code: ${JSON.stringify(texts)}`,
        );
        assert(
          texts.some((t) => /Nsight Compute.*unavailable: needs an NVIDIA GPU/.test(t)),
          `Nsight Compute without its reason: ${JSON.stringify(texts)}`,
        );
        await r.shot("more-actions");
        await r.page.keyboard.press("Escape");
      });
      await r.step("a failure without a line: one line and Show details", 90_000, async () => {
        await r.command("Notifications: Clear All Notifications");
        await r.clickInLine("loss.backward()", "backward");
        await r.command("Kernel Lens: Run Nsight Compute on Function at Cursor");
        const toast = await r.until(
          "a Kernel Lens failure notification",
          async () =>
            (await r.toastTexts()).find((t) => /Kernel Lens/.test(t) && /GPU|ncu/.test(t)),
          75_000,
        );
        r.log(`    toast: ${toast}`);
        const box = r.page.locator(".notifications-toasts .notification-toast:visible").first();
        assert(
          (await box.getByRole("button", { name: "Show details" }).count()) === 1,
          `no "Show details" button: ${toast}`,
        );
        const message = await box.locator(".notification-list-item-message").innerText();
        assert(!/\n|\\n/.test(message.trim()), `a multi-line message in a toast: ${message}`);
        await r.shot("one-line-error");
        await box.getByRole("button", { name: "Show details" }).click();
        await r.until(
          "the Kernel Lens output",
          async () => /Kernel Lens/.test(await r.panelText()),
          10_000,
        );
        await r.until(
          "the status item back to normal",
          async () => !/Kernel Lens error/.test(await r.statusBarText()),
          20_000,
        );
        await r.hidePanel();
      });
      await r.step("close the editors", 15_000, async () => {
        await r.command("View: Close All Editor Groups");
      });
    },
  },
  {
    name: "32. a large trace file (300k events): progress while it is read, then its timeline",
    async run(r) {
      const name = "big_step.pt.trace.json";
      await r.step("write a 300k-event trace into the workspace", 60_000, async () => {
        // The recorded H200 step repeated end to end, ids kept apart (benchmarks/trace_synth.py).
        const base = JSON.parse(
          await readFile(path.join(r.workspace, "matmul_relu.pt.trace.json"), "utf8"),
        );
        const timed = base.traceEvents.filter((e) => e.ph !== "M" && e.cat !== "Trace");
        const stamps = timed.filter((e) => typeof e.ts === "number");
        const t0 = Math.min(...stamps.map((e) => e.ts));
        const t1 = Math.max(...stamps.map((e) => e.ts + (e.dur ?? 0)));
        const period = t1 - t0 + 10;
        const ids = ["External id", "correlation", "Record function id", "Ev Idx", "Python id"];
        const out = base.traceEvents.filter((e) => e.ph === "M" || e.cat === "Trace");
        for (let k = 0; out.length < 300_000; k++) {
          for (const e of timed) {
            const c = { ...e, ts: typeof e.ts === "number" ? e.ts + k * period : e.ts };
            if (typeof e.id === "number") c.id = e.id + k * 1_000_000;
            if (e.args && typeof e.args === "object") {
              c.args = { ...e.args };
              for (const key of ids) {
                if (Number.isInteger(c.args[key])) c.args[key] += k * 1_000_000;
              }
            }
            out.push(c);
          }
        }
        const { writeFile } = await import("node:fs/promises");
        await writeFile(
          path.join(r.workspace, name),
          JSON.stringify({ ...base, traceEvents: out }),
        );
        r.log(`    ${out.length} events written to ${name}`);
      });
      await r.step(
        "open it: the viewer says it is reading, then draws the timeline",
        180_000,
        async () => {
          await r.openFromExplorer(name);
          const loading = await r.waitWebview(
            "the trace viewer reading the file",
            (v) => v.mode === "trace" && /Reading big_step/.test(v.text),
            30_000,
          );
          r.log(`    ${loading.text.split("\n").find((l) => /Reading big_step/.test(l))}`);
          await r.shot("big-trace-loading");
          const seen = new Set();
          const view = await r.until(
            "the timeline of the big trace",
            async () => {
              for (const v of await r.webviews()) {
                if (v.mode !== "trace") continue;
                const line = v.text.split("\n").find((l) => /Reading big_step.*%/.test(l));
                if (line) seen.add(line);
                if (/events shown/.test(v.text)) return v;
              }
              return null;
            },
            150_000,
            200,
          );
          r.log(`    progress seen: ${[...seen].slice(0, 4).join(" | ") || "(none caught)"}`);
          assert(view.tab === "Timeline", `the big trace opened on "${view.tab}", not Timeline`);
          r.log(`    ${view.text.split("\n").find((l) => /events shown/.test(l))}`);
          const drawn = await r.until(
            "a GPU stream lane drawn",
            async () => {
              const texts = await r.canvasText(view.frame);
              return texts.some((t) => /GPU \d+ · stream \d+/.test(t)) ? texts : null;
            },
            15_000,
          );
          r.log(`    ${drawn.length} texts drawn`);
          // Each lane's header names where its time goes, even where no event is wide enough
          // to carry its name.
          const most = drawn.filter((t) => /most time: .+ \d+%/.test(t));
          assert(most.length >= 3, `no "most time" in the lane headers: ${drawn.join(" | ")}`);
          r.log(`    ${most.map((t) => t.trim()).join("\n    ")}`);
          await r.shot("big-trace-timeline");
        },
      );
      await r.step("close the viewer", 15_000, async () => {
        await r.command("View: Close All Editor Groups");
      });
    },
  },
  {
    name: "140. Show Assembly of a kernel in a workspace package: its package's imports resolve, the launch's types",
    async run(r) {
      const JIT = "@triton.jit";
      await r.step(
        "Show Assembly above gate_kernel (libpkg/ops/gate.py imports scale from libpkg.ops.utils)",
        60_000,
        async () => {
          await r.hidePanel();
          await r.openFile("gate.py");
          await r.gotoLine(await r.lineIn("libpkg/ops/gate.py", "def gate_norm(x"));
          await r.clickLensAbove(JIT, /^Show Assembly$/, 30_000);
          const picker = r.page.locator(".quick-input-widget");
          await r.until(
            "the stage picker of gate_kernel",
            async () =>
              (await picker.isVisible()) &&
              /Show Assembly of gate_kernel/.test(
                await picker.locator(".quick-input-title").innerText(),
              ),
            15_000,
          );
          await r.page.keyboard.press("Enter");
        },
      );
      await r.step(
        "the PTX opens beside it, and the lens counts its registers (no NameError)",
        150_000,
        async () => {
          const titles = await r.until(
            "an editor group showing gate_kernel.ptx beside gate.py",
            async () => {
              const t = await r.groupTitles();
              return t.includes("gate.py") && t.includes("gate_kernel.ptx") ? t : null;
            },
            140_000,
          );
          r.log(`    editor groups: ${titles.join(" | ")}`);
          const lens = await r.waitLensAbove(
            JIT,
            /PTX · \d+ regs · 0 spills · sm_\d+(?! · (types|suggested))/,
            15_000,
          );
          r.log(`    lens: ${lens.text}`);
          await r.shot("assembly-package-kernel");
        },
      );
    },
  },
  {
    name: "111. the optimisation loop: History tab after two runs, a run's text in the diff editor",
    async run(r) {
      const SQ_MUL = "def square_mul(x):";
      const BODY = "return x * x";
      const EDITED = "return x * x * x";
      const PANEL = "Kernel Lens: square_mul";
      const DELTA = /≈ same|ambiguous|too noisy to tell|vs \d/;
      const profileAgain = () => profileFresh(r, SQ_MUL, PROFILE_MS - 20_000);
      await r.step("profile square_mul (the first run kept)", PROFILE_MS, async () => {
        await r.command("View: Close All Editor Groups");
        await r.openFile("square.py");
        await r.gotoLine(await r.lineIn("square.py", SQ_MUL));
        const row = await profileAgain();
        r.log(`    summary: ${row.text}`);
      });
      await r.step(
        "edit its body (x * x * x), profile again: the lenses compare with the run before",
        PROFILE_MS,
        async () => {
          const source = r.editorIn("square.py");
          await r.clickInLine(BODY, "x * x", source);
          await r.page.keyboard.press("End");
          await r.page.keyboard.type(" * x");
          await r.until(
            "the edited line in the editor",
            async () => (await r.visibleLines(source)).find((l) => l.trim() === EDITED),
            10_000,
          );
          await profileAgain();
          const row = await r.waitLensAbove(SQ_MUL, DELTA, 10_000);
          r.log(`    summary: ${row.text}`);
          const line = await r.waitLensAbove(EDITED, /1 → 2 ops/, 10_000);
          r.log(`    line: ${line.text}`);
          await r.shot("history-delta-lens");
        },
      );
      await r.step("the Report's History tab: a chart and one row per run", 60_000, async () => {
        await r.clickLensAbove(SQ_MUL, /^Report$/);
        await r.until(
          `a "${PANEL}" editor`,
          async () => ((await r.groupTitles()).includes(PANEL) ? true : null),
          15_000,
        );
        const report = await r.waitWebview(
          "the report of square_mul",
          (v) => v.mode === "report" && v.title === "square_mul",
          30_000,
        );
        await report.frame.getByRole("tab", { name: "History" }).click();
        const view = await r.waitWebview(
          "the History tab with its runs",
          (v) => v.title === "square_mul" && v.tab === "History" && /runs? kept/.test(v.text),
          20_000,
        );
        const rows = await view.frame.locator("table.history-table tbody tr").allInnerTexts();
        const norm = rows.map((t) => t.replace(/\s+/g, " ").trim());
        r.log(`    ${norm.length} runs: ${norm.join(" | ")}`);
        assert(norm.length >= 2, `${norm.length} runs in the History tab`);
        assert(
          norm.slice(0, -1).every((t) => /≈ same|ambiguous|too noisy to tell|vs /.test(t)),
          `a run without its verdict: ${JSON.stringify(norm)}`,
        );
        assert(/first run/.test(norm[norm.length - 1] ?? ""), "the oldest run is not the first");
        const dots = await view.frame.locator("svg.history-chart circle").count();
        assert(dots === norm.length, `${dots} points on the chart for ${norm.length} runs`);
        await r.parkMouse();
        await r.shot("history-tab");
      });
      await r.step("Compare any two runs: the oldest against the newest", 30_000, async () => {
        const view = await r.waitWebview("the History tab", (v) => v.tab === "History");
        const picker = view.frame.getByRole("combobox", { name: "Compare against run" });
        const ids = await picker.locator("option").evaluateAll((o) => o.map((x) => x.value));
        const oldest = ids[ids.length - 1];
        await picker.selectOption(oldest);
        await view.frame
          .locator("table.history-table tbody tr")
          .first()
          .getByRole("button", { name: "Compare" })
          .click();
        const shown = await r.waitWebview(
          "the comparison of the newest run against the oldest",
          (v) =>
            v.tab === "History" &&
            // `against run 1`, or `against baseline (run 1)`: the run named once (issue 41)
            new RegExp(`Run ${ids[0]} against (run ${oldest}\\b|.*\\(run ${oldest}\\))`).test(
              v.text,
            ),
          15_000,
        );
        r.log(`    ${shown.text.match(/Run \d+ against[^\n]*/)?.[0] ?? ""}`);
        await r.shot("history-compare");
      });
      await r.step("Diff on the oldest run: VS Code's diff editor, run ↔ now", 30_000, async () => {
        const view = await r.waitWebview("the History tab", (v) => v.tab === "History");
        const oldest = view.frame.locator("table.history-table tbody tr").last();
        await oldest.getByRole("button", { name: "Diff" }).click();
        const title = await r.until(
          "a tab titled square_mul: run N ↔ now",
          async () => (await r.groupTitles()).find((t) => /^square_mul: run \d+ ↔ now$/.test(t)),
          15_000,
        );
        r.log(`    diff editor: ${title}`);
        const diff = r.page.locator(".monaco-diff-editor");
        await diff.first().waitFor({ state: "visible", timeout: 10_000 });
        // Its two sides fill in after the editor appears.
        const text = await r.until(
          "the diff editor's text",
          async () => {
            const shown = (await diff.first().innerText()).replace(/\u00a0/g, " ");
            return /def square_mul\(x\):/.test(shown) ? shown : null;
          },
          10_000,
        );
        assert(text.includes("x * x * x"), `the diff lacks the edited line: ${text.slice(0, 300)}`);
        await r.parkMouse();
        await r.shot("history-diff");
      });
      await r.step("undo the edit; close the editors", 30_000, async () => {
        await r.command("View: Focus First Editor Group");
        const source = r.editorIn("square.py");
        await r.clickInLine(EDITED, "x * x", source);
        // The typing is undone a word at a time: undo until the original body is back.
        await r.until(
          "the original body again",
          async () => {
            if ((await r.visibleLines(source)).some((l) => l.trim() === BODY)) return true;
            await r.page.keyboard.press("Control+Z");
            return null;
          },
          10_000,
          400,
        );
        const dirty = await r.page
          .locator(".tabs-container .tab.dirty .label-name", { hasText: "square.py" })
          .count();
        assert(dirty === 0, "square.py is still modified after the undo");
        await r.command("View: Close All Editor Groups");
      });
    },
  },
  {
    name: "41. Show Assembly on a GPU-only Triton tutorial without a GPU: types from its launch's text, Argument Types… picks fp16",
    needs: () => (HAS_CUDA ? "a GPU machine runs the launch itself (exact types)" : null),
    async run(r) {
      const JIT = "@triton.jit";
      const ptx = r.editorIn("add_kernel.ptx");
      await r.step("Show Assembly above add_kernel, PTX", 60_000, async () => {
        await r.closeEverything();
        await r.openFile("tutorial_add.py");
        await r.gotoLine(await r.lineIn("tutorial_add.py", "def add(x"));
        await r.clickLensAbove(JIT, /^Show Assembly$/, 30_000);
        await r.until("the stage picker", () => r.page.locator(".quick-input-widget").isVisible());
        await r.page.keyboard.press("Enter");
      });
      await r.step(
        "the PTX opens; the status bar says the types were read from the source",
        120_000,
        async () => {
          await r.until(
            "an editor group showing add_kernel.ptx",
            async () => ((await r.groupTitles()).includes("add_kernel.ptx") ? true : null),
            110_000,
          );
          const status = await r.until(
            "the status bar's 'types read from the source'",
            async () => {
              const text = await r.statusBarText();
              return /types read from the source/.test(text) ? text : null;
            },
            15_000,
          );
          r.log(`    status bar: ${status.match(/PTX[^$]*?source/)?.[0] ?? status}`);
          const lines = await r.visibleLines(ptx);
          assert(
            lines.some((l) => /^\.target sm_\d+/.test(l.trim())),
            "no .target line in the PTX",
          );
          await r.shot("assembly-gpu-only-text-types");
        },
      );
      await r.step(
        "Argument Types…: x_ptr → *fp16, compiled again with fp16 loads",
        120_000,
        async () => {
          await ptx.click({ position: { x: 300, y: 80 } });
          await r.command("Kernel Lens: Argument Types…");
          const picker = r.page.locator(".quick-input-widget");
          const row = (label) =>
            picker
              .locator(".quick-input-list .monaco-list-row")
              .filter({ has: r.page.locator(".label-name", { hasText: label }) })
              .first();
          await r.until("the parameter list with x_ptr", () => row("x_ptr").isVisible(), 15_000);
          const placeholder = await picker
            .locator(".quick-input-box input")
            .getAttribute("placeholder");
          r.log(`    picker: ${placeholder}`);
          assert(
            /assumed \*fp32 for x_ptr/.test(placeholder ?? ""),
            `no assumption said: ${placeholder}`,
          );
          await r.shot("assembly-argument-types");
          await row("x_ptr").click();
          await r.until("the pointer types", () => row("*fp16").isVisible(), 15_000);
          await row("*fp16").click();
          const status = await r.until(
            "the status bar's 'types picked'",
            async () => {
              const text = await r.statusBarText();
              return /types picked/.test(text) ? text : null;
            },
            100_000,
          );
          r.log(`    status bar: ${status.match(/PTX[^$]*?picked/)?.[0] ?? status}`);
          await r.find("ld.global.b16");
          const lines = await r.visibleLines(ptx);
          assert(
            lines.some((l) => /ld\.global(\.v\d)?\.b16/.test(l)),
            `no fp16 load in view: ${lines.slice(0, 5).join(" / ")}`,
          );
          await r.closeFind();
          await r.shot("assembly-fp16-picked");
        },
      );
    },
  },
  {
    name: "42. a GPU-only step on a CPU machine: the whole error from its lens, the setting that fixes it one click away",
    needs: () => (HAS_CUDA ? "the step runs on a GPU machine" : null),
    async run(r) {
      const DEF = "def step(x):";
      await r.step("Profile step: the lens says it failed, clipped", PROFILE_MS, async () => {
        await r.closeEverything();
        await r.openFile("gpu_only_step.py");
        await r.clickLensAbove(DEF, /^Profile$/, 30_000);
        const lens = await r.waitLensAbove(DEF, /Profile failed: unsupported/, PROFILE_MS - 5_000);
        r.log(`    lens: ${lens.text}`);
      });
      await r.step(
        "its click: the whole message and the actions, in one dialog",
        30_000,
        async () => {
          await r.clickLensAbove(DEF, /Profile failed: unsupported/, 10_000);
          const text = await r.until("the error dialog", () => r.dialogText(), 10_000);
          r.log(`    dialog: ${text}`);
          assert(/profiling step failed \(unsupported\)/.test(text), `no title: ${text}`);
          assert(/needs an NVIDIA GPU/.test(text), `the message is not whole: ${text}`);
          for (const label of ["Run on a GPU Machine…", "Go to Line 7", "Show Output"]) {
            assert(text.includes(label), `no ${label} button: ${text}`);
          }
          await r.shot("error-dialog");
          await r.dialogButton("Run on a GPU Machine…");
        },
      );
      await r.step(
        "the button opens kernelLens.agentCommand in the Settings editor",
        30_000,
        async () => {
          const found = await r.until(
            "the Settings editor on kernelLens.agentCommand",
            async () => {
              const body = await r.page.locator(".settings-editor").first();
              if (!(await body.isVisible().catch(() => false))) return null;
              const text = (await body.innerText()).replace(/\s+/g, " ");
              return /Agent Command/.test(text) ? text : null;
            },
            20_000,
          );
          r.log(
            `    settings: ${found.match(/Kernel Lens: Agent Command[^.]*\./)?.[0] ?? "shown"}`,
          );
          await r.shot("error-action-setting");
          await r.closeEverything();
        },
      );
    },
  },
  {
    name: "43. Choose Interpreter without the Python extension: the interpreters found, with their torch",
    async run(r) {
      await r.step(
        "the picker lists interpreters with their Python and torch versions",
        60_000,
        async () => {
          await r.closeEverything();
          await r.command("Kernel Lens: Choose Interpreter");
          const picker = r.page.locator(".quick-input-widget");
          const rows = await r.until(
            "interpreters in the picker",
            async () => {
              if (!(await picker.isVisible())) return null;
              const texts = await picker
                .locator(".quick-input-list .monaco-list-row")
                .allInnerTexts();
              return texts.some((t) =>
                /Python \d+\.\d+\.\d+ · (torch [\w.+]+|no torch) · (workspace|conda|PATH)/.test(t),
              )
                ? texts
                : null;
            },
            30_000,
          );
          r.log(`    ${rows.map((t) => t.replace(/\s+/g, " ")).join(" | ")}`);
          assert(
            rows.some((t) => /Browse for an interpreter/.test(t)),
            "no Browse entry",
          );
          await r.shot("choose-interpreter");
          await r.page.keyboard.press("Escape");
        },
      );
    },
  },
  {
    name: "46. a training script that never ends: its progress says where it is; Cancel keeps the part that ran",
    async run(r) {
      await r.step(
        "Profile Script: the progress names the line and the seconds",
        60_000,
        async () => {
          await r.closeEverything();
          await r.openFile("train_forever.py");
          await r.clickLensAbove('"""A training loop', /Profile Script/, 30_000);
          const toast = r.page
            .locator(".notifications-toasts .notification-toast")
            .filter({ hasText: /line \d+ of train_forever\.py · \d+ s/ });
          await toast.first().waitFor({ state: "visible", timeout: 45_000 });
          r.log(`    progress: ${(await toast.first().innerText()).replace(/\s+/g, " ")}`);
          await r.shot("script-progress");
        },
      );
      await r.step(
        "Cancel: the lens keeps the part that ran, labelled partial",
        60_000,
        async () => {
          await r.until(
            "a few seconds of the run",
            async () => {
              const t = (await r.toastTexts()).find((x) =>
                /train_forever\.py · ([3-9]|\d\d) s/.test(x),
              );
              return t ?? null;
            },
            30_000,
          );
          const toast = r.page
            .locator(".notifications-toasts .notification-toast")
            .filter({ hasText: /train_forever\.py/ });
          await toast.first().getByRole("button", { name: "Cancel" }).click();
          // The seconds the run takes to stop are not silent (issue 41).
          const cancelling = await r.until(
            "a 'Cancelling' notification",
            async () => (await r.toastTexts()).find((t) => /Cancelling — /.test(t)),
            5_000,
          );
          r.log(`    ${cancelling}`);
          await r.shot("script-cancelling");
          const row = await r.waitLensAbove(
            '"""A training loop',
            /partial: the first .* cancelled/,
            45_000,
          );
          r.log(`    lens: ${row.text}`);
          const line = await r.waitLensAbove(
            "loss.backward()",
            /backward pass|AccumulateGrad|autograd|\d+%|µs|ms/,
            15_000,
          );
          r.log(`    backward line: ${line.text}`);
          await r.shot("script-cancelled-partial");
        },
      );
    },
  },
  {
    name: "47. Generated Code of a model's forward whose inputs come from the script's own run",
    async run(r) {
      await r.step(
        "Show Generated Code with the cursor in MLP.forward (captured inputs)",
        240_000,
        async () => {
          await r.closeEverything();
          await r.openFile("train_step.py");
          await r.gotoLine((await r.lineIn("train_step.py", "h = self.fc1(x)")) + 0);
          await r.command("Kernel Lens: Show Generated Code");
          const titles = await r.until(
            "an editor group showing MLP.forward's generated code",
            async () => {
              const t = await r.groupTitles();
              return t.some((x) => /MLP\.forward\.compiled\.py$/.test(x)) ? t : null;
            },
            230_000,
            500,
          );
          r.log(`    editor groups: ${titles.join(" | ")}`);
          const toasts = await r.toastTexts();
          assert(
            !toasts.some((t) => /has no attribute/.test(t)),
            `an error: ${toasts.join(" / ")}`,
          );
          await r.shot("generated-code-captured-inputs");
          await r.closeEverything();
        },
      );
    },
  },
  {
    name: "40. a training step: the backward on the forward lines, the pass on loss.backward(), the context kept",
    async run(r) {
      const FILE = "train_step.py";
      const STEP = "def train_step(model, opt, x, y):";
      await r.step("Profile train_step: inputs from the script's run", PROFILE_MS, async () => {
        await r.closeEverything();
        await r.openFile(FILE);
        await r.gotoLine(await r.lineIn(FILE, STEP));
        await r.clickLensAbove(STEP, /^Profile$/, 30_000);
        const row = await r.waitLensAbove(STEP, SUMMARY, PROFILE_MS - 15_000);
        r.log(`    summary: ${row.text}`);
      });
      await r.step(
        "the forward line carries its backward; loss.backward() the pass",
        30_000,
        async () => {
          const fwd = await r.waitLensAbove("out = model(x)", /fwd \d+% · bwd \d+% · /, 15_000);
          r.log(`    forward line: ${fwd.text}`);
          const bwd = await r.waitLensAbove(
            "loss.backward()",
            /backward pass .* spread over lines \d+–\d+/,
            15_000,
          );
          r.log(`    backward line: ${bwd.text}`);
          assert(
            !/evaluate_function|AddmmBackward0/.test(bwd.text),
            `nodes left on loss.backward(): ${bwd.text}`,
          );
          await r.shot("training-step-lenses");
        },
      );
      await r.step("the hover lists the backward nodes the line caused", 30_000, async () => {
        await r.hoverOn("out = model(x)", "model");
        const text = await r.until(
          "a hover with the backward part",
          async () => {
            const hover = await r.hoverText();
            return hover?.includes("Backward caused by this line") ? hover : null;
          },
          15_000,
        );
        assert(text.includes("AddmmBackward0"), `no AddmmBackward0 in the hover: ${text}`);
        r.log(`    hover: ${text.replace(/\s+/g, " ").slice(0, 300)}`);
        await r.shot("training-step-hover");
        await r.page.mouse.move(5, 400);
        await r.page.keyboard.press("Escape");
      });
      await r.step(
        "forward_bf16 runs under the autocast the script called it in",
        PROFILE_MS,
        async () => {
          const DEF = "def forward_bf16(model, x):";
          // From the palette with the cursor in the function (the lens row above it can be
          // re-rendered under a click while the train_step lenses settle).
          await r.gotoLine(await r.lineIn(FILE, DEF));
          await r.clickInLine("h = model.fc1(x)", "fc1");
          await r.command("Kernel Lens: Profile Function at Cursor");
          await r.waitLensAbove(DEF, SUMMARY, PROFILE_MS - 30_000);
          await r.hoverOn("h = model.fc1(x)", "fc1");
          const text = await r.until(
            "a hover naming the calling context",
            async () => {
              const hover = await r.hoverText();
              return hover?.includes("captured at") ? hover : null;
            },
            15_000,
          );
          assert(
            text.includes("autocast cpu bfloat16 · no_grad"),
            `the hover does not say the calling context: ${text}`,
          );
          r.log(`    hover: ${text.replace(/\s+/g, " ").slice(0, 300)}`);
          await r.shot("captured-context-hover");
          await r.page.mouse.move(5, 400);
          await r.page.keyboard.press("Escape");
        },
      );
      await r.step(
        "train_step's Report at 1000, 1400 and 1920 px: tabs, source lines and calls all shown",
        90_000,
        async () => {
          const STEP = "def train_step(model, opt, x, y):";
          // From the palette with the cursor in it (a lens clicked while the row is re-rendered
          // after the last profile names a command VS Code has already dropped).
          await r.gotoLine((await r.lineIn(FILE, STEP)) + 1);
          await r.command("Kernel Lens: Show Report");
          const view = await r.waitWebview(
            "train_step's Report with its per-line table",
            (v) => v.mode === "report" && /train_step/.test(v.title) && /Per line/.test(v.text),
            45_000,
          );
          try {
            for (const width of [1000, 1400, 1920]) {
              await r.page.setViewportSize({ width, height: 900 });
              let last = null;
              const fit = await r.until(
                `the Report laid out at ${width} px`,
                async () => {
                  const m = await view.frame.evaluate(() => {
                    const doc = document.documentElement.clientWidth;
                    const tabs = [...document.querySelectorAll('[role="tab"]')].map(
                      (t) => t.getBoundingClientRect().right,
                    );
                    const codes = [...document.querySelectorAll("table.lines td.source code")];
                    const ops = [...document.querySelectorAll("table.lines td.op")];
                    const heads = [...document.querySelectorAll("table.lines th")];
                    const calls = heads.find((h) => h.textContent === "Calls");
                    const scroller = document.querySelector(".table-scroll");
                    return {
                      doc,
                      tabsRight: Math.max(...tabs),
                      sourceMin: Math.min(...codes.map((c) => c.getBoundingClientRect().width)),
                      opMin: Math.min(...ops.map((c) => c.getBoundingClientRect().width)),
                      sourceLines: Math.max(
                        ...codes.map((c) => Math.round(c.getBoundingClientRect().height)),
                      ),
                      lineHeight: codes.length
                        ? parseFloat(getComputedStyle(codes[0]).lineHeight) || 18
                        : 18,
                      callsRight: calls ? calls.getBoundingClientRect().right : 0,
                      scrollable: scroller ? scroller.scrollWidth > scroller.clientWidth : false,
                    };
                  });
                  // Laid out once the panel's width holds still between two looks.
                  const same = last !== null && last.doc === m.doc;
                  last = m;
                  return same && m.doc > 0 && m.callsRight > 0 ? m : null;
                },
                15_000,
              );
              r.log(`    ${width} px: ${JSON.stringify(fit)}`);
              assert(fit.tabsRight <= fit.doc + 1, `a tab is cut at ${width} px`);
              assert(fit.sourceMin >= 80, `the Source column is squeezed at ${width} px`);
              assert(fit.opMin >= 100, `the Op column is squeezed at ${width} px`);
              assert(
                fit.sourceLines <= fit.lineHeight * 1.6,
                `a source line wraps at ${width} px (${fit.sourceLines} px high)`,
              );
              // From 1400 px every column is in view; in the narrower panel the table scrolls.
              assert(
                fit.callsRight <= fit.doc + 1 || (width < 1400 && fit.scrollable),
                `the Calls column is cut at ${width} px`,
              );
              await r.shot(`report-width-${width}`);
            }
          } finally {
            await r.page.setViewportSize({ width: 1400, height: 900 });
          }
        },
      );
      await r.step(
        "Reload Window: the Report comes back on train_step, no empty editor group",
        150_000,
        async () => {
          await r.reloadWindow();
          const view = await r.waitWebview(
            "train_step's Report after the reload",
            (v) => v.mode === "report" && /train_step/.test(v.title) && /Per line/.test(v.text),
            120_000,
          );
          const titles = await r.groupTitles();
          r.log(`    editor groups: ${titles.join(" | ")}; report tab: ${view.tab}`);
          assert(!titles.includes(""), `an empty editor group after the reload: ${titles}`);
          await r.shot("report-restored-after-reload");
        },
      );
    },
  },
  {
    name: "44. a layer of a model file profiled from its driver (the quick fix), then the model file's lines after a Profile Script of the driver",
    async run(r) {
      const MODEL = "attn_model.py";
      const BENCH = "attn_bench.py";
      const DEF = "def forward(self, x):";
      await r.step(
        "Profile Attention.forward: the model file never calls it",
        PROFILE_MS,
        async () => {
          await r.closeEverything();
          await r.openFile(MODEL);
          await r.clickLensAbove(DEF, /^Profile$/, 30_000);
          const failed = await r.waitLensAbove(DEF, /Profile failed: inputs/, PROFILE_MS - 15_000);
          r.log(`    lens: ${failed.text}`);
        },
      );
      await r.step(
        "the quick fix offers the driver that imports the module",
        PROFILE_MS,
        async () => {
          await r.clickInLine(DEF, "forward");
          await r.page.keyboard.press("Control+.");
          const fix = r.page
            .locator(".action-widget")
            .getByText("Take the inputs from attn_bench.py (attn_bench.py → attn_model.py)");
          await fix.first().waitFor({ state: "visible", timeout: 15_000 });
          await r.shot("driver-quick-fix");
          // The directive is the preferred fix (first, selected); the driver is the next one.
          await r.page.keyboard.press("ArrowDown");
          await r.page.keyboard.press("Enter");
          const row = await r.waitLensAbove(DEF, SUMMARY, PROFILE_MS - 30_000);
          r.log(`    summary: ${row.text}`);
          await r.waitLensAbove("q, k, v = self.qkv(x).split(C, dim=2)", /aten::linear/, 10_000);
          await r.shot("profiled-from-driver");
        },
      );
      await r.step("the hover names the driver's line and the call chain", 30_000, async () => {
        await r.hoverOn("q, k, v = self.qkv(x).split(C, dim=2)", "qkv");
        const text = await r.until(
          "a hover naming the driver",
          async () => {
            const hover = await r.hoverText();
            return hover?.includes("inputs from") ? hover : null;
          },
          15_000,
        );
        const call = await r.lineIn(BENCH, "y = layer(x)");
        assert(
          text.includes(`inputs from ${BENCH}:${call} (y = layer(x) → Attention.forward)`) &&
            text.includes("float32[2, 32, 64]"),
          `the hover does not say where the inputs came from: ${text}`,
        );
        r.log(`    hover: ${text.replace(/\s+/g, " ").slice(0, 240)}`);
        await r.shot("driver-inputs-hover");
        await r.page.mouse.move(5, 400);
        await r.page.keyboard.press("Escape");
      });
      await r.step(
        "Profile Script on the driver, then the model file shows its lines from that run",
        PROFILE_MS,
        async () => {
          await r.openFile(BENCH);
          await r.gotoLine(1);
          await r.clickLensAbove('"""The driver of attn_model.py', /Profile Script/, 30_000);
          await r.waitLensAbove(
            '"""The driver of attn_model.py',
            /script · .* wall, one run/,
            PROFILE_MS - 20_000,
          );
          // The work is inside main(): on its own lines, not on the main() call.
          await r.waitLensAbove("x = torch.randn(2, 32, 64)", /aten::randn/, 10_000);
          await r.shot("driver-script-deep");
          await r.openFile(MODEL);
          await r.gotoLine(1);
          const head = await r.waitLensAbove(
            '"""An attention layer kept in a model file',
            /from attn_bench\.py, \d\d:\d\d/,
            15_000,
          );
          r.log(`    model file: ${head.text}`);
          const sdpa = await r.waitLensAbove(
            "y = torch.nn.functional.scaled_dot_product_attention",
            /scaled_dot_product_attention/,
            10_000,
          );
          r.log(`    sdpa line: ${sdpa.text}`);
          // One row per line: the function's own profile wins where it has results…
          assert(!/×3/.test(sdpa.text), `two rows of results on one line: ${sdpa.text}`);
          // …and the run's lines show elsewhere: the layer's construction in main().
          const init = await r.waitLensAbove(
            "self.qkv = nn.Linear(dim, 3 * dim)",
            /aten::uniform_/,
            10_000,
          );
          r.log(`    __init__ line: ${init.text}`);
          await r.shot("model-lines-from-driver-run");
        },
      );
    },
  },
  {
    name: "45. Profile Memory: what each line of a CPU function allocates, its peak, what is alive at it",
    async run(r) {
      const FILE = "memory.py";
      const GROW = "def grow(n: int = 4):";
      const PANEL = "Kernel Lens: grow";
      await r.step("Profile Memory from the palette, the cursor in grow", PROFILE_MS, async () => {
        await r.closeEverything();
        await r.openFile(FILE);
        await r.gotoLine(await r.lineIn(FILE, GROW));
        await r.clickInLine("c = torch.cat([a, b])", "cat");
        await r.command("Kernel Lens: Profile Memory of Function at Cursor");
        const row = await r.waitLensAbove(GROW, /peak 48 MiB at line \d+/, PROFILE_MS - 15_000);
        r.log(`    summary: ${row.text}`);
      });
      await r.step(
        "each line: the bytes it allocated or freed, the live total",
        30_000,
        async () => {
          // 4 Mi float32 = 16 MiB, 2 Mi = 8 MiB, their cat 24 MiB, then `del a` frees 16 MiB
          for (const [line, pattern] of [
            ["a = torch.ones(n * MIB", /CPU \+16 MiB · live 16 MiB/],
            ["b = torch.ones(n * MIB // 2", /CPU \+8 MiB · live 24 MiB/],
            ["c = torch.cat([a, b])", /CPU \+24 MiB · live 48 MiB/],
            ["del a", /CPU −16 MiB · live 32 MiB/],
          ]) {
            const lens = await r.waitLensAbove(line, pattern, 15_000);
            r.log(`    ${line}: ${lens.text}`);
          }
          await r.parkMouse();
          await r.shot("memory-lenses");
        },
      );
      await r.step("the peak line's hover lists what was alive, by line", 30_000, async () => {
        await r.hoverOn("c = torch.cat([a, b])", "cat");
        const text = await r.until(
          "a hover with the peak",
          async () => {
            const hover = await r.hoverText();
            return hover?.includes("Peak") ? hover : null;
          },
          15_000,
        );
        for (const part of ["24 MiB from line", "16 MiB from line", "8 MiB from line"]) {
          assert(text.includes(part), `no "${part}" in the hover: ${text}`);
        }
        r.log(`    hover: ${text.replace(/\s+/g, " ").slice(0, 400)}`);
        await r.shot("memory-hover");
        await r.page.mouse.move(5, 400);
        await r.page.keyboard.press("Escape");
      });
      await r.step("the Report: the memory lane and the live-at-peak list", 45_000, async () => {
        await r.clickLensAbove(GROW, /^Report$/);
        const view = await r.waitWebview(
          "the report of grow with its memory",
          (v) =>
            v.mode === "report" && v.title === "grow" && /Memory · CPU · peak 48 MiB/.test(v.text),
          30_000,
        );
        const rows = await view.frame.locator("table.memory-live tbody tr").allInnerTexts();
        const norm = rows.map((t) => t.replace(/\s+/g, " ").trim());
        r.log(`    alive at the peak: ${norm.join(" | ")}`);
        assert(norm[0]?.startsWith("24 MiB"), `the largest group is not first: ${norm}`);
        assert((await view.frame.locator("svg.memory-lane path").count()) === 1, "no memory lane");
        await r.parkMouse();
        await r.shot("memory-report");
        await view.frame.getByRole("tab", { name: "Timeline" }).click();
        await r.until(
          "a memory lane in the timeline",
          async () =>
            (await view.frame.locator("section.timeline canvas.timeline-memory").count()) > 0
              ? true
              : null,
          15_000,
        );
        await r.parkMouse();
        await r.shot("memory-timeline");
        assert((await r.groupTitles()).includes(PANEL), `no "${PANEL}" editor`);
      });
    },
  },
  {
    name: "48. an interpreter without torch, then fixed: the first-run notification goes with the problem",
    async run(r) {
      const { mkdir, writeFile } = await import("node:fs/promises");
      const folder = path.join(r.workspace, ".vscode");
      const settings = path.join(folder, "settings.json");
      const bare = ["/usr/bin/python3", "/bin/python3"].find((p) => existsSync(p));
      if (bare === undefined) throw new Error("no system python3 without torch on this machine");
      await mkdir(folder, { recursive: true });
      try {
        await r.step(
          `kernelLens.python = ${bare}: the notification names what is missing`,
          90_000,
          async () => {
            await r.closeEverything();
            await writeFile(settings, JSON.stringify({ "kernelLens.python": bare }, null, 2));
            const toast = await r.until(
              "the first-run notification",
              async () =>
                (await r.toastTexts()).find((t) =>
                  /has (neither torch|no torch)|not installed in/.test(t),
                ) ?? null,
              80_000,
            );
            r.log(`    notification: ${toast}`);
            await r.shot("first-run-notification");
          },
        );
        await r.step(
          "the setting removed: the server starts and the notification is gone",
          120_000,
          async () => {
            await writeFile(settings, "{}\n");
            await r.until(
              "the server running again and the notification withdrawn",
              async () => {
                const stale = (await r.toastTexts()).some((t) =>
                  /has (neither torch|no torch)|not installed in/.test(t),
                );
                const status = await r.statusBarText();
                return !stale && /Kernel Lens/.test(status) && !/unavailable/i.test(status)
                  ? status
                  : null;
              },
              110_000,
              500,
            );
            await r.shot("first-run-fixed");
          },
        );
      } finally {
        await writeFile(settings, "{}\n");
      }
    },
  },
  {
    name: "70. a model from an installed package: Attribute inside it, then its file shows its lines",
    async run(r) {
      const FILE = "tiny_train.py";
      const CALL = "out = model(x)";
      const OFFER = /% inside tinymodel · Attribute inside tinymodel/;
      await r.step(
        "Profile Script: the call line says its time is inside tinymodel",
        PROFILE_MS,
        async () => {
          await r.closeEverything();
          await r.openFile(FILE);
          await r.clickLensAbove("import torch", /Profile Script/, 30_000);
          const offer = await r.waitLensAbove(CALL, OFFER, PROFILE_MS - 15_000);
          r.log(`    call line: ${offer.text}`);
          await r.shot("package-offer");
        },
      );
      await r.step(
        "Attribute inside tinymodel: run again, offered for the settings",
        PROFILE_MS,
        async () => {
          await r.clickLensAbove(CALL, OFFER, 15_000);
          const toast = await r.until(
            "the offer to add tinymodel to the setting",
            async () =>
              (await r.toastTexts()).find((t) =>
                /attribute inside tinymodel in every run/.test(t),
              ) ?? null,
            20_000,
          );
          r.log(`    notification: ${toast}`);
          await r.shot("package-rerun");
        },
      );
      await r.step(
        "the package's file (opened by path): its lines, read-only",
        PROFILE_MS,
        async () => {
          const layers = path.join(
            r.workspace,
            "..",
            "env",
            "site-packages",
            "tinymodel",
            "layers.py",
          );
          await r.command("File: Open File...");
          const input = r.page.locator(".quick-input-widget input").first();
          // The simple file dialog fills in its folder once it has read it: type the path after
          // that (and again if it was overwritten) before pressing Enter.
          await r.until(
            "the Open File dialog with the path typed",
            async () => {
              if ((await input.inputValue()) === layers) return true;
              if ((await input.inputValue()) !== "") await input.fill(layers);
              return null;
            },
            15_000,
            300,
          );
          await input.press("Enter");
          // VS Code's own question for a file outside the trusted folder: opened (as Go to
          // Definition into site-packages asks it too).
          const asked = await r
            .until(
              "VS Code's question about a file outside the workspace",
              () => r.dialogText(),
              5_000,
            )
            .catch(() => null);
          if (asked !== null) {
            r.log(`    VS Code asks: ${asked.replace(/\s+/g, " ").slice(0, 100)}`);
            await r.shot("package-file-untrusted-question");
            await r.dialogButton("Open");
          }
          await r.page
            .locator(".tabs-container .tab.active", { hasText: "layers.py" })
            .waitFor({ timeout: 15_000 });
          // (the lenses come once the run started from tiny_train.py has ended)
          const head = await r.waitLens(
            /tinymodel \(read-only\) · from tiny_train\.py/,
            PROFILE_MS - 30_000,
          );
          r.log(`    header: ${head}`);
          const proj = await r.waitLensAbove("h = self.proj(x)", /linear/, 15_000);
          r.log(`    h = self.proj(x): ${proj.text}`);
          const texts = await r.lensTexts();
          assert(
            !texts.some((t) => /^Profile$|Profile Script|Re-profile/.test(t)),
            `a lens that would run the package's file: ${texts.join(" | ")}`,
          );
          await r.shot("package-file-lenses");
        },
      );
      await r.step(
        "a function profiled inside tinymodel: the Report says where the time is, by file",
        PROFILE_MS + 60_000,
        async () => {
          const DEF = "def step(x):";
          await r.closeEverything();
          await r.openFile("tiny_step.py");
          await r.gotoLine(await r.lineIn("tiny_step.py", DEF));
          await r.clickLensAbove(DEF, /^Profile$/, 30_000);
          await r.clickLensAbove(CALL, OFFER, PROFILE_MS - 30_000);
          await r.until(
            "the call line without the offer (the model's lines are in the package)",
            async () => {
              const row = await r.lensesAbove(CALL);
              return row !== null && /ops|fwd|µs/.test(row.text) && !OFFER.test(row.text)
                ? row.text
                : null;
            },
            PROFILE_MS - 30_000,
            500,
          );
          await r.clickLensAbove(DEF, /^Report$/, 30_000);
          const view = await r.waitWebview(
            "the report of step with its By file section",
            (v) => /step/.test(v.title) && /By file/.test(v.text),
            30_000,
          );
          const byFile = /tinymodel \d+% · workspace \d+%|workspace \d+% · tinymodel \d+%/.exec(
            view.text,
          );
          assert(
            byFile !== null,
            `no package/workspace split in the report: ${view.text.slice(0, 400)}`,
          );
          r.log(`    by file: ${byFile[0]}`);
          assert(/layers\.py/.test(view.text), "the report does not name layers.py");
          await r.shot("package-report-by-file");
        },
      );
    },
  },
  ...INTERP_SCENARIOS,
  ...KERNEL_LINES_SCENARIOS,
  {
    name: "147. Compare Assembly from a kernel's PTX view: the diff editor with each side's summary, normalised ↔ original",
    async run(r) {
      const JIT = "@triton.jit";
      const diff = r.page.locator(".monaco-diff-editor").first();
      const picker = r.page.locator(".quick-input-widget");
      const row = (label) =>
        picker
          .locator(".quick-input-list .monaco-list-row")
          .filter({ has: r.page.locator(".label-name", { hasText: label }) })
          .first();
      await r.step("Show Assembly above square_kernel, PTX", 150_000, async () => {
        await r.closeEverything();
        await r.openFile("triton_square.py");
        await r.gotoLine(await r.lineIn("triton_square.py", "def square(x, BLOCK_SIZE"));
        await r.clickLensAbove(JIT, /^Show Assembly$/, 30_000);
        await r.until("the stage picker", () => picker.isVisible(), 15_000);
        await r.page.keyboard.press("Enter");
        await r.until(
          "an editor group showing square_kernel.ptx",
          async () => ((await r.groupTitles()).includes("square_kernel.ptx") ? true : null),
          120_000,
        );
      });
      await r.step(
        "Compare Assembly… from the PTX view: PTX, then the same kernel at BLOCK_SIZE=64",
        30_000,
        async () => {
          await r.editorIn("square_kernel.ptx").click({ position: { x: 300, y: 80 } });
          await r.command("Kernel Lens: Compare Assembly…");
          await r.until("the stage picker (PTX first)", () => row("PTX").isVisible(), 15_000);
          await r.page.keyboard.press("Enter");
          const title = await r.until(
            "the 'compare square_kernel with…' picker",
            async () => {
              if (!(await row("with other constexprs").isVisible())) return null;
              return picker.locator(".quick-input-title").innerText();
            },
            20_000,
          );
          const labels = await picker
            .locator(".quick-input-list .monaco-list-row .label-name")
            .allInnerTexts();
          r.log(`    ${title}: ${labels.join(" | ")}`);
          assert(/compare square_kernel with/.test(title), `picker title: ${title}`);
          await r.shot("asm-diff-picker");
          await row("with other constexprs").click();
          const input = picker.locator(".quick-input-box input");
          await r.until("the NAME=VALUE input", () => input.isVisible(), 10_000);
          await input.fill("BLOCK_SIZE=64");
          await input.press("Enter");
        },
      );
      await r.step(
        "the diff editor opens, each side headed by its summary and what differs most",
        150_000,
        async () => {
          const tab = await r.until(
            "a diff editor titled square_kernel · BLOCK_SIZE=1024 ↔ square_kernel · BLOCK_SIZE=64",
            async () => {
              const titles = await r.groupTitles();
              return titles.find((t) => /↔/.test(t)) ?? null;
            },
            140_000,
          );
          r.log(`    tab: ${tab}`);
          assert(
            /BLOCK_SIZE=1024 ↔ square_kernel · BLOCK_SIZE=64 · PTX \(normalised\)/.test(tab),
            `tab: ${tab}`,
          );
          // Side by side or inline (a narrow group): the lines of both sides, top to bottom.
          const lines = await r.until(
            "both sides' summaries",
            async () => {
              const seen = await r.visibleLines(diff);
              return seen.some((l) => /^\/\/ A: square_kernel/.test(l)) &&
                seen.some((l) => /^\/\/ B: square_kernel/.test(l))
                ? seen
                : null;
            },
            15_000,
          );
          for (const l of lines.filter((x) => x.startsWith("//")).slice(0, 12)) r.log(`    ${l}`);
          const has = (re) => lines.some((l) => re.test(l));
          assert(
            has(
              /^\/\/ A: square_kernel · Triton · triton_square\.py · BLOCK_SIZE=1024 · PTX sm_\d+/,
            ),
            "no A title (BLOCK_SIZE=1024)",
          );
          assert(
            has(/^\/\/ B: square_kernel · Triton · triton_square\.py · BLOCK_SIZE=64 · PTX sm_\d+/),
            "no B title (BLOCK_SIZE=64)",
          );
          assert(
            has(/global loads 2 × 128-bit/) && has(/global loads 1 × 32-bit/),
            "the summaries do not give the load widths",
          );
          assert(
            has(
              /differs most: A loads 128 bits per thread per instruction, B 32: B issues 4× the load/,
            ),
            "no 'differs most' line",
          );
          assert(has(/^\s*ld\.param\.b64 %rd0, \[param_0\];/), "no normalised PTX in sight");
          assert(!has(/^\s*\.loc\s/), "the normalised PTX still has .loc lines");
          const status = await r.statusBarText();
          r.log(`    status bar: ${status.match(/A loads[^$]*?instructions/)?.[0] ?? status}`);
          assert(/A loads 128 bits per thread/.test(status), `status bar: ${status}`);
          await r.shot("asm-diff");
        },
      );
      await r.step(
        "Normalised ↔ Original: the PTX as compiled, the summary kept",
        30_000,
        async () => {
          await diff.click({ position: { x: 200, y: 300 } });
          await r.command("Kernel Lens: Normalised ↔ Original");
          const tab = await r.until(
            "the diff retitled (original)",
            async () => (await r.groupTitles()).find((t) => /↔.*\(original\)/.test(t)) ?? null,
            15_000,
          );
          const lines = await r.until(
            "the original PTX (its LLVM banner) under the summary",
            async () => {
              const seen = await r.visibleLines(diff);
              return seen.some((l) => /Generated by LLVM NVPTX Back-End/.test(l)) ? seen : null;
            },
            15_000,
          );
          r.log(`    tab: ${tab}`);
          assert(
            lines.some((l) => /^\/\/ A: square_kernel/.test(l)),
            "no summary above the original",
          );
          await r.shot("asm-diff-original");
        },
      );
      if (hasNvcc()) {
        await r.step(
          "against the load_inline CUDA square (nvcc): B loads 32 bits, block 1024 from the launch",
          300_000,
          async () => {
            await r.page.keyboard.press("Escape");
            // The cursor in square_kernel, in the source's own editor (group 1).
            await r.clickInLine("x = tl.load(", "tl.load", r.editorIn("triton_square.py"));
            await r.command("Kernel Lens: Compare Assembly…");
            await r.until("the stage picker", () => row("PTX").isVisible(), 15_000);
            await r.page.keyboard.press("Enter");
            const cuda = picker
              .locator(".quick-input-list .monaco-list-row")
              .filter({ hasText: "CUDA · load_inline · inline_square.py" })
              .first();
            await r.until(
              "the load_inline CUDA kernel in the picker",
              () => cuda.isVisible(),
              20_000,
            );
            await cuda.click();
            const lines = await r.until(
              "a diff of the Triton square against the CUDA square",
              async () => {
                const titles = await r.groupTitles();
                if (!titles.some((t) => /BLOCK_SIZE=1024 ↔ square_kernel · PTX/.test(t)))
                  return null;
                const seen = await r.visibleLines(diff);
                return seen.some((l) => /^\/\/ B: square_kernel · CUDA \(load_inline/.test(l))
                  ? seen
                  : null;
              },
              280_000,
              1_000,
            );
            for (const l of lines.filter((x) => x.startsWith("// B") || /differs/.test(x))) {
              r.log(`    ${l}`);
            }
            const has = (re) => lines.some((l) => re.test(l));
            assert(has(/block 1024 threads \(the launch: threads = 1024\)/), "no CUDA block size");
            assert(has(/global loads 1 × 32-bit/), "no 32-bit CUDA load");
            assert(
              has(/differs most: A loads 128 bits per thread per instruction, B 32/),
              "no 'differs most' line",
            );
            await r.shot("asm-diff-cuda");
          },
        );
      }
      await r.step("close the editors", 15_000, async () => {
        await r.command("View: Close All Editor Groups");
      });
    },
  },
  NOTEBOOK_SCENARIO,
  ...ARGS_SCENARIOS,
  ...WALK41_SCENARIOS,
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

/** Copies the Kernel Lens output channel's logs of a code-server data folder next to the screenshots. */
export async function keepKernelLensLogs(work, outDir) {
  const logs = await findFiles(path.join(work, "data", "logs"), (f) => /Kernel Lens/.test(f));
  for (const [i, file] of logs.entries()) {
    await copyFile(file, path.join(outDir, `kernel-lens-output-${i + 1}.log`)).catch(() => {});
  }
}

/** Prints a pass/FAIL line per scenario result (`{name, ok, step, error, seconds}`). */
export function printResults(results) {
  for (const r of results) {
    const time = r.seconds === undefined ? "" : ` (${r.seconds.toFixed(0)} s)`;
    console.log(`[e2e] ${r.ok ? "pass" : "FAIL"}  ${r.name}${time}`);
    if (!r.ok) console.log(`[e2e]         at "${r.step}": ${r.error}`);
  }
}
