/**
 * The HTML shell of the report webview (the panel and the custom editors): a strict Content
 * Security Policy, one stylesheet and one script from the extension's `dist/webview` folder, and
 * an empty body the script fills from the messages it gets (`messages.ts`). No data goes into
 * the HTML; the few interpolated strings are escaped.
 *
 * Pure (no `vscode`), so the policy and the escaping are unit-tested.
 */
import { randomBytes } from "node:crypto";
import type { ViewMode } from "./messages";

/** What the shell needs; the URIs are `webview.asWebviewUri` strings. */
export interface ShellOptions {
  /** `webview.cspSource`. */
  cspSource: string;
  /** A fresh {@link makeNonce} per page. */
  nonce: string;
  scriptUri: string;
  styleUri: string;
  /** The page's title (a function's or a file's name). */
  title: string;
  mode: ViewMode;
}

const ENTITIES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** `text` safe in HTML text and in a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ENTITIES[ch] ?? ch);
}

/** A nonce for the page's script: 128 random bits, as hex. */
export function makeNonce(): string {
  return randomBytes(16).toString("hex");
}

/**
 * The page's Content Security Policy: nothing by default; images, styles and fonts only from
 * the extension's resources; scripts only with the nonce. No inline styles, no remote content,
 * no `eval`; no `<base>` to re-point relative URLs, no form to submit anywhere.
 */
export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(nonce)) {
    throw new Error(`not a valid CSP nonce: ${JSON.stringify(nonce)}`);
  }
  // One or more sources (VS Code in a browser gives `'self' https://*.vscode-cdn.net`), none of
  // which may end the directive or open another.
  const sources = cspSource.trim().split(/\s+/);
  if (cspSource.trim() === "" || !sources.every((t) => t === "'self'" || /^[^\s;,'"]+$/.test(t))) {
    throw new Error(`not a valid CSP source: ${JSON.stringify(cspSource)}`);
  }
  return [
    "default-src 'none'",
    `img-src ${sources.join(" ")} data:`,
    `style-src ${sources.join(" ")}`,
    `font-src ${sources.join(" ")}`,
    `script-src 'nonce-${nonce}'`,
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
}

/** The webview's HTML. */
export function shellHtml(options: ShellOptions): string {
  const csp = contentSecurityPolicy(options.cspSource, options.nonce);
  const e = escapeHtml;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${e(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${e(options.styleUri)}">
<title>${e(options.title)}</title>
</head>
<body data-mode="${e(options.mode)}">
<main id="app" aria-live="polite"></main>
<script nonce="${e(options.nonce)}" src="${e(options.scriptUri)}"></script>
</body>
</html>
`;
}
