/**
 * The Kernel Lens language-server protocol, client side.
 *
 * This file mirrors `server/kernel_lens/lsp/protocol.py`: every method name, command id and
 * param shape here has a twin there, and a change to one is a change to both
 * (tests/ts/protocol.test.ts checks the names against the Python file when it exists).
 *
 * It imports no `vscode`, so it can be unit-tested under plain node.
 */
import { NotificationType } from "vscode-languageserver-protocol";

/** Timing configuration, also pulled at run time from the `kernelLens.timing` settings. */
export interface TimingOptions {
  /** Warm-up time before timing, in milliseconds. */
  warmupMs: number;
  /** Time budget for the repetitions of one timing, in milliseconds. */
  budgetMs: number;
  /** Number of timed repetitions; 0 = adaptive (as many as fit in `budgetMs`). */
  reps: number;
}

/** `initializationOptions` of the `initialize` request. */
export interface InitializationOptions {
  /** argv prefix that starts the profiling agent; null = the server's own interpreter. */
  agentCommand: string[] | null;
  /** Time limit for one profiling job, in seconds. */
  timeoutSeconds: number;
  /** False in Restricted Mode: the server must not run any code until `kernelLens/setTrusted`. */
  workspaceTrusted: boolean;
  timing: TimingOptions;
}

/** What the server is doing, as shown in the status bar. */
export type ServerState = "idle" | "profiling" | "error";

/** The server states, for exhaustive checks and validation of incoming params. */
export const SERVER_STATES: readonly ServerState[] = ["idle", "profiling", "error"];

/**
 * Params of `kernelLens/status` (server -> client).
 *
 * `message` is, for `profiling`, the name of what is being profiled (e.g. `square`, the item
 * reads "profiling square"); for `error`, a one-line explanation; for `idle`, an optional
 * note (e.g. why nothing runs in Restricted Mode), possibly empty.
 */
export interface StatusParams {
  state: ServerState;
  message: string;
  /** The document the status is about, if any (the server may send null for none). */
  uri?: string | null;
}

/** Server -> client: the server's state changed. */
export const StatusNotification = new NotificationType<StatusParams>("kernelLens/status");

/** Params of `kernelLens/setTrusted` (client -> server). */
export interface SetTrustedParams {
  trusted: boolean;
}

/** Client -> server: the user granted workspace trust; profiling may now run code. */
export const SetTrustedNotification = new NotificationType<SetTrustedParams>(
  "kernelLens/setTrusted",
);

/**
 * `workspace/executeCommand` commands the server advertises (`executeCommandProvider`).
 *
 * vscode-languageclient registers these ids as VS Code commands itself, and the server's code
 * lenses carry them, so the extension must not register the same ids.
 */
export const ServerCommands = {
  /** Profile one function. Argument: one {@link ProfileArgs}. */
  profile: "kernelLens.profile",
  /** Profile every function of a document. Argument: one {@link ProfileAllArgs}. */
  profileAll: "kernelLens.profileAll",
} as const;

export type ServerCommand = (typeof ServerCommands)[keyof typeof ServerCommands];

/** Argument of `kernelLens.profile`: the function by name, or the one enclosing `line`. */
export interface ProfileArgs {
  uri: string;
  function?: string;
  /** 0-based line. */
  line?: number;
}

/** Argument of `kernelLens.profileAll`. */
export interface ProfileAllArgs {
  uri: string;
}

/** Checks untrusted JSON from the wire before it drives the UI. */
export function isStatusParams(value: unknown): value is StatusParams {
  if (typeof value !== "object" || value === null) {
    return false;
  }
  const v = value as Record<string, unknown>;
  return (
    typeof v["state"] === "string" &&
    (SERVER_STATES as readonly string[]).includes(v["state"]) &&
    typeof v["message"] === "string" &&
    (v["uri"] === undefined || v["uri"] === null || typeof v["uri"] === "string")
  );
}
