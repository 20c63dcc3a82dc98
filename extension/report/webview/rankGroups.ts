/**
 * A distributed step's timeline (issue 27): the words and places of its lane groups, one per
 * rank, and of the collective markers on them. Pure (no DOM), unit-tested under node.
 *
 * The server sends every rank's lanes on one time axis, each rank shifted so that the ranks'
 * first collectives start together (`analysis/rank_timeline.py`), with `ranks` (one group each:
 * its shift, the straggler, its wait) and `collectives` (each with its skew across ranks and
 * every rank's start of it on the merged axis). Everything here is text for `fillText` and
 * `textContent`: never HTML, so a rank label or an op name full of `<`, `>` and `&` shows as it is.
 */
import type { TimelineCollective, TimelineRank } from "../../generated/wire";
import { timeToX, type TimeView } from "./timelineModel";

/** Pixels either side of a marker within which the pointer is on it. */
export const MARKER_SLOP_PX = 5;

/**
 * A rank group's label: `rank 1 · straggler · waited 0.2 ms`, `rank 0 · waited 43.4 ms`; a rank
 * with no collective says it is not aligned.
 */
export function rankGroupLabel(rank: TimelineRank, formatDuration: (us: number) => string): string {
  const parts = [`rank ${rank.rank}`];
  if (rank.straggler) {
    parts.push("straggler");
  }
  if (rank.wait_us !== null) {
    parts.push(`waited ${formatDuration(rank.wait_us)}`);
  }
  if (rank.first_collective_us === null) {
    parts.push("no collective: not aligned");
  }
  return parts.join(" · ");
}

/** What the tooltip on a rank group's band says (its label first). */
export function rankGroupTooltip(
  rank: TimelineRank,
  formatDuration: (us: number) => string,
): string[] {
  const lines = [rankGroupLabel(rank, formatDuration)];
  if (rank.straggler) {
    lines.push("the rank the others wait for (the least time waiting in collectives)");
  }
  if (rank.first_collective_us !== null) {
    lines.push(
      `first collective at ${formatDuration(rank.first_collective_us)} into its trace` +
        (rank.shift_us > 0 ? ` · drawn ${formatDuration(rank.shift_us)} later to align` : ""),
    );
  }
  if (rank.path !== null) {
    lines.push(rank.path);
  }
  return lines;
}

/** A collective's marker on one rank's group: where it starts on the merged axis. */
export interface Marker {
  collective: TimelineCollective;
  rank: number;
  start: number;
  dur: number | null;
}

/** The markers of `rank`'s group: each collective it made, where it starts. */
export function markersOf(
  collectives: readonly TimelineCollective[] | undefined,
  rank: number,
): Marker[] {
  const out: Marker[] = [];
  for (const c of collectives ?? []) {
    const start = c.starts[rank];
    if (start !== null && start !== undefined) {
      out.push({ collective: c, rank, start, dur: c.durs[rank] ?? null });
    }
  }
  return out;
}

/** The marker nearest pixel x within {@link MARKER_SLOP_PX}, if any. */
export function markerAt(
  markers: readonly Marker[],
  view: TimeView,
  width: number,
  x: number,
): Marker | undefined {
  let best: Marker | undefined;
  let distance = MARKER_SLOP_PX;
  for (const m of markers) {
    const d = Math.abs(timeToX(m.start, view, width) - x);
    if (d <= distance) {
      best = m;
      distance = d;
    }
  }
  return best;
}

/**
 * What a collective's marker says: `all_reduce #2 · line 24`, its skew across ranks (which rank
 * came first and last), and this rank's start and time in it.
 */
export function collectiveTooltip(
  marker: Marker,
  formatDuration: (us: number) => string,
): string[] {
  const c = marker.collective;
  const head = `${c.name} #${c.index + 1}` + (c.line === null ? "" : ` · line ${c.line}`);
  const order =
    c.first_rank !== null && c.last_rank !== null
      ? ` (rank ${c.first_rank} first, rank ${c.last_rank} last)`
      : "";
  const lines = [head, `skew ${formatDuration(c.skew_us)} across ranks${order}`];
  lines.push(
    `rank ${marker.rank}: starts at ${formatDuration(marker.start)}` +
      (marker.dur === null ? "" : `, in it for ${formatDuration(marker.dur)}`),
  );
  if (c.index === 0) {
    lines.push("the ranks are aligned on this collective's start");
  }
  return lines;
}
