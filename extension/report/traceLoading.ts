/**
 * The trace viewer's loading line (pure: no `vscode`, so node:test checks it): the file's name
 * and size, then the server's `kernelLens/traceProgress` as it comes.
 */

/** "Reading big.json (230 MB): 45% · reading events 400,000…". */
export function traceLoadingText(
  name: string,
  bytes: number | undefined,
  progress?: {
    percentage: number;
    message: string;
  },
): string {
  const size =
    bytes === undefined
      ? ""
      : bytes >= 1e9
        ? ` (${(bytes / 1e9).toFixed(1)} GB)`
        : ` (${Math.max(1, Math.round(bytes / 1e6))} MB)`;
  if (progress === undefined) {
    return `Reading ${name}${size}…`;
  }
  return `Reading ${name}${size}: ${Math.round(progress.percentage)}% · ${progress.message}`;
}

/**
 * The note over a first view of a big trace (`partial` of `kernelLens/traceFile`): "First view:
 * the first 72,263 events (about 7% of the file); the rest is being read…".
 */
export function partialTraceText(partial: { fraction: number; events: number }): string {
  const percent = Math.max(1, Math.min(99, Math.round(partial.fraction * 100)));
  return `First view: the first ${partial.events.toLocaleString("en-US")} events (about ${percent}% of the file); the rest is being read…`;
}
