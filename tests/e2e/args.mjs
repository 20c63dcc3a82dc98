/**
 * Issue 41 items 1, 2 and 6 in the real editor (1280×800): a script's arguments given once and
 * used wherever it runs (as itself, as the driver of a layer in another file), a `--key=value`
 * script (nanoGPT's configurator.py) that fails on a device it was not given and is given its
 * CPU arguments from Ctrl+., the driver changed from the palette and kept after Reload Window,
 * and a baseline pinned only by an explicit action (with a toast and Undo).
 *
 * Fixtures: tests/e2e/fixtures/args_layer.py, args_train.py, kv_bench.py, configurator.py.
 * Run with `KERNEL_LENS_E2E_SCENARIOS=1,150,151,152,153` (1 trusts the workspace).
 *
 * The scenarios themselves are files of tests/e2e/scenarios/ (listed by its index.mjs); this
 * module keeps the helpers they share.
 */

export const LAYER = "args_layer.py";
export const TRAIN = "args_train.py";
export const DEF = "def forward(self, x):";
export const SUMMARY = /\d (ms|µs) ±[\d.]+%.*CPU/;
export const PROFILE_MS = 120_000;

export function assert(condition, message) {
  if (!condition) throw new Error(message);
}

/** Types a line into the open input box and accepts it. */
export async function answerInputBox(r, expectPrefill, text) {
  const input = r.page.locator(".quick-input-widget .quick-input-box input");
  await input.waitFor({ state: "visible", timeout: 15_000 });
  const prefill = await input.inputValue();
  if (expectPrefill !== null) {
    assert(prefill === expectPrefill, `the input box has "${prefill}", not "${expectPrefill}"`);
  }
  if (text !== null) await input.fill(text);
  await r.shot(`args-input-${text === null ? "prefilled" : "typed"}`);
  await r.page.keyboard.press("Enter");
}

/**
 * Ctrl+. on the def line, then the quick fix whose title contains `title`, chosen with the
 * keyboard (the menu's pointer block takes clicks). An answer that came before the server's
 * ("No code actions available") is closed and asked again, never clicked through.
 */
export async function quickFix(r, title) {
  await r.clickInLine(DEF, "forward");
  const fix = r.page.locator(".action-widget").getByText(title);
  await r.until(
    `the quick fix "${title}"`,
    async () => {
      await r.page.keyboard.press("Control+.");
      await r.page.waitForTimeout(1_500);
      if (await fix.first().isVisible()) return true;
      await r.page.keyboard.press("Escape");
      await r.page.waitForTimeout(1_000);
      return null;
    },
    40_000,
    200,
  );
  await r.shot(
    `quick-fix-${title
      .split(" ")
      .slice(0, 3)
      .join("-")
      .replace(/[^\w-]/g, "")}`,
  );
  const focused = r.page.locator(".action-widget .monaco-list-row.focused");
  for (let i = 0; i < 12; i++) {
    if (
      (
        (await focused
          .first()
          .textContent()
          .catch(() => "")) ?? ""
      ).includes(title)
    )
      break;
    await r.page.keyboard.press("ArrowDown");
    await r.page.waitForTimeout(150);
  }
  const chosen =
    (await focused
      .first()
      .textContent()
      .catch(() => "")) ?? "";
  assert(
    chosen.includes(title),
    `the quick fix menu's focused item is "${chosen}", not "${title}"`,
  );
  await r.page.keyboard.press("Enter");
}

/** Asserts every link of the row above `line` lies inside the editor's visible width. */
export async function rowFits(r, line) {
  const width = await r.editor().evaluate((e) => e.getBoundingClientRect().right);
  const rights = await r.editor().evaluate((root, needle) => {
    const norm = (s) => s.replace(/\u00a0/g, " ");
    const row = [...root.querySelectorAll(".view-line")].find((n) =>
      norm(n.textContent).includes(needle),
    );
    if (!row) return [];
    const top = row.getBoundingClientRect().top;
    const lens = [...root.querySelectorAll(".codelens-decoration")].find((d) => {
      const b = d.getBoundingClientRect();
      return b.bottom <= top + 2 && b.bottom > top - b.height * 1.5 - 2;
    });
    return lens
      ? [...lens.querySelectorAll("a, span")].map((a) => ({
          text: norm(a.textContent),
          right: a.getBoundingClientRect().right,
        }))
      : [];
  }, line);
  return { width, rights };
}

/** The window: 1280×800 (the harness's default is 1400×900). */
export async function at1280(r) {
  await r.page.setViewportSize({ width: 1280, height: 800 });
}
