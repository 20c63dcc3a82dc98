/**
 * The server's cancellable work-done progress (a profile, an Nsight Compute run, a sweep) shown
 * as a notification with a Cancel button.
 *
 * vscode-languageclient shows server-created progress in the status bar (ProgressLocation.Window),
 * which has no Cancel button; this middleware takes over the cancellable ones, and cancelling
 * sends `window/workDoneProgress/cancel` for the token, which stops the job (the server kills
 * its agent). Non-cancellable progress keeps the library's default.
 */
import * as vscode from "vscode";
import { inert } from "./errorText";
import type {
  ProgressToken,
  WorkDoneProgressBegin,
  WorkDoneProgressEnd,
  WorkDoneProgressReport,
} from "vscode-languageclient";
import { withInertProgress } from "./notify";

interface Shown {
  report(message: string): void;
  finish(): void;
}

type Params = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;

/** `params` with its title and message made inert ({@link inert}). */
export function inertParams<P extends Params>(params: P): P {
  const out: P = { ...params };
  if ("title" in out && typeof out.title === "string") {
    out.title = inert(out.title);
  }
  if (out.message !== undefined) {
    out.message = inert(out.message);
  }
  return out;
}

/** Shows cancellable server progress as notifications; `cancel` is called with the token. */
export class NotificationProgress implements vscode.Disposable {
  private readonly shown = new Map<ProgressToken, Shown>();

  constructor(private readonly cancel: (token: ProgressToken) => void) {}

  /** The `handleWorkDoneProgress` middleware. */
  handle(
    token: ProgressToken,
    params: Params,
    next: (token: ProgressToken, params: Params) => void,
  ): void {
    // The title and messages hold file and function names: no link syntax reaches the UI, in
    // this notification or in the library's own (status bar) progress.
    params = inertParams(params);
    switch (params.kind) {
      case "begin":
        if (params.cancellable !== true) {
          next(token, params);
          return;
        }
        this.begin(token, params);
        return;
      case "report": {
        const shown = this.shown.get(token);
        if (shown === undefined) {
          next(token, params);
        } else if (params.message !== undefined) {
          shown.report(params.message);
        }
        return;
      }
      case "end": {
        const shown = this.shown.get(token);
        if (shown !== undefined) {
          this.shown.delete(token);
          shown.finish();
        }
        // Lets the library release the token's listener.
        next(token, params);
        return;
      }
    }
  }

  private begin(token: ProgressToken, params: WorkDoneProgressBegin): void {
    // Registered before withProgress runs its callback, so an early "end" is never lost.
    let progress: vscode.Progress<{ message?: string }> | undefined;
    let pending = params.message;
    let finish: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => {
      finish = resolve;
    });
    this.shown.set(token, {
      report: (message) => {
        if (progress === undefined) {
          pending = message;
        } else {
          progress.report({ message });
        }
      },
      finish: () => finish(),
    });
    void withInertProgress(
      { location: vscode.ProgressLocation.Notification, title: params.title, cancellable: true },
      (p, cancellation) => {
        progress = p;
        if (pending !== undefined) {
          p.report({ message: pending });
        }
        const listener = cancellation.onCancellationRequested(() => {
          this.cancel(token);
          // The job may take seconds to stop (a script's run writes the part that ran): the
          // cancel is said until it has (issue 41: ~14 s of nothing before "partial").
          void withInertProgress(
            {
              location: vscode.ProgressLocation.Notification,
              title: `Cancelling — ${params.title}`,
              cancellable: false,
            },
            (q) => {
              q.report({ message: "stopping the job; what already ran is kept" });
              return finished;
            },
          );
        });
        return finished.finally(() => {
          listener.dispose();
        });
      },
    );
  }

  dispose(): void {
    for (const shown of this.shown.values()) {
      shown.finish();
    }
    this.shown.clear();
  }
}
