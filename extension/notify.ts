/**
 * The only way the extension shows a notification or a progress notification: every message,
 * title and progress message goes through {@link inert}, so a file name, a stored string or a
 * server message never becomes a link or a command (`[Details](command:…)`). eslint forbids
 * `vscode.window.show*Message` and `withProgress` elsewhere (eslint.config.mjs).
 */
import * as vscode from "vscode";
import { inert } from "./errorText";

type Show = <T extends string>(message: string, ...items: T[]) => Thenable<T | undefined>;
type ShowModal = <T extends string>(
  message: string,
  options: vscode.MessageOptions,
  ...items: T[]
) => Thenable<T | undefined>;

function shown(show: (message: string, ...items: string[]) => Thenable<string | undefined>): Show {
  return <T extends string>(message: string, ...items: T[]) =>
    show(inert(message), ...items) as Thenable<T | undefined>;
}

/* eslint-disable no-restricted-properties -- the wrappers themselves */
export const showInformation: Show = shown((m, ...i) =>
  vscode.window.showInformationMessage(m, ...i),
);
export const showWarning: Show = shown((m, ...i) => vscode.window.showWarningMessage(m, ...i));
export const showError: Show = shown((m, ...i) => vscode.window.showErrorMessage(m, ...i));

/** A modal error dialog; its message and detail made inert too. */
export const showErrorModal: ShowModal = <T extends string>(
  message: string,
  options: vscode.MessageOptions,
  ...items: T[]
) =>
  vscode.window.showErrorMessage(
    inert(message),
    { ...options, ...(options.detail === undefined ? {} : { detail: inert(options.detail) }) },
    ...items,
  );

/** `vscode.window.withProgress` with the title and every reported message made inert. */
export function withInertProgress<R>(
  options: vscode.ProgressOptions,
  task: (
    progress: vscode.Progress<{ message?: string; increment?: number }>,
    token: vscode.CancellationToken,
  ) => Thenable<R>,
): Thenable<R> {
  const title = options.title === undefined ? {} : { title: inert(options.title) };
  return vscode.window.withProgress({ ...options, ...title }, (progress, token) =>
    task(
      {
        report: (value) =>
          progress.report(
            value.message === undefined ? value : { ...value, message: inert(value.message) },
          ),
      },
      token,
    ),
  );
}
/* eslint-enable no-restricted-properties */
