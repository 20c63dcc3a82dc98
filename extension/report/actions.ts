/**
 * The server commands behind the report panel's buttons. Pure (no `vscode`), unit-tested.
 */
import type { ShowReportArgs } from "../generated/wire";
import { ReportServerCommands, ServerCommands } from "../protocol";
import type { FromWebview } from "./messages";

/** `workspace/executeCommand` params. */
export interface Invocation {
  command: string;
  arguments: [Record<string, unknown>];
}

/** The `workspace/executeCommand` params for a webview's action on `target`. */
export function commandFor(target: ShowReportArgs, message: FromWebview): Invocation | undefined {
  const base = { uri: target.uri, function: target.function };
  switch (message.type) {
    case "profile":
      return { command: ServerCommands.profile, arguments: [base] };
    case "runNcu":
      return { command: ReportServerCommands.runNcu, arguments: [{ ...base, set: message.set }] };
    case "sweep":
      return {
        command: ReportServerCommands.sweep,
        arguments: [
          {
            ...base,
            param: message.param,
            ...(message.values === null ? {} : { values: message.values }),
          },
        ],
      };
    case "applyParameter":
      return {
        command: ReportServerCommands.applyParameter,
        arguments: [{ ...base, param: message.param, value: message.value }],
      };
    default:
      return undefined;
  }
}
