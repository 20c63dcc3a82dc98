/**
 * Construction of the language client for `<python> -m kernel_lens.lsp` over stdio.
 */
import * as vscode from "vscode";
import {
  LanguageClient,
  RevealOutputChannelOn,
  Trace,
  TransportKind,
  type Executable,
  type LanguageClientOptions,
} from "vscode-languageclient/node";
import { CLIENT_ID, DISPLAY_NAME, LANGUAGE } from "./constants";
import { SERVER_MODULE, bundledLibs, serverEnv } from "./python";
import { SECTION, initializationOptions, type Settings } from "./settings";

export interface ClientConfig {
  /** Interpreter that runs the server. */
  python: string;
  extensionPath: string;
  settings: Settings;
  log: vscode.LogOutputChannel;
}

/** The server command: bundled PYTHONPATH, unbuffered, started outside the workspace. */
export function serverExecutable(python: string, extensionPath: string): Executable {
  return {
    command: python,
    args: ["-m", SERVER_MODULE],
    transport: TransportKind.stdio,
    options: {
      env: serverEnv(extensionPath, process.env),
      // Not the workspace folder: `-m` puts the working folder first on sys.path, and a file
      // in an untrusted workspace must not be able to shadow a module of the server.
      cwd: bundledLibs(extensionPath),
    },
  };
}

/** A new (not yet started) language client for the given interpreter and settings. */
export function createClient(config: ClientConfig): LanguageClient {
  const executable = serverExecutable(config.python, config.extensionPath);
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: "file", language: LANGUAGE }],
    outputChannel: config.log,
    traceOutputChannel: config.log,
    // Failures that matter reach the user as notifications or the status item; the client's
    // own "request failed" pop-ups would only repeat them.
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    diagnosticCollectionName: "kernel-lens",
    // Evaluated at `initialize`, so trust granted while the client starts is not missed.
    initializationOptions: () => initializationOptions(config.settings, vscode.workspace.isTrusted),
    // Sends workspace/didChangeConfiguration once after `initialized` and on every change
    // under `kernelLens`; the server then pulls `kernelLens.timing.*` and
    // `kernelLens.timeoutSeconds` with workspace/configuration (section "kernelLens", which
    // answers `{python, agentCommand, timeoutSeconds, timing: {warmupMs, budgetMs, reps}}`).
    // The pushed `settings` payload is deprecated by vscode-languageclient in favour of that
    // pull; the server should not rely on it. Interpreter and agent changes restart instead.
    synchronize: { configurationSection: SECTION },
    connectionOptions: { maxRestartCount: 4 },
  };
  return new LanguageClient(
    CLIENT_ID,
    DISPLAY_NAME,
    { run: executable, debug: executable },
    clientOptions,
  );
}

/** The LSP trace level that goes with the output channel's log level. */
export function traceFor(level: vscode.LogLevel): Trace {
  switch (level) {
    case vscode.LogLevel.Trace:
      return Trace.Verbose;
    case vscode.LogLevel.Debug:
      return Trace.Messages;
    default:
      return Trace.Off;
  }
}
