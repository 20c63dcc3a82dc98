/**
 * Registers the report: the `kernelLens.showReport` command (from the server's "Report" lens,
 * or the palette for the function at the cursor), the server's `kernelLens/revealReport`
 * notification, and the custom editors for trace and Nsight Compute files.
 */
import * as vscode from "vscode";
import { Commands } from "../constants";
import type { Ctx } from "../ctx";
import {
  isResultsChangedParams,
  isRevealReportParams,
  isShowReportArgs,
  ReportRequest,
  ResultsChangedNotification,
  RevealReportNotification,
} from "../protocol";
import { atCursor, reportFailure, sendChecked } from "../requests";
import { FileViewer } from "./customEditors";
import { ReportPanel } from "./panel";
import { REPORT_PANEL_TYPE, VIEW_TYPES } from "./viewTypes";
import { ClientWaiter, ThemeBroadcast } from "./webviews";

/** Registers everything of the report; call before the first client starts. */
export function registerReport(ctx: Ctx): void {
  const extensionUri = vscode.Uri.file(ctx.extensionPath);
  const clients = new ClientWaiter(ctx);
  const theme = new ThemeBroadcast();
  const panel = new ReportPanel(ctx, extensionUri, clients, theme);
  const trace = new FileViewer(ctx, extensionUri, "trace", clients, theme);
  const ncu = new FileViewer(ctx, extensionUri, "ncu", clients, theme);
  const options = {
    webviewOptions: { retainContextWhenHidden: false },
    supportsMultipleEditorsPerDocument: true,
  };
  ctx.pushExtCleanup(
    clients,
    theme,
    panel,
    vscode.commands.registerCommand(Commands.showReport, (arg: unknown) =>
      showReport(ctx, panel, arg),
    ),
    ctx.onClientCreated((client) => [
      client.onNotification(ResultsChangedNotification, (params: unknown) => {
        if (isResultsChangedParams(params)) {
          panel.refreshIf(params.uri, params.function);
        }
      }),
      client.onNotification(RevealReportNotification, (params: unknown) => {
        if (isRevealReportParams(params)) {
          panel.show({ uri: params.uri, function: params.function }, params.tab);
        } else {
          ctx.log.warn(
            `Ignoring malformed ${RevealReportNotification.method}: ${JSON.stringify(params)}`,
          );
        }
      }),
    ]),
    // The report panel comes back after *Reload Window* on the function it showed.
    vscode.window.registerWebviewPanelSerializer(REPORT_PANEL_TYPE, {
      deserializeWebviewPanel: (webviewPanel: vscode.WebviewPanel, state: unknown) => {
        panel.restore(webviewPanel, state);
        return Promise.resolve();
      },
    }),
    vscode.window.registerCustomEditorProvider(VIEW_TYPES.traceTimeline, trace, options),
    vscode.window.registerCustomEditorProvider(VIEW_TYPES.jsonTimeline, trace, options),
    vscode.window.registerCustomEditorProvider(VIEW_TYPES.ncuReport, ncu, options),
  );
}

/**
 * The lens's function, else the function at the cursor of the active Python editor: the server
 * finds it (`kernelLens/report` with the cursor), or says why there is none.
 */
async function showReport(ctx: Ctx, panel: ReportPanel, arg: unknown): Promise<void> {
  if (isShowReportArgs(arg)) {
    panel.show(arg);
    return;
  }
  const target = await atCursor(ctx, "the function to report on");
  if (target === undefined) {
    return;
  }
  try {
    const result = await sendChecked(ctx, target.client, ReportRequest, target.params);
    panel.show({ uri: target.uri, function: result.function });
  } catch (error) {
    reportFailure(ctx, ReportRequest.method, error);
  }
}
