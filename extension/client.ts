/**
 * Construction of the language client for `<python> -m kernel_lens.lsp` over stdio.
 */
import * as vscode from "vscode";
import {
  CloseAction,
  CodeLensRequest,
  ErrorAction,
  LanguageClient,
  RevealOutputChannelOn,
  State,
  Trace,
  TransportKind,
  WorkDoneProgressCancelNotification,
  type ErrorHandler,
  type Executable,
  type LanguageClientOptions,
  type Middleware,
} from "vscode-languageclient/node";
import { CLIENT_ID, DISPLAY_NAME, LANGUAGE } from "./constants";
import { CrashPolicy } from "./crashPolicy";
import { fitRows, rowChars } from "./lensFit";
import { SERVER_MODULE, bundledLibs, earlyAgentEnv, serverEnv, type EarlyAgent } from "./python";
import { NotificationProgress } from "./progress";
import { ServerCommands } from "./protocol";
import { showWarning } from "./notify";
import { SECTION, initializationOptions, type Settings } from "./settings";
import { targetRefusal } from "./targetGuard";
import { commandTargetUri } from "./targets";

export interface ClientConfig {
  /** Interpreter that runs the server. */
  python: string;
  extensionPath: string;
  settings: Settings;
  log: vscode.LogOutputChannel;
}

/** The server command: bundled PYTHONPATH, unbuffered, started outside the workspace. */
export function serverExecutable(
  python: string,
  extensionPath: string,
  early?: EarlyAgent,
): Executable {
  return {
    command: python,
    args: ["-m", SERVER_MODULE],
    transport: TransportKind.stdio,
    options: {
      env: { ...serverEnv(extensionPath, process.env), ...earlyAgentEnv(early) },
      // Not the workspace folder: `-m` puts the working folder first on sys.path, and a file
      // in an untrusted workspace must not be able to shadow a module of the server.
      cwd: bundledLibs(extensionPath),
    },
  };
}

/** Connection errors tolerated in a row before the client shuts the server down. */
const MAX_CONNECTION_ERRORS = 3;

/** A new (not yet started) language client for the given interpreter and settings. */
export function createClient(config: ClientConfig): LanguageClient {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const executable = serverExecutable(config.python, config.extensionPath, {
    trusted: vscode.workspace.isTrusted,
    agentCommand: config.settings.agentCommand,
    folder: folder?.scheme === "file" ? folder.fsPath : undefined,
  });
  const life = { everRunning: false };
  // Assigned below; the progress UI only sends once the client runs.
  const ref: { client?: LanguageClient } = {};
  const progressUi = new NotificationProgress((token) => {
    void ref.client?.sendNotification(WorkDoneProgressCancelNotification.type, { token });
  });
  const clientOptions: LanguageClientOptions = {
    errorHandler: errorHandler(config.log, life),
    middleware: middleware(config.log, progressUi),
    // Python cells of Jupyter notebooks too: the server declares notebook-document sync and
    // maps each cell onto a virtual script of the notebook (server/kernel_lens/lsp/notebooks.py).
    documentSelector: [
      { scheme: "file", language: LANGUAGE },
      { notebook: "jupyter-notebook", language: LANGUAGE },
    ],
    outputChannel: config.log,
    traceOutputChannel: config.log,
    // Failures that matter reach the user as notifications or the status item; the client's
    // own "request failed" pop-ups would only repeat them.
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    diagnosticCollectionName: "kernel-lens",
    // Hovers offer "Profile <function>" as a command link; only that command may run from them.
    markdown: { isTrusted: { enabledCommands: [ServerCommands.profile] }, supportHtml: false },
    // Evaluated at `initialize`, so trust granted while the client starts is not missed.
    initializationOptions: () => initializationOptions(config.settings, vscode.workspace.isTrusted),
    // Sends workspace/didChangeConfiguration once after `initialized` and on every change
    // under `kernelLens`; the server then pulls `kernelLens.timing.*` and
    // `kernelLens.timeoutSeconds` with workspace/configuration (section "kernelLens", which
    // answers `{python, agentCommand, timeoutSeconds, timing: {warmupMs, budgetMs, reps}}`).
    // The pushed `settings` payload is deprecated by vscode-languageclient in favour of that
    // pull; the server should not rely on it. Interpreter and agent changes restart instead.
    synchronize: { configurationSection: SECTION },
  };
  const client = new LanguageClient(
    CLIENT_ID,
    DISPLAY_NAME,
    { run: executable, debug: executable },
    clientOptions,
  );
  // Lives as long as the client, whose emitter it subscribes to.
  client.onDidChangeState((event) => {
    life.everRunning ||= event.newState === State.Running;
  });
  ref.client = client;
  const groups = relayoutLensesOnTabGroups(client);
  client.onDidChangeState((event) => {
    if (event.newState === State.Stopped) {
      progressUi.dispose();
      groups.dispose();
    }
  });
  return client;
}

/** Connection errors: tolerated a few in a row; a closed connection restarts the server unless
 * it crashed too often (CrashPolicy), said in the log and, once it ran, to the user. */
function errorHandler(
  log: vscode.LogOutputChannel,
  life: { readonly everRunning: boolean },
): ErrorHandler {
  const policy = new CrashPolicy();
  return {
    error: (_error, _message, count) => ({
      action: (count ?? 0) <= MAX_CONNECTION_ERRORS ? ErrorAction.Continue : ErrorAction.Shutdown,
    }),
    closed: () => {
      const decision = policy.closed(Date.now(), life.everRunning);
      if (decision.restart) {
        return { action: CloseAction.Restart };
      }
      log.error(decision.message);
      // At start-up the client itself shows "couldn't create connection to server".
      return {
        action: CloseAction.DoNotRestart,
        message: decision.message,
        handled: !life.everRunning,
      };
    },
  };
}

/** Progress shown as notifications, lens rows fitted to the editor's width, and server
 * commands run only on a document of the workspace. */
function middleware(log: vscode.LogOutputChannel, progressUi: NotificationProgress): Middleware {
  return {
    handleWorkDoneProgress: (token, params, next) => {
      progressUi.handle(token, params, next);
    },
    // A row that would be cut at the editor's edge says its verdict first, the rest in its
    // hover, so that every action of it stays on screen (issue 41; lensFit.ts).
    provideCodeLenses: async (document, token, next) => {
      const lenses = await next(document, token);
      return lenses ? fitRows(lenses, rowChars(vscode.window.tabGroups.all.length)) : lenses;
    },
    // A server command from a hover or lens link, or run with an argument of anyone's
    // making: only on a document of the workspace (or one open in the editor).
    executeCommand: (command, args, next) => {
      const uri = commandTargetUri(args);
      const refusal = uri === undefined ? undefined : targetRefusal(uri, true);
      if (refusal !== undefined) {
        log.warn(`${command} refused: ${refusal}`);
        void showWarning(`${DISPLAY_NAME}: ${command} refused: ${refusal}.`);
        return undefined;
      }
      const result: unknown = next(command, args);
      return result;
    },
  };
}

/** The Report opened or closed beside the source changes the lenses' room: lay them out again
 * (while the client runs). */
function relayoutLensesOnTabGroups(client: LanguageClient): vscode.Disposable {
  return vscode.window.tabGroups.onDidChangeTabGroups(() => {
    if (client.state !== State.Running) {
      return;
    }
    const feature = client.getFeature(CodeLensRequest.method);
    for (const editor of vscode.window.visibleTextEditors) {
      feature.getProvider(editor.document)?.onDidChangeCodeLensEmitter.fire();
    }
  });
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
