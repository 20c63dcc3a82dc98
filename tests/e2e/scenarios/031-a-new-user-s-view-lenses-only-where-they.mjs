/** Scenario 31 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { PROFILE_LINK, PROFILE_MS, SUMMARY, assert } from "../common.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
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
        async () => (await r.toastTexts()).find((t) => /Kernel Lens/.test(t) && /GPU|ncu/.test(t)),
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
};
