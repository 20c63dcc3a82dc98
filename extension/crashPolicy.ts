/**
 * When to restart a server whose connection closed. Pure, so it is unit-tested without VS Code;
 * `client.ts` turns its decisions into vscode-languageclient `CloseAction`s.
 *
 * vscode-languageclient's default handler restarts a server up to 4 times in 3 minutes even
 * when it never got through `initialize`; an import error at start-up does not fix itself, and
 * each attempt pops up another "couldn't create connection" notification. So: a server that
 * never ran is not restarted; one that crashes while running is, within a budget.
 */

/** Restart, or stop with a message for the user saying why. */
export type CloseDecision = { restart: true } | { restart: false; message: string };

export class CrashPolicy {
  private crashes: number[] = [];

  /**
   * Args:
   *   maxRestarts: restarts allowed within `windowMs`; the next crash stops for good.
   *   windowMs: the sliding window, in milliseconds.
   */
  constructor(
    private readonly maxRestarts = 4,
    private readonly windowMs = 3 * 60_000,
  ) {}

  /**
   * Decides what to do about a closed connection.
   *
   * Args:
   *   now: the time of the crash, in milliseconds (e.g. `Date.now()`).
   *   everRunning: whether this server ever completed `initialize`.
   */
  closed(now: number, everRunning: boolean): CloseDecision {
    if (!everRunning) {
      return {
        restart: false,
        message: "The Kernel Lens server exited during start-up; its error is in the output.",
      };
    }
    this.crashes = this.crashes.filter((time) => now - time < this.windowMs);
    this.crashes.push(now);
    if (this.crashes.length > this.maxRestarts) {
      const minutes = Math.round(this.windowMs / 60_000);
      return {
        restart: false,
        message:
          `The Kernel Lens server crashed ${this.crashes.length} times in ${minutes} minutes ` +
          "and is not restarted again; see the output, then run Kernel Lens: Restart Server.",
      };
    }
    return { restart: true };
  }
}
