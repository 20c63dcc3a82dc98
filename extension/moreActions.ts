/**
 * The `…` lens of a function's row (`kernelLens.moreActions`): the actions that do not fit on
 * the row, as the server lists them (server/kernel_lens/lsp/code_lens.py), checked here.
 *
 * Pure (no `vscode` import): tests/ts/moreActions.test.ts.
 */

/** The command of the `…` lens (`CMD_MORE_ACTIONS` in code_lens.py). */
export const MORE_ACTIONS = "kernelLens.moreActions";

/** An action to run: a command id and its arguments. */
export interface EnabledAction {
  label: string;
  detail?: string;
  command: string;
  arguments: unknown[];
}

/** An action that cannot work here, with the reason. */
export interface DisabledAction {
  label: string;
  disabled: string;
}

export type MoreAction = EnabledAction | DisabledAction;

/** The argument of `kernelLens.moreActions`. */
export interface MoreActionsArgs {
  function: string;
  items: MoreAction[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isAction(value: unknown): value is MoreAction {
  if (!isRecord(value) || typeof value["label"] !== "string") {
    return false;
  }
  if (typeof value["disabled"] === "string") {
    return true;
  }
  return (
    typeof value["command"] === "string" &&
    value["command"] !== "" &&
    Array.isArray(value["arguments"]) &&
    (value["detail"] === undefined || typeof value["detail"] === "string")
  );
}

/** True for a well-formed argument of `kernelLens.moreActions`. */
export function isMoreActionsArgs(value: unknown): value is MoreActionsArgs {
  return (
    isRecord(value) &&
    typeof value["function"] === "string" &&
    Array.isArray(value["items"]) &&
    value["items"].every(isAction)
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
    "disabled" in item
      ? {
          label: item.label.replace(/^\$\([^)]+\)/, "$(circle-slash)"),
          description: `unavailable: ${item.disabled}`,
        }
      : {
          label: item.label,
          action: item,
          ...(item.detail === undefined || item.detail === "" ? {} : { detail: item.detail }),
        },
  );
}
