/** Scenario 10 of the editor end-to-end run (tests/e2e/scenarios/index.mjs). */
import { assert } from "../common.mjs";

/** @type {import('../ui.mjs').Scenario} */
export default {
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
        r.log(`    canary: ${canary.map((m) => `${m.url} ${m.text.slice(0, 160)}`).join(" || ")}`);
        const ran = await view.frame.evaluate(() => window.__kernelLensE2eCanary === 1);
        assert(!ran, "the inline script ran: the webview has no effective Content Security Policy");
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
      for (const m of errors) r.log(`    uncaught error [${m.scenario}]: ${m.text.slice(0, 200)}`);
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
};
