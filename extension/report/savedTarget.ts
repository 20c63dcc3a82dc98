/**
 * The report panel's serializer's one pure part (no `vscode` import, unit-tested): which report
 * a webview's saved state names.
 */
import type { ShowReportArgs } from "../generated/wire";

/** The `target` a report webview saved (see `webview/vscodeApi.ts`), if it is one. */
export function savedTarget(state: unknown): ShowReportArgs | undefined {
  if (typeof state !== "object" || state === null) {
    return undefined;
  }
  const target = (state as { target?: unknown }).target;
  if (typeof target !== "object" || target === null) {
    return undefined;
  }
  const { uri, function: fn } = target as { uri?: unknown; function?: unknown };
  return typeof uri === "string" && typeof fn === "string" && uri !== "" && fn !== ""
    ? { uri, function: fn }
    : undefined;
}
