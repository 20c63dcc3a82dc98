/**
 * The `…` lens of a function's row (`kernelLens.moreActions`): the actions that do not fit on
 * the row, as the server lists them (server/kernel_lens/lsp/code_lens.py), checked here. The
 * argument's type and check are the wire's (`MoreActionsArgs`, generated/wire.ts).
 *
 * Pure (no `vscode` import): tests/ts/moreActions.test.ts.
 */
import { is } from "./guards";
import {
  CLIENT_COMMAND_CHECKS,
  CMD_MORE_ACTIONS,
  type MoreAction,
  type MoreActionsArgs,
} from "./generated/wire";

/** An action to run: a command id and its arguments. */
export type EnabledAction = MoreAction & { command: string; arguments: unknown[] };

/** Whether an action can run here: a command (not empty) and its arguments, nothing disabled. */
function isEnabled(item: MoreAction): item is EnabledAction {
  return (
    item.disabled === undefined &&
    item.command !== undefined &&
    item.command !== "" &&
    item.arguments !== undefined
  );
}

const isArgs = is(CLIENT_COMMAND_CHECKS[CMD_MORE_ACTIONS]);

/**
 * True for a well-formed argument of `kernelLens.moreActions`: the wire's shape, each item
 * either disabled (with why) or one to run.
 */
export function isMoreActionsArgs(value: unknown): value is MoreActionsArgs {
  return (
    isArgs(value) && value.items.every((item) => item.disabled !== undefined || isEnabled(item))
  );
}

/** A quick pick item for an action, without `vscode`'s types. */
export interface PickItem {
  label: string;
  description?: string;
  detail?: string;
  action?: EnabledAction;
}

/**
 * The quick pick's items: an enabled action runs its command; a disabled one is listed, greyed
 * by its `$(circle-slash)` and its reason as the description, and does nothing when picked.
 */
export function pickItems(args: MoreActionsArgs): PickItem[] {
  return args.items.map((item) =>
    isEnabled(item)
      ? {
          label: item.label,
          action: item,
          ...(item.detail === undefined || item.detail === "" ? {} : { detail: item.detail }),
        }
      : {
          label: item.label.replace(/^\$\([^)]+\)/, "$(circle-slash)"),
          description: `unavailable: ${item.disabled ?? "nothing to run"}`,
        },
  );
}
