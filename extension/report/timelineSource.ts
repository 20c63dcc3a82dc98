/**
 * Where a Report timeline's detail windows come from (pure: no `vscode`, so node:test checks
 * it): its trace file, and for a distributed step's rank groups every rank's trace and shift,
 * which `kernelLens/timelineWindow` reads at the window less that shift.
 */
import type { Timeline, TimelineRankSource } from "../generated/wire";

/** A timeline's trace file and, for rank groups, the ranks' traces and shifts. */
export interface TimelineSource {
  path: string;
  ranks?: TimelineRankSource[];
}

/** The source of `timeline`'s detail windows; undefined when it has none (no trace file). */
export function timelineSource(timeline: Timeline | null | undefined): TimelineSource | undefined {
  const path = timeline?.path;
  if (timeline === null || timeline === undefined || path === undefined) {
    return undefined;
  }
  const ranks = timeline.ranks ?? [];
  if (ranks.length === 0) {
    return { path };
  }
  const sources: TimelineRankSource[] = [];
  for (const r of ranks) {
    if (r.path === null) {
      return { path }; // a rank without its trace: no rank windows (the overview stays)
    }
    sources.push({ path: r.path, shift_us: r.shift_us });
  }
  return { path, ranks: sources };
}
