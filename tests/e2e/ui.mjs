/**
 * Helpers that drive VS Code (code-server) in Chromium through playwright-core: steps with
 * timeouts, numbered screenshots, Quick Open, the command palette, code lenses by text and by
 * line, hovers, panels.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { CACHE } from "./codeserver.mjs";

/** playwright-core from .e2e-cache/ (not a dependency of the project). */
export function playwright() {
  const require = createRequire(path.join(CACHE, "package.json"));
  return require("playwright-core");
}

/** Chromium flags for a headless run on a machine without GPU or network (notes/vscode-e2e.md). */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Thrown by {@link Run.step} when a step passes its time limit. */
export class StepTimeout extends Error {}

/**
 * One editor end-to-end scenario, the default export of a file of tests/e2e/scenarios/: `name`
 * starts with its number (`"3. a syntax error …"`); `needs` says why this machine cannot run it
 * (or null: it runs); `last` runs it after all the others.
 * @typedef {{
 *   name: string,
 *   run: (r: Run) => Promise<void>,
 *   needs?: () => string | null,
 *   last?: boolean,
 * }} Scenario
 */

/**
 * One run of scenarios: the page, the screenshot folder and where we are (for failure reports).
 */
export class Run {
  /** @param {import('playwright-core').Page} page */
  constructor(page, outDir, workspace) {
    this.page = page;
    this.workspace = workspace;
    this.outDir = outDir;
    this.shots = 0;
    /** The latest screenshot of each name. */
    this.files = {};
    this.scenario = "";
    this.stepName = "";
    this.startedAt = Date.now();
    /** Bumped when a step times out, so that its polls stop instead of acting in the next step. */
    this.epoch = 0;
    /** Counts the lens links marked for a click (`clickLensAbove`). */
    this.clickMarks = 0;
    /**
     * Every console message and uncaught error of the page and its frames (webviews included),
     * in order: `{kind, type, text, url, scenario, step}`.
     */
    this.console = [];
    page.on("console", (message) => {
      const location = message.location();
      this.console.push({
        kind: "console",
        type: message.type(),
        text: message.text(),
        url: location?.url ?? "",
        scenario: this.scenario,
        step: this.stepName,
      });
    });
    page.on("pageerror", (error) => {
      this.console.push({
        kind: "pageerror",
        type: "error",
        text: `${error?.name ?? "Error"}: ${error?.message ?? error}`,
        url: "",
        scenario: this.scenario,
        step: this.stepName,
      });
    });
  }

  log(message) {
    const s = ((Date.now() - this.startedAt) / 1000).toFixed(1).padStart(6);
    console.log(`${s}s  ${message}`);
  }

