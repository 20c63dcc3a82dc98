/**
 * `Ctx` owns the language client's lifecycle (after rust-analyzer's `ctx.ts`): it resolves and
 * checks the interpreter, starts, stops (with a time limit) and restarts the client, and keeps
 * two kinds of disposables apart: extension-scoped ones (commands, listeners, the status item),
 * disposed at deactivation, and client-scoped ones (handlers on one client), disposed with it.
 *
 * All starts and stops go through one {@link Coalescer}, so they never overlap and a burst of
 * restart requests makes one restart.
 */
import * as vscode from "vscode";
import { State, type LanguageClient } from "vscode-languageclient/node";
import { Coalescer, withTimeout } from "./async";
import { createClient, traceFor } from "./client";
import { DISPLAY_NAME } from "./constants";
import { offerFix, withdrawFix } from "./install";
import {
  onDidChangePythonInterpreter,
  pythonExtensionInterpreter,
  resolveInterpreter,
  type Interpreter,
} from "./interpreter";
import { isStatusParams, SetTrustedNotification, StatusNotification } from "./protocol";
import { DEFAULT_PYTHON, bundledLibs, probeServer, serverEnv } from "./python";
import { SECTION, needsRestart, readSettings, type Settings } from "./settings";
import { StatusItem } from "./statusItem";
import { nodePathHost, serverInterpreter } from "./trust";

/** Time limit for the server's shutdown before its process is killed, in milliseconds. */
export const STOP_TIMEOUT_MS = 2_000;

/** Time limit for `python -c "import kernel_lens.lsp"`, in milliseconds (pandas is slow to
 * import the first time after an install, when there are no .pyc files yet). */
export const PROBE_TIMEOUT_MS = 30_000;

/** Quiet time before a requested restart, in milliseconds; merges bursts of requests. */
export const RESTART_DELAY_MS = 250;

export class Ctx implements vscode.Disposable {
  readonly log: vscode.LogOutputChannel;
  readonly status: StatusItem;

  private _client: LanguageClient | undefined;
  private clientSubscriptions: vscode.Disposable[] = [];
  private readonly extSubscriptions: vscode.Disposable[] = [];
  private readonly lifecycle: Coalescer;
  /** Called with each new client before it starts (see {@link onClientCreated}). */
  private readonly clientListeners = new Set<(client: LanguageClient) => vscode.Disposable[]>();
  /** Settings and interpreter of the last start attempt (successful or not). */
  private lastSettings: Settings | undefined;
  private lastInterpreter: Interpreter | undefined;
  /** The interpreter the server was last started with (another in Restricted Mode, or none). */
  private startedWith: string | undefined;
  private disposed = false;

