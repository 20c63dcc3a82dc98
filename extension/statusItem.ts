/**
 * The Kernel Lens status bar item: applies `status.ts`'s presentation; a click shows the output.
 *
 * Shown while a Python editor is active, and always while profiling or in trouble, so a
 * failure is seen wherever the user is.
 */
import * as vscode from "vscode";
import { Commands, DISPLAY_NAME, LANGUAGE } from "./constants";
import {
  ERROR_HOLD_MS,
  SHOWN_HOLD_MS,
  afterFailure,
  present,
  type Severity,
  type StatusInput,
  type ViewState,
} from "./status";

const BACKGROUND: Record<Severity, vscode.ThemeColor | undefined> = {
  none: undefined,
  warning: new vscode.ThemeColor("statusBarItem.warningBackground"),
  error: new vscode.ThemeColor("statusBarItem.errorBackground"),
};

export class StatusItem implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly subscriptions: vscode.Disposable[] = [];
  private input: StatusInput;
  /** Returns an error state to normal once the failure has been seen (see `afterFailure`). */
  private revert: ReturnType<typeof setTimeout> | undefined;

  constructor(trusted: boolean) {
    this.item = vscode.window.createStatusBarItem(
      "kernelLens.status",
      vscode.StatusBarAlignment.Left,
      0,
    );
    this.item.name = DISPLAY_NAME;
    this.item.command = Commands.showOutput;
    this.input = { state: "starting", message: "", trusted };
    this.subscriptions.push(
      vscode.window.onDidChangeActiveTextEditor(() => this.render()),
      this.item,
    );
    this.render();
  }

  /** The state shown now. */
  get state(): ViewState {
    return this.input.state;
  }

  /** Shows a new state; an error goes back to normal by itself after {@link ERROR_HOLD_MS}. */
  set(state: ViewState, message = "", uri?: string): void {
    this.input = { state, message, uri, trusted: this.input.trusted, held: this.input.held };
    this.schedule(state === "error" ? ERROR_HOLD_MS : undefined);
    this.render();
  }

  /**
   * A failure was shown to the user (a notification with "Show details"): an error state goes
   * back to normal shortly, instead of staying red until the next success.
   */
  failureShown(): void {
    if (this.input.state === "error") {
      this.schedule(SHOWN_HOLD_MS);
    }
  }

  private schedule(ms: number | undefined): void {
    if (this.revert !== undefined) {
      clearTimeout(this.revert);
      this.revert = undefined;
    }
    if (ms !== undefined) {
      this.revert = setTimeout(() => {
        this.revert = undefined;
        this.input = afterFailure(this.input);
        this.render();
      }, ms);
    }
  }

  /** Why the interpreter asked for is not run (undefined: it is), shown in the tooltip. */
  setHeld(held: string | undefined): void {
    this.input = { ...this.input, held };
    this.render();
  }

  setTrusted(trusted: boolean): void {
    this.input = { ...this.input, trusted };
    this.render();
  }

  dispose(): void {
    this.schedule(undefined);
    for (const subscription of this.subscriptions) {
      subscription.dispose();
    }
  }

  private render(): void {
    const presentation = present(this.input);
    this.item.text = presentation.text;
    this.item.tooltip = presentation.tooltip;
    this.item.backgroundColor = BACKGROUND[presentation.severity];
    const pythonEditor = vscode.window.activeTextEditor?.document.languageId === LANGUAGE;
    const notable = this.input.state !== "idle";
    if (pythonEditor || notable) {
      this.item.show();
    } else {
      this.item.hide();
    }
  }
}