  /** Runs `fn` as the named step; fails with {@link StepTimeout} after `timeoutMs`. */
  async step(name, timeoutMs, fn) {
    this.stepName = name;
    this.log(`  · ${name}`);
    let timer;
    const limit = new Promise((_, reject) => {
      timer = setTimeout(
        () => reject(new StepTimeout(`step timed out after ${timeoutMs / 1000} s`)),
        timeoutMs,
      );
    });
    try {
      return await Promise.race([fn(), limit]);
    } catch (error) {
      if (error instanceof StepTimeout) this.epoch += 1;
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Saves the page as `NN-name.png` in the output folder; returns the file's path. */
  async shot(name) {
    this.shots += 1;
    const file = path.join(this.outDir, `${String(this.shots).padStart(2, "0")}-${name}.png`);
    await this.page.screenshot({ path: file });
    this.files[name] = file;
    this.log(`    screenshot ${path.basename(file)}`);
    return file;
  }

  /** Polls `probe` until it returns a truthy value; throws `what` after `timeoutMs`. */
  async until(what, probe, timeoutMs = 30_000, everyMs = 200) {
    const deadline = Date.now() + timeoutMs;
    const epoch = this.epoch;
    let last;
    for (;;) {
      if (this.epoch !== epoch) throw new StepTimeout(`abandoned: ${what}`);
      try {
        last = await probe();
        if (last) return last;
      } catch (error) {
        last = error;
      }
      if (Date.now() > deadline) {
        const detail = last instanceof Error ? `: ${last.message}` : "";
        throw new Error(`${what} (waited ${timeoutMs / 1000} s)${detail}`);
      }
      await sleep(everyMs);
    }
  }

  // ---- workbench ------------------------------------------------------------------------

  /** Opens the workbench and waits until it has rendered. */
  async open(url) {
    if (!this.recording) {
      // Webview frames get it too: their canvases' text (timeline lane titles, chart labels)
      // can then be read back.
      await this.page.addInitScript(recordCanvasText);
      this.recording = true;
    }
    await this.page.goto(url);
    await this.page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
  }

  /** The modal dialog (e.g. workspace trust) if one is shown, else null. */
  async dialogText() {
    const dialog = this.page.locator(".monaco-dialog-box");
    if ((await dialog.count()) === 0 || !(await dialog.first().isVisible())) return null;
    return (await dialog.first().innerText()).replace(/\s+/g, " ");
  }

  /** Clicks a button of the modal dialog by its exact label. */
  async dialogButton(label) {
    await this.page
      .locator(".monaco-dialog-box")
      .getByRole("button", { name: label, exact: true })
      .click();
  }

  /**
   * After a failed scenario: closes pickers and every editor, discarding unsaved edits (the
   * workspace is a copy), so that the next scenario starts from an empty editor area.
   */
  async closeEverything() {
    await this.page.keyboard.press("Escape");
    await this.page.keyboard.press("Escape");
    // Only an editor with unsaved edits asks to save (its tab is marked dirty).
    const dirty = await this.page.locator(".tabs-container .tab.dirty").count();
    await this.command("View: Close All Editor Groups");
    if (dirty === 0) {
      const tabs = this.page.locator(".tabs-container .tab");
      await this.until("every editor closed", async () => (await tabs.count()) === 0, 10_000, 50);
      return;
    }
    for (let i = 0; i < 5; i += 1) {
      await sleep(500);
      const text = await this.dialogText();
      if (text === null || !/save/i.test(text)) break;
      await this.dialogButton("Don't Save");
    }
  }

  /** Moves the mouse to the explorer's empty space, where it shows no tooltip or hover. */
  async parkMouse() {
    await this.page.mouse.move(150, 600);
  }

  /** Opens the quick input with F1 and replaces its text (`>` prefix = commands). */
  async quickInput(text) {
    const input = this.page.locator(".quick-input-widget .quick-input-box input");
    await this.page.keyboard.press("Escape");
    await this.page.keyboard.press("F1");
    await input.waitFor({ state: "visible", timeout: 10_000 });
    await input.fill(text);
    return input;
  }

  /** Runs a command palette command by its full title, e.g. "Kernel Lens: Show Output". */
  async command(title) {
    await this.quickInput(`>${title}`);
    const row = this.page
      .locator(".quick-input-list .monaco-list-row")
      .filter({ has: this.page.locator(".label-name", { hasText: title }) })
      .first();
    await this.until(`the command palette to list "${title}"`, () => row.isVisible(), 15_000);
    await row.click();
    await this.parkMouse();
  }

  /**
   * Developer: Reload Window, then waits for the new document's workbench. The command returns
   * before the navigation starts, so the old page (and its webviews) would still answer a look
   * made at once: a marker set on the old window tells the two documents apart.
   */
  async reloadWindow() {
    await this.page.evaluate(() => {
      window.__kernelLensBeforeReload = true;
    });
    await this.command("Developer: Reload Window");
    await this.until(
      "the window to reload",
      async () => !(await this.page.evaluate(() => window.__kernelLensBeforeReload === true)),
      60_000,
      250,
    );
    await this.page.waitForLoadState("domcontentloaded");
    await this.page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
  }

  /** Opens a workspace file by name with Quick Open and waits for its editor tab. */
  async openFile(name) {
    await this.quickInput(name);
    const row = this.page
      .locator(".quick-input-list .monaco-list-row")
      .filter({ has: this.page.locator(".label-name", { hasText: name }) })
      .first();
    await this.until(`Quick Open to list ${name}`, () => row.isVisible(), 15_000);
    await row.click();
    await this.parkMouse();
    await this.page
      .locator(".tabs-container .tab.active", { hasText: name })
      .waitFor({ timeout: 15_000 });
    await this.editor().locator(".view-lines").waitFor({ timeout: 15_000 });
  }

  /** The active text editor (not the output panel's). */
  editor() {
    return this.page.locator(".editor-group-container.active .monaco-editor").first();
  }

  /** The editor group whose active tab's title matches `title` (a RegExp). */
  group(title) {
    return this.page.locator(".editor-group-container").filter({
      has: this.page.locator(".tabs-container .tab.active .label-name", { hasText: title }),
    });
  }

  /** The text editor of the group whose active tab's title matches `title`. */
  editorIn(title) {
    return this.group(title).locator(".monaco-editor").first();
  }

  /** Titles of the active tabs of the editor groups, left to right. */
  async groupTitles() {
    return this.page
      .locator(".editor-group-container")
      .evaluateAll((groups) =>
        groups.map(
          (g) => g.querySelector(".tabs-container .tab.active .label-name")?.textContent ?? "",
        ),
      );
  }

  /** Opens a file by clicking its entry in the explorer (which must list it). */
  async openFromExplorer(name) {
    await this.command("View: Show Explorer");
    const item = this.page.getByRole("treeitem", { name, exact: true });
    // The explorer draws only the rows in view: a name that sorts above or below them (a
    // `[Details](…)` file at the top of a long folder) is found by paging through the tree.
    if (!(await item.isVisible().catch(() => false))) {
      // the keyboard, not a click on a row (a click would open a file or fold a folder)
      await this.command("File: Focus on Files Explorer");
      await this.page.keyboard.press("Home");
      for (let i = 0; i < 30 && !(await item.isVisible().catch(() => false)); i++) {
        await this.page.keyboard.press("PageDown");
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    await item.waitFor({ state: "visible", timeout: 15_000 });
    await item.click();
    await this.page
      .locator(".tabs-container .tab.active", { hasText: name })
      .waitFor({ timeout: 15_000 });
    await this.parkMouse();
  }

  /** Moves the cursor to a 1-based line (Go to Line), revealing it, and focuses the editor. */
  async gotoLine(line, column = 1) {
    const input = await this.quickInput(`:${line}:${column}`);
    await input.press("Enter");
    await this.page
      .locator(".quick-input-widget")
      .waitFor({ state: "hidden", timeout: 10_000 })
      .catch(() => {});
  }

  /** 1-based number of the first line of workspace file `name` (as on disk) containing `text`. */
  async lineIn(name, text) {
    const lines = (await readFile(path.join(this.workspace, name), "utf8")).split("\n");
    const index = lines.findIndex((l) => l.includes(text));
    if (index < 0) throw new Error(`${name} has no line containing ${JSON.stringify(text)}`);
    return index + 1;
  }

  /** The visible lines' text of `editor` (default: the active editor), top to bottom. */
  async visibleLines(editor = this.editor()) {
    return editor.evaluate((node) => {
      const box = node.getBoundingClientRect();
      return [...node.querySelectorAll(".view-line")]
        .map((n) => ({ n, r: n.getBoundingClientRect() }))
        .filter(({ r }) => r.bottom > box.top && r.top < box.bottom)
        .sort((a, b) => a.r.top - b.r.top)
        .map(({ n }) => n.textContent.replace(/\u00a0/g, " "));
    });
  }

  /**
   * Searches the focused editor with its Find widget (Ctrl+F) and returns the widget's count,
   * e.g. `"1 of 3"` or `"No results"`; the match is revealed and selected. Escape closes it.
   */
  async find(text) {
    await this.page.keyboard.press("Control+F");
    const widget = this.page.locator(".editor-group-container.active .find-widget.visible");
    await widget.waitFor({ state: "visible", timeout: 10_000 });
    const input = widget.locator(".find-part textarea, .find-part input").first();
    await input.fill(text);
    const count = await this.until(
      `the Find widget's count for "${text}"`,
      async () => {
        const t = (await widget.locator(".matchesCount").innerText()).trim();
        return t !== "" && !/^\?/.test(t) ? t : null;
      },
      10_000,
    );
    await this.page.keyboard.press("Enter");
    return count;
  }

  /** Hides the panel (Problems, Output) if it is shown, for a taller editor area. */
  async hidePanel() {
    if (await this.page.locator(".part.panel").isVisible()) {
      await this.command("View: Hide Panel");
      await this.page.locator(".part.panel").waitFor({ state: "hidden", timeout: 5_000 });
    }
  }

  /** Scrolls `editor` (a locator) by `dy` pixels with the mouse wheel over it. */
  async scroll(editor, dy) {
    const box = await editor.boundingBox();
    if (!box) throw new Error("the editor to scroll is not shown");
    await this.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await this.page.mouse.wheel(0, dy);
    await this.parkMouse();
  }

  /** Closes the Find widget opened by {@link find} and waits until it is gone. */
  async closeFind() {
    await this.page.keyboard.press("Escape");
    await this.page
      .locator(".editor-group-container.active .find-widget.visible")
      .waitFor({ state: "hidden", timeout: 5_000 });
    // Its closing animation.
    await sleep(300);
  }

  // ---- code lenses ----------------------------------------------------------------------

  /**
   * Texts of the code lens rows currently rendered in the active editor: one string per line
   * that has lenses, e.g. `"0.129 ms ±2.3% · 3 ops · CPU | Re-profile"` (icons are not text).
   */
  async lensTexts() {
    // Only rows inside the editor's viewport: monaco keeps off-screen rows it has not
    // re-rendered yet, which the user cannot see.
    return this.editor().evaluate((editor) => {
      const view = editor.querySelector(".lines-content")?.parentElement ?? editor;
      const box = view.getBoundingClientRect();
      return [...editor.querySelectorAll(".codelens-decoration")]
        .filter((n) => {
          const r = n.getBoundingClientRect();
          return r.height > 0 && r.bottom > box.top && r.top < box.bottom;
        })
        .map((n) => n.textContent.replace(/\u00a0/g, " ").trim());
    });
  }

  /**
   * The lens row rendered directly above the visible line that contains `lineText`:
   * `{text, links: [{text, index}]}` (`index`: the link's position among all lens links of
   * `scope`), or null when the line is not visible or has no lenses. `scope` (default: the
   * active editor) may hold several editors, e.g. a notebook's cells: the row is looked up in
   * the editor of the line.
   */
  async lensesAbove(lineText, scope = this.editor(), mark = null) {
    return scope.evaluate(
      (root, [needle, mark]) => {
        const norm = (s) => s.replace(/\u00a0/g, " ").trim();
        const line = [...root.querySelectorAll(".view-line")].find((n) =>
          norm(n.textContent).includes(needle),
        );
        if (!line) return null;
        const editor = line.closest(".monaco-editor") ?? root;
        const top = line.getBoundingClientRect().top;
        const row = [...editor.querySelectorAll(".codelens-decoration")]
          .map((d) => ({ d, r: d.getBoundingClientRect() }))
          .filter(({ r }) => r.bottom <= top + 2 && r.bottom > top - r.height * 1.5 - 2)
          .sort((a, b) => b.r.bottom - a.r.bottom)[0];
        if (!row) return null;
        const anchors = [...root.querySelectorAll(".codelens-decoration a")];
        const links = [...row.d.querySelectorAll("a")];
        if (mark) {
          // In the same look-up: the first link of this row matching, for clickLensAbove.
          const pattern = new RegExp(mark.source, mark.flags);
          links
            .find((a) => pattern.test(norm(a.textContent)))
            ?.setAttribute("data-kl-click", mark.value);
        }
        return {
          text: norm(row.d.textContent),
          // What the row's lenses say in their hovers: a row too long for a narrow editor
          // keeps its verdict and folds the rest of its first lens there (issue 41).
          hover: [...row.d.querySelectorAll("[title]")]
            .map((n) => norm(n.getAttribute("title") ?? ""))
            .join(" "),
          links: links.map((a) => ({ text: norm(a.textContent), index: anchors.indexOf(a) })),
        };
      },
      [lineText, mark],
    );
  }

  /**
   * Waits for the lens row above the line containing `lineText` to match `pattern`: its text,
   * or its first lens's text with what a narrow editor folded into that lens's hover.
   */
  async waitLensAbove(lineText, pattern, timeoutMs = 30_000, scope = this.editor()) {
    return this.until(
      `a lens matching ${pattern} above "${lineText}"`,
      async () => {
        const row = await this.lensesAbove(lineText, scope);
        if (row !== null && (pattern.test(row.text) || pattern.test(row.hover))) return row;
        throw new Error(`the row above shows: ${row === null ? "no lens" : row.text}`);
      },
      timeoutMs,
    );
  }

  /**
   * Clicks the lens link above the line containing `lineText` whose text matches `pattern`.
   * The link is marked in the page when it is found and that very element is clicked: an index
   * among the page's lens links can point at another cell's link once lenses re-render (seen in
   * a notebook: Profile Cell ran on the cell above). A link replaced before the click is looked
   * up again.
   */
  async clickLensAbove(lineText, pattern, timeoutMs = 30_000, scope = this.editor()) {
    const mark = `kl-${++this.clickMarks}`;
    let found = null;
    await this.until(
      `a lens link matching ${pattern} above "${lineText}", clicked`,
      async () => {
        found = await this.lensesAbove(lineText, scope, {
          source: pattern.source,
          flags: pattern.flags,
          value: mark,
        });
        if (!found?.links.some((l) => pattern.test(l.text))) {
          // What the row showed instead, for the message if it never matches.
          throw new Error(`the row above shows: ${found === null ? "no lens" : found.text}`);
        }
        try {
          await scope.locator(`[data-kl-click="${mark}"]`).click({ timeout: 2_000 });
        } catch {
          // re-rendered between the look-up and the click: look it up again
          throw new Error(`the link was re-rendered before the click: ${found.text}`);
        }
        return true;
      },
      timeoutMs,
    );
    return found?.links.find((l) => pattern.test(l.text));
  }

  /** Waits until some lens row of the active editor matches `pattern`; returns its text. */
  async waitLens(pattern, timeoutMs = 30_000) {
    return this.until(
      `a lens matching ${pattern}`,
      async () => (await this.lensTexts()).find((t) => pattern.test(t)),
      timeoutMs,
    );
  }

  // ---- hovers, panels, notifications ----------------------------------------------------

  /**
   * Texts of the visible lines of `editor` (a locator; default: the active editor) that carry
   * Kernel Lens's linked-line highlight: the contributed colour `kernelLens.linkedLineBackground`
   * painted by a decoration. VS Code turns a decoration type into a generated class (`ced-…`)
   * whose rule holds the colour resolved for the theme, drawn as an element of the line's row
   * in `.view-overlays`; a line counts when such an element's background is that colour.
   */
  async linkedLines(editor = this.editor()) {
    return editor.evaluate((node) => {
      const workbench = document.querySelector(".monaco-workbench") ?? document.body;
      const wanted = getComputedStyle(workbench)
        .getPropertyValue("--vscode-kernelLens-linkedLineBackground")
        .trim();
      if (wanted === "")
        throw new Error("the theme defines no --vscode-kernelLens-linkedLineBackground");
      // The colour as computed styles spell it (rgba(…)), whatever the theme's notation.
      const probe = document.createElement("div");
      probe.style.backgroundColor = wanted;
      document.body.append(probe);
      const colour = getComputedStyle(probe).backgroundColor;
      probe.remove();
      const tops = new Set();
      for (const row of node.querySelectorAll(".view-overlays > div")) {
        const lit = [...row.children].some(
          (c) =>
            [...c.classList].some((k) => k.startsWith("ced-")) &&
            getComputedStyle(c).backgroundColor === colour,
        );
        if (lit) tops.add(Math.round(row.getBoundingClientRect().top));
      }
      const box = node.getBoundingClientRect();
      return [...node.querySelectorAll(".view-line")]
        .map((n) => ({ n, r: n.getBoundingClientRect() }))
        .filter(({ r }) => tops.has(Math.round(r.top)) && r.bottom > box.top && r.top < box.bottom)
        .sort((a, b) => a.r.top - b.r.top)
        .map(({ n }) => n.textContent.replace(/\u00a0/g, " "));
    });
  }

  /** Clicks on `needle` in the visible line of `editor` that contains `lineText` (the cursor goes there). */
  async clickInLine(lineText, needle = lineText, editor = this.editor()) {
    const point = await pointOf(editor, lineText, needle);
    if (!point) throw new Error(`"${needle}" is not on a visible line with "${lineText}"`);
    await this.page.mouse.click(point.x, point.y);
    await this.parkMouse();
    return point;
  }

  /** Moves the mouse over `needle` on the visible line containing `lineText`. */
  async hoverOn(lineText, needle) {
    const point = await pointOf(this.editor(), lineText, needle);
    if (!point) throw new Error(`"${needle}" is not on a visible line with "${lineText}"`);
    await this.page.mouse.move(point.x, point.y - 40);
    await this.page.mouse.move(point.x, point.y, { steps: 4 });
    return point;
  }

  // ---- webviews ------------------------------------------------------------------------

  /**
   * The content frames of Kernel Lens's webviews (report panel, custom editors): the inner
   * frame of each webview whose host frame's URL names the extension.
   */
  kernelLensFrames() {
    return this.page
      .frames()
      .filter((f) => /[?&]extensionId=kernel-lens\.kernel-lens(&|$)/.test(f.url()))
      .flatMap((host) => host.childFrames());
  }

  /**
   * What each Kernel Lens webview shows: `{frame, mode, title, tab, text}` (`mode`: report,
   * trace or ncu; `title`: its header; `tab`: the selected tab's label; `text`: all its text).
   */
  async webviews() {
    const found = [];
    for (const frame of this.kernelLensFrames()) {
      const info = await frame
        .evaluate(() => {
          const app = document.getElementById("app");
          if (!app) return null;
          return {
            mode: document.body.dataset.mode ?? "",
            title: app.querySelector("header h1")?.textContent ?? "",
            tab: app.querySelector('[role="tab"][aria-selected="true"]')?.textContent ?? "",
            text: app.innerText.replace(/\u00a0/g, " "),
          };
        })
        .catch(() => null);
      if (info) found.push({ frame, ...info });
    }
    return found;
  }

  /** Waits for a Kernel Lens webview for which `test(view)` holds; returns it. */
  async waitWebview(what, test, timeoutMs = 30_000) {
    return this.until(
      what,
      async () => (await this.webviews()).find((view) => test(view)),
      timeoutMs,
      250,
    );
  }

  /** Texts drawn on the canvases of `frame` since it loaded (see {@link recordCanvasText}). */
  async canvasText(frame) {
    return frame.evaluate(() => [...(window.__kernelLensE2eCanvasText ?? [])]);
  }

  /** The text of the visible hover widget, or null. */
  async hoverText() {
    const hover = this.page.locator(".monaco-hover:visible");
    if ((await hover.count()) === 0) return null;
    return (await hover.first().innerText()).replace(/\u00a0/g, " ");
  }

  /** Texts of the visible notification toasts. */
  async toastTexts() {
    return this.page
      .locator(".notifications-toasts .notification-toast:visible")
      .evaluateAll((nodes) => nodes.map((n) => n.innerText.replace(/\s+/g, " ").trim()));
  }

  /** The text of the visible panel (Problems, Output, …). */
  async panelText() {
    const panel = this.page.locator(".part.panel");
    if (!(await panel.isVisible())) return "";
    return (await panel.innerText()).replace(/\u00a0/g, " ");
  }

  /** The status bar's text. */
  async statusBarText() {
    return (await this.page.locator(".part.statusbar").innerText()).replace(/\s+/g, " ");
  }
}

/**
 * Page coordinates of the middle of `needle` in the first visible line of `editor` (a locator)
 * that contains `lineText`, or null.
 */
async function pointOf(editor, lineText, needle) {
  return editor.evaluate(
    (node, [lineNeedle, what]) => {
      const norm = (s) => s.replace(/\u00a0/g, " ");
      const box = node.getBoundingClientRect();
      const line = [...node.querySelectorAll(".view-line")].find((n) => {
        const r = n.getBoundingClientRect();
        return (
          norm(n.textContent).includes(lineNeedle) && r.top >= box.top && r.bottom <= box.bottom
        );
      });
      if (!line) return null;
      const offset = norm(line.textContent).indexOf(what);
      if (offset < 0) return null;
      // Walk the text nodes to the character in the middle of `what`.
      let remaining = offset + Math.floor(what.length / 2);
      const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
      for (let text = walker.nextNode(); text; text = walker.nextNode()) {
        if (remaining < text.length) {
          const range = document.createRange();
          range.setStart(text, remaining);
          range.setEnd(text, remaining + 1);
          const r = range.getBoundingClientRect();
          return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
        }
        remaining -= text.length;
      }
      return null;
    },
    [lineText, needle],
  );
}

/**
 * Init script for every frame other than the workbench: records the text that canvases draw
 * (`fillText`) in `window.__kernelLensE2eCanvasText`, so that a test can check what a canvas
 * shows (the timeline's lane titles, a chart's axis titles). Drawing itself is unchanged.
 */
function recordCanvasText() {
  if (window === window.top) return;
  const proto = window.CanvasRenderingContext2D?.prototype;
  if (!proto || Object.prototype.hasOwnProperty.call(window, "__kernelLensE2eCanvasText")) return;
  const texts = new Set();
  Object.defineProperty(window, "__kernelLensE2eCanvasText", { value: texts });
  const fillText = proto.fillText;
  proto.fillText = function (text, ...rest) {
    if (texts.size < 20_000) texts.add(String(text));
    return fillText.call(this, text, ...rest);
  };
}