  constructor(private readonly extCtx: vscode.ExtensionContext) {
    this.log = vscode.window.createOutputChannel(DISPLAY_NAME, { log: true });
    this.status = new StatusItem(vscode.workspace.isTrusted);
    this.lifecycle = new Coalescer(
      () => this.restartNow(),
      RESTART_DELAY_MS,
      (error) => this.log.error(`Server restart failed: ${String(error)}`),
    );
    this.pushExtCleanup(
      this.log,
      this.status,
      { dispose: () => this.lifecycle.dispose() },
      this.log.onDidChangeLogLevel((level) => void this.client?.setTrace(traceFor(level))),
      vscode.workspace.onDidChangeConfiguration((e) => this.onDidChangeConfiguration(e)),
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.onDidGrantWorkspaceTrust()),
    );
    void onDidChangePythonInterpreter(
      () => void this.onDidChangePythonInterpreter(),
      this.log,
    ).then((subscription) => subscription !== undefined && this.pushExtCleanup(subscription));
  }

  /** The client, while it is running; undefined while stopped, starting or unavailable. */
  get client(): LanguageClient | undefined {
    return this._client?.isRunning() === true ? this._client : undefined;
  }

  /** The interpreter the server (and the agent) runs, once started. */
  get python(): string | undefined {
    return this.startedWith;
  }

  get extensionPath(): string {
    return this.extCtx.extensionPath;
  }

  /** State kept across sessions and workspaces (e.g. the last stage picked). */
  get globalState(): vscode.Memento {
    return this.extCtx.globalState;
  }

  /** Registers disposables that live as long as the extension. */
  pushExtCleanup(...disposables: vscode.Disposable[]): void {
    if (this.disposed) {
      disposables.forEach((d) => void d.dispose());
      return;
    }
    this.extSubscriptions.push(...disposables);
  }

  /** Registers disposables that live as long as the current client. */
  pushClientCleanup(...disposables: vscode.Disposable[]): void {
    this.clientSubscriptions.push(...disposables);
  }

  /**
   * Calls `listener` with every client created from now on, before it starts (so that its
   * notification handlers miss nothing); what it returns is disposed with that client.
   * Returns the disposable that removes the listener.
   */
  onClientCreated(listener: (client: LanguageClient) => vscode.Disposable[]): vscode.Disposable {
    this.clientListeners.add(listener);
    return { dispose: () => this.clientListeners.delete(listener) };
  }

  /**
   * Starts the server, or restarts it if it is running. Requests made close together, or
   * while a restart is in progress, are merged. Resolves when a restart that began after the
   * request has finished.
   */
  restart(reason: string): Promise<void> {
    this.log.info(`Server (re)start requested: ${reason}`);
    return this.lifecycle.request();
  }

  /** Stops the client and disposes everything; called from `deactivate`. */
  async dispose(): Promise<void> {
    if (this.disposed) {
      return;
    }
    this.disposed = true;
    this.lifecycle.dispose();
    await this.stop();
    for (const subscription of this.extSubscriptions.splice(0).reverse()) {
      subscription.dispose();
    }
  }

  private async restartNow(): Promise<void> {
    await this.stop();
    if (!this.disposed) {
      await this.start();
    }
  }

  private async start(): Promise<void> {
    this.status.set("starting");
    const { settings, problems } = readSettings(vscode.workspace.getConfiguration(SECTION));
    problems.forEach((problem) => this.log.warn(`Ignoring invalid setting ${problem}`));
    this.lastSettings = settings;

    const python = await this.serverPython(settings);
    if (python === undefined || !(await this.probe(python))) {
      return;
    }
    const client = createClient({
      python,
      extensionPath: this.extensionPath,
      settings,
      log: this.log,
    });
    this._client = client;
    this.pushClientCleanup(
      ...this.watchClient(client),
      ...[...this.clientListeners].flatMap((listener) => listener(client)),
    );
    try {
      await client.start();
    } catch (error) {
      // vscode-languageclient has already shown "couldn't create connection to server".
      this.log.error(`The server failed to start: ${String(error)}`);
      await this.stop();
      this.status.set("stopped", `The server failed to start: ${String(error)}`);
      return;
    }
    await client.setTrace(traceFor(this.log.logLevel));
    if (this.status.state === "starting") {
      this.status.set("idle");
    }
    this.log.info(`Server started (${python} -m kernel_lens.lsp)`);
  }

  /** The interpreter the server starts with, or `undefined` (none may run it here, said on the
   * status item; or the context was disposed meanwhile). */
  private async serverPython(settings: Settings): Promise<string | undefined> {
    const interpreter = await resolveInterpreter(settings, this.log);
    this.lastInterpreter = interpreter;
    this.log.info(`Interpreter: ${interpreter.python} (from ${interpreter.source})`);

    // Restricted Mode: an interpreter inside a workspace folder is not run (not even probed);
    // the server starts on one outside it, or not at all, and the status item says why.
    const trusted = vscode.workspace.isTrusted;
    const choice = serverInterpreter({
      trusted,
      wanted: interpreter.python,
      pythonExtension:
        trusted || interpreter.source === "python-extension"
          ? undefined
          : await pythonExtensionInterpreter(this.log),
      fallback: DEFAULT_PYTHON,
      folders: (vscode.workspace.workspaceFolders ?? [])
        .filter((f) => f.uri.scheme === "file")
        .map((f) => f.uri.fsPath),
      host: nodePathHost(),
    });
    this.startedWith = choice.python;
    this.status.setHeld(choice.held);
    if (this.disposed) {
      return undefined;
    }
    if (choice.python === undefined) {
      this.log.warn(`${choice.held ?? ""}; no interpreter outside the workspace was found.`);
      this.status.set("unavailable", "no interpreter outside the workspace was found");
      return undefined;
    }
    if (choice.held !== undefined) {
      this.log.warn(`${choice.held}; the server starts with ${choice.python} meanwhile.`);
    }
    return choice.python;
  }

  /** Whether `python` can run the server; if not, why, in the log and on the status item, and
   * an offer to install what it lacks. */
  private async probe(python: string): Promise<boolean> {
    const env = serverEnv(this.extensionPath, process.env);
    const probe = await probeServer(python, env, bundledLibs(this.extensionPath), PROBE_TIMEOUT_MS);
    if (this.disposed) {
      return false;
    }
    if (!probe.ok) {
      this.log.error(`${python} cannot run the server: ${probe.reason}`);
      if (probe.detail !== "") {
        this.log.error(probe.detail);
      }
      this.status.set("unavailable", probe.reason);
      void offerFix(python, probe, {
        log: this.log,
        extensionPath: this.extensionPath,
        restart: () => void this.restart("install finished"),
      });
      return false;
    }
    void withdrawFix(this.log);
    return true;
  }

  /** The server's status notifications and the client's crashes, on the status item. */
  private watchClient(client: LanguageClient): vscode.Disposable[] {
    return [
      client.onNotification(StatusNotification, (params: unknown) => {
        if (isStatusParams(params)) {
          this.status.set(params.state, params.message, params.uri ?? undefined);
        } else {
          this.log.warn(`Ignoring malformed kernelLens/status: ${JSON.stringify(params)}`);
        }
      }),
      client.onDidChangeState((event) => {
        // A deliberate stop clears _client first, so this is a crash (the client restarts
        // the server a few times before it gives up) or the recovery from one.
        if (this._client !== client) {
          return;
        }
        if (event.newState === State.Stopped) {
          this.status.set("stopped", "The server stopped; see the output, or restart it.");
        } else if (event.newState === State.Running && this.status.state === "stopped") {
          this.status.set("idle");
        }
      }),
    ];
  }

  /** Stops the client, waiting at most `timeoutMs` for its shutdown, and drops its handlers. */
  private async stop(timeoutMs = STOP_TIMEOUT_MS): Promise<void> {
    const client = this._client;
    this._client = undefined;
    for (const subscription of this.clientSubscriptions.splice(0)) {
      subscription.dispose();
    }
    if (client === undefined) {
      return;
    }
    try {
      // A client restarting itself after a crash cannot be stopped until that start settles.
      if (client.state === State.Starting) {
        await withTimeout(settled(client), timeoutMs, "server start");
      }
      if (client.needsStop()) {
        await client.stop(timeoutMs);
      }
    } catch (error) {
      this.log.warn(`The server did not shut down cleanly: ${String(error)}`);
    }
    this.status.set("stopped");
  }

  private onDidChangeConfiguration(event: vscode.ConfigurationChangeEvent): void {
    if (!event.affectsConfiguration(SECTION) || this.lastSettings === undefined) {
      return;
    }
    const { settings } = readSettings(vscode.workspace.getConfiguration(SECTION));
    if (needsRestart(this.lastSettings, settings)) {
      void this.restart("kernelLens.python or kernelLens.agentCommand changed");
    }
  }

  private async onDidChangePythonInterpreter(): Promise<void> {
    if (this.lastSettings === undefined || this.lastSettings.python !== "") {
      return;
    }
    const interpreter = await resolveInterpreter(this.lastSettings, this.log);
    if (interpreter.python !== this.lastInterpreter?.python) {
      await this.restart(`the Python extension's interpreter is now ${interpreter.python}`);
    }
  }

  private onDidGrantWorkspaceTrust(): void {
    this.status.setTrusted(true);
    // The server ran on another interpreter (or none) while the chosen one was held back.
    const wanted = this.lastInterpreter?.python;
    if (wanted !== undefined && wanted !== this.startedWith) {
      void this.restart(`the workspace is trusted: the server starts with ${wanted}`);
      return;
    }
    const client = this._client;
    if (client !== undefined && client.needsStop()) {
      client
        .sendNotification(SetTrustedNotification, { trusted: true })
        .catch((error: unknown) =>
          this.log.error(`Could not send kernelLens/setTrusted: ${String(error)}`),
        );
    }
  }
}

/** Resolves when `client` leaves the Starting state. */
function settled(client: LanguageClient): Promise<void> {
  return new Promise((resolve) => {
    const subscription = client.onDidChangeState((event) => {
      if (event.newState !== State.Starting) {
        subscription.dispose();
        resolve();
      }
    });
  });
}
