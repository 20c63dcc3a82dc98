/**
 * Async helpers of the client lifecycle: coalescing of server restarts (a settings edit fires
 * several change events; the Python extension may report a new interpreter at the same moment),
 * time limits and cancellation. Pure: timers only, no `vscode`.
 */

/** Rejection of {@link withTimeout} when the time runs out. */
export class TimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not finish within ${ms} ms`);
    this.name = "TimeoutError";
  }
}

/**
 * Settles like `promise`, or rejects with a {@link TimeoutError} after `ms` milliseconds.
 * The promise itself is not cancelled; its late result is ignored.
 */
export function withTimeout<T>(promise: PromiseLike<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new TimeoutError(what, ms)), ms);
    Promise.resolve(promise).then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/**
 * Runs an async task one at a time, merging requests for it.
 *
 * Requests that arrive within `delayMs` of the first make one run; requests that arrive while
 * a run is in progress make exactly one more run after it. Each request's promise resolves
 * when a run that started after the request has finished (or the coalescer is disposed).
 */
export class Coalescer {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running = false;
  private disposed = false;
  private waiting: (() => void)[] = [];

  /**
   * Args:
   *   task: the work, e.g. restart the server; never run concurrently with itself.
   *   delayMs: quiet time in milliseconds before a run starts.
   *   onError: receives a rejection of `task` (the coalescer keeps working after it).
   */
  constructor(
    private readonly task: () => Promise<void>,
    private readonly delayMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Asks for a run; see the class comment for when it resolves. */
  request(): Promise<void> {
    if (this.disposed) {
      return Promise.resolve();
    }
    const done = new Promise<void>((resolve) => this.waiting.push(resolve));
    if (!this.running) {
      this.schedule();
    }
    return done;
  }

  /** True while a run is scheduled or in progress. */
  get busy(): boolean {
    return this.running || this.timer !== undefined;
  }

  /** Cancels a scheduled run and releases every waiting request. */
  dispose(): void {
    this.disposed = true;
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.release(this.waiting);
    this.waiting = [];
  }

  private schedule(): void {
    if (this.timer === undefined) {
      this.timer = setTimeout(() => void this.run(), this.delayMs);
    }
  }

  private async run(): Promise<void> {
    this.timer = undefined;
    this.running = true;
    const batch = this.waiting;
    this.waiting = [];
    try {
      await this.task();
    } catch (error) {
      this.onError(error);
    } finally {
      this.running = false;
      this.release(batch);
      if (this.waiting.length > 0 && !this.disposed) {
        this.schedule();
      }
    }
  }

  private release(resolvers: (() => void)[]): void {
    for (const resolve of resolvers) {
      resolve();
    }
  }
}

/** Rejection of {@link untilCancelled} when its token is cancelled. */
export class CancelledError extends Error {
  constructor() {
    super("cancelled");
    this.name = "CancelledError";
  }
}

/** The part of a cancellation token (VS Code's or vscode-jsonrpc's) that {@link untilCancelled} needs. */
export interface CancellationLike {
  readonly isCancellationRequested: boolean;
  onCancellationRequested(listener: () => void): { dispose(): void };
}

/**
 * Settles like `promise`, or rejects with a {@link CancelledError} as soon as `token` is
 * cancelled, so a cancelled request's progress closes at once instead of waiting for the server
 * to acknowledge the cancellation. The promise's late result is ignored.
 */
export function untilCancelled<T>(promise: PromiseLike<T>, token: CancellationLike): Promise<T> {
  if (token.isCancellationRequested) {
    return Promise.reject(new CancelledError());
  }
  return new Promise<T>((resolve, reject) => {
    const subscription = token.onCancellationRequested(() => {
      subscription.dispose();
      reject(new CancelledError());
    });
    Promise.resolve(promise).then(
      (value) => {
        subscription.dispose();
        resolve(value);
      },
      (error: unknown) => {
        subscription.dispose();
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
