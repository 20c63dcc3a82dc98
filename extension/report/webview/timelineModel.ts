/**
 * The timeline view's maths, kept apart from the canvas so that node:test checks it: the
 * mapping between time and pixels, zooming around a point and panning inside the trace, the
 * tick steps of the time axis, the layout of lanes and depth rows, culling to the visible time
 * range (with sub-pixel events coalesced), hit testing, and the colour of each category.
 *
 * Times are microseconds from the trace's first event, as the server sends them; x is in CSS
 * pixels from the left edge of the time area. Pure (no DOM).
 */
import type {
  LaneKind,
  Timeline,
  TimelineEvent,
  TimelineRank,
  TimelineTop,
} from "../../generated/wire";

/** The visible time range, in microseconds. */
export interface TimeView {
  start: number;
  end: number;
}

/** Narrowest time range one can zoom into, in microseconds (50 ns). */
export const MIN_SPAN_US = 0.05;

/** Pixel x of time `t`, for a time area `width` pixels wide. */
export function timeToX(t: number, view: TimeView, width: number): number {
  return ((t - view.start) / (view.end - view.start)) * width;
}

/** Time at pixel x (the inverse of {@link timeToX}). */
export function xToTime(x: number, view: TimeView, width: number): number {
  return view.start + (x / width) * (view.end - view.start);
}

/** The whole trace, with a small margin on both sides so the edges' events are not cut. */
export function fullView(spanUs: number): TimeView {
  const span = Math.max(spanUs, MIN_SPAN_US);
  const margin = span * 0.01;
  return { start: -margin, end: span + margin };
}

/**
 * `view` made valid inside `bounds`: no narrower than {@link MIN_SPAN_US} (or the bounds, if
 * narrower), no wider than the bounds, and shifted (not resized) back inside them.
 */
export function clampView(view: TimeView, bounds: TimeView): TimeView {
  const maxSpan = bounds.end - bounds.start;
  const span = Math.min(Math.max(view.end - view.start, Math.min(MIN_SPAN_US, maxSpan)), maxSpan);
  let start = (view.start + view.end) / 2 - span / 2;
  if (view.end - view.start === span) {
    start = view.start;
  }
  start = Math.min(Math.max(start, bounds.start), bounds.end - span);
  return { start, end: start + span };
}

/**
 * Zooms by `factor` (< 1 zooms in, > 1 out) keeping time `anchor` at the same pixel, then
 * clamps to `bounds`. At the zoom limits the anchor stays as close to its pixel as the bounds let.
 */
export function zoomAround(
  view: TimeView,
  anchor: number,
  factor: number,
  bounds: TimeView,
): TimeView {
  const span = view.end - view.start;
  const maxSpan = bounds.end - bounds.start;
  const newSpan = Math.min(Math.max(span * factor, Math.min(MIN_SPAN_US, maxSpan)), maxSpan);
  const ratio = span > 0 ? (anchor - view.start) / span : 0.5;
  const start = anchor - ratio * newSpan;
  return clampView({ start, end: start + newSpan }, bounds);
}

/** Pans by `dx` pixels (positive: drag to the right, so earlier times come into view). */
export function panBy(view: TimeView, dx: number, width: number, bounds: TimeView): TimeView {
  const dt = (dx / width) * (view.end - view.start);
  return clampView({ start: view.start - dt, end: view.end - dt }, bounds);
}

/**
 * Zoom factor of one wheel event: `exp(deltaY · k)`, so a notch in and a notch out cancel.
 *
 * Args:
 *   deltaY: `WheelEvent.deltaY` (positive: scroll down = zoom out).
 *   deltaMode: `WheelEvent.deltaMode` (0 pixels, 1 lines, 2 pages).
 */
export function wheelZoomFactor(deltaY: number, deltaMode: number): number {
  const pixels = deltaMode === 1 ? deltaY * 16 : deltaMode === 2 ? deltaY * 400 : deltaY;
  return Math.exp(Math.max(-400, Math.min(400, pixels)) * 0.002);
}

/** The smallest 1, 2 or 5 × 10^k that is at least `raw` (raw > 0). */
export function niceStep(raw: number): number {
  const power = 10 ** Math.floor(Math.log10(raw));
  const scaled = raw / power;
  // A little tolerance: 2.0000000001 is a 2, not a 5.
  const mantissa = scaled <= 1 + 1e-9 ? 1 : scaled <= 2 + 1e-9 ? 2 : scaled <= 5 + 1e-9 ? 5 : 10;
  return mantissa * power;
}

/** One tick of the time axis. */
export interface Tick {
  /** Time, in microseconds. */
  t: number;
  x: number;
  label: string;
}

/** The unit a tick step is labelled in, and its size in microseconds. */
export function tickUnit(stepUs: number): { unit: string; us: number } {
  if (stepUs >= 1e5) {
    return { unit: "s", us: 1e6 };
  }
  if (stepUs >= 100) {
    return { unit: "ms", us: 1e3 };
  }
  if (stepUs >= 0.1) {
    return { unit: "µs", us: 1 };
  }
  return { unit: "ns", us: 1e-3 };
}

/** Label of time `t` on an axis with ticks every `stepUs`: as many decimals as the step needs. */
export function tickLabel(t: number, stepUs: number): string {
  const { unit, us } = tickUnit(stepUs);
  const step = stepUs / us;
  const decimals = Math.max(0, Math.ceil(-Math.log10(step) - 1e-9));
  const value = t / us;
  // -0.0 prints as "-0".
  const text = (Math.abs(value) < step / 2 ? 0 : value).toFixed(decimals);
  return `${text} ${unit}`;
}

/** Ticks for the visible range, at least `minPx` pixels apart, at round times. */
export function ticks(view: TimeView, width: number, minPx = 90): Tick[] {
  if (width <= 0 || view.end <= view.start) {
    return [];
  }
  const step = niceStep(((view.end - view.start) * minPx) / width);
  const out: Tick[] = [];
  for (let i = Math.ceil(view.start / step); i * step <= view.end; i += 1) {
    const t = i * step;
    out.push({ t, x: timeToX(t, view, width), label: tickLabel(t, step) });
  }
  return out;
}

/** One row of the timeline: a lane's events at one depth, sorted by start. */
export interface Row {
  lane: number;
  depth: number;
  /** Top of the row, in pixels from the top of the rows area. */
  y: number;
  events: TimelineEvent[];
  /** `maxEnd[i]`: the latest end among `events[0..i]` (for culling). */
  maxEnd: number[];
}

/** A lane's header band and its rows. */
export interface LaneBlock {
  id: string;
  title: string;
  kind: LaneKind;
  /** Top of the header band. */
  y: number;
  /** The lane's rows; none while it is collapsed. */
  rows: Row[];
  collapsed: boolean;
  /** Its depth levels (rows when expanded). */
  depths: number;
  /** Where its time goes in view ("most time: aten::addmm 42% · …"), or "". */
  top: string;
}

/** The longest a name gets in a lane's header before it is cut with "…". */
export const TOP_NAME_CHARS = 48;

/** A lane's "most time" line: each name (cut to {@link TOP_NAME_CHARS}) and its share. */
export function topText(top: readonly TimelineTop[] | undefined): string {
  if (!top || top.length === 0) {
    return "";
  }
  const items = top.map((t) => {
    const name =
      t.name.length > TOP_NAME_CHARS ? `${t.name.slice(0, TOP_NAME_CHARS - 1)}…` : t.name;
    const pct = t.share >= 0.995 ? "100" : t.share < 0.01 ? "<1" : (t.share * 100).toFixed(0);
    return `${name} ${pct}%`;
  });
  return `most time: ${items.join(" · ")}`;
}

/** Heights used by {@link layoutLanes}, in pixels. */
export interface RowMetrics {
  header: number;
  row: number;
  /** A rank group's band (a distributed step's timeline); {@link GROUP_HEIGHT} if absent. */
  group?: number;
}

export const DEFAULT_METRICS: RowMetrics = { header: 20, row: 18 };

/** Height of a rank group's band, in CSS pixels. */
export const GROUP_HEIGHT = 22;

/**
 * A distributed step's rank group: a band above the rank's lanes (its label, the markers of its
 * collectives), from `y` to `bottom` (the end of its last lane).
 */
export interface GroupBlock {
  rank: number;
  /** Top of the group's band. */
  y: number;
  /** Bottom of the group's last lane. */
  bottom: number;
  /** What the server says of the rank (undefined: the timeline has no entry for it). */
  info: TimelineRank | undefined;
}

/**
 * The timeline's lanes, one header band each, then one row per depth; a distributed step's
 * lanes (those with a `rank`) under one band per rank, before the rank's first lane.
 */
export function layoutLanes(
  timeline: Timeline,
  metrics: RowMetrics = DEFAULT_METRICS,
  collapsed: ReadonlySet<string> = new Set(),
): { lanes: LaneBlock[]; rows: Row[]; height: number; groups: GroupBlock[] } {
  const lanes: LaneBlock[] = [];
  const rows: Row[] = [];
  const groups: GroupBlock[] = [];
  let y = 0;
  timeline.lanes.forEach((lane, index) => {
    const rank = lane.rank;
    if (rank !== undefined && rank !== timeline.lanes[index - 1]?.rank) {
      const info = timeline.ranks?.find((r) => r.rank === rank);
      groups.push({ rank, y, bottom: y, info });
      y += metrics.group ?? GROUP_HEIGHT;
    }
    const byDepth = new Map<number, TimelineEvent[]>();
    for (const event of lane.events) {
      const list = byDepth.get(event.depth);
      if (list === undefined) {
        byDepth.set(event.depth, [event]);
      } else {
        list.push(event);
      }
    }
    const depths = [...byDepth.keys()].sort((a, b) => a - b);
    const folded = collapsed.has(lane.id);
    const block: LaneBlock = {
      id: lane.id,
      title: lane.title,
      kind: lane.kind,
      y,
      rows: [],
      collapsed: folded,
      depths: depths.length,
      top: topText(lane.top),
    };
    y += metrics.header;
    for (const depth of folded ? [] : depths) {
      const events = [...(byDepth.get(depth) ?? [])].sort((a, b) => a.start - b.start);
      let latest = -Infinity;
      const maxEnd = events.map((e) => (latest = Math.max(latest, e.start + e.dur)));
      const row: Row = { lane: index, depth, y, events, maxEnd };
      block.rows.push(row);
      rows.push(row);
      y += metrics.row;
    }
    lanes.push(block);
    const group = groups[groups.length - 1];
    if (group !== undefined && rank === group.rank) {
      group.bottom = y;
    }
  });
  return { lanes, rows, height: y, groups };
}

/** The rank group whose band is at y, if any. */
export function groupBandAt(
  groups: readonly GroupBlock[],
  metrics: RowMetrics,
  y: number,
): GroupBlock | undefined {
  const band = metrics.group ?? GROUP_HEIGHT;
  return groups.find((g) => y >= g.y && y < g.y + band);
}

/**
 * The lanes folded when a timeline is first shown: CPU threads that ran only Python frames
 * (the profiler's and tqdm's helper threads), which would push the ops and kernels out of sight.
 */
export function initiallyCollapsed(timeline: Timeline): Set<string> {
  return new Set(
    timeline.lanes
      .filter(
        (lane) =>
          lane.kind === "cpu" &&
          lane.events.length > 0 &&
          lane.events.every((e) => e.cat === "python_function"),
      )
      .map((lane) => lane.id),
  );
}

/** The lane whose header band is at y, if any. */
export function laneHeaderAt(
  lanes: readonly LaneBlock[],
  metrics: RowMetrics,
  y: number,
): LaneBlock | undefined {
  return lanes.find((lane) => y >= lane.y && y < lane.y + metrics.header);
}

/** First index in [0, n) for which `pred` holds, given that it holds from some index on. */
function firstWhere(n: number, pred: (i: number) => boolean): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (pred(mid)) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

/** The index range [from, to) of `row`'s events that may overlap `view` (binary searches). */
export function visibleRange(row: Row, view: TimeView): { from: number; to: number } {
  const n = row.events.length;
  const from = firstWhere(n, (i) => (row.maxEnd[i] ?? Infinity) >= view.start);
  const to = firstWhere(n, (i) => (row.events[i]?.start ?? Infinity) > view.end);
  return { from, to: Math.max(from, to) };
}

/** An event's box on screen. */
export interface Box {
  x: number;
  w: number;
  event: TimelineEvent;
  /** Further events drawn into this box because they were under a pixel wide. */
  hidden: number;
}

/**
 * The boxes to draw for `row` in `view`: only events in the visible range, at least `minWidth`
 * pixels wide, and runs of events narrower than a pixel that touch the same pixels folded into
 * one box, so a dense row costs at most about one box per pixel.
 */
export function visibleBoxes(row: Row, view: TimeView, width: number, minWidth = 1): Box[] {
  const { from, to } = visibleRange(row, view);
  const boxes: Box[] = [];
  let last: Box | undefined;
  for (let i = from; i < to; i += 1) {
    const event = row.events[i];
    if (event === undefined || event.start + event.dur < view.start) {
      continue;
    }
    const x0 = timeToX(event.start, view, width);
    const x1 = timeToX(event.start + event.dur, view, width);
    const tiny = x1 - x0 < 1;
    if (tiny && last !== undefined && last.w <= minWidth + 1 && x0 < last.x + last.w) {
      last.w = Math.max(last.w, x1 - last.x, minWidth);
      last.hidden += 1;
      continue;
    }
    last = { x: x0, w: Math.max(x1 - x0, minWidth), event, hidden: 0 };
    boxes.push(last);
  }
  return boxes;
}

/**
 * The event under (x, y): in the row at y, the event whose span contains x's time, else the
 * nearest one within `slopPx` pixels (so a 1-pixel kernel can be hovered).
 */
export function hitTest(
  rows: readonly Row[],
  metrics: RowMetrics,
  view: TimeView,
  width: number,
  x: number,
  y: number,
  slopPx = 3,
): TimelineEvent | undefined {
  const row = rows.find((r) => y >= r.y && y < r.y + metrics.row);
  if (row === undefined) {
    return undefined;
  }
  const slop = (slopPx / width) * (view.end - view.start);
  const t = xToTime(x, view, width);
  const { from, to } = visibleRange(row, { start: t - slop, end: t + slop });
  let best: TimelineEvent | undefined;
  let bestDistance = Infinity;
  for (let i = from; i < to; i += 1) {
    const event = row.events[i];
    if (event === undefined) {
      continue;
    }
    const distance = Math.max(0, event.start - t, t - (event.start + event.dur));
    // Ties go to the later (drawn on top, and the shorter when nested equal starts).
    if (distance <= slop && distance <= bestDistance) {
      best = event;
      bestDistance = distance;
    }
  }
  return best;
}

/**
 * Positions across its span (or window) at which the server merges short neighbours
 * (`build_timeline`'s `resolution`).
 */
export const SERVER_RESOLUTION = 4000;

/** The time scale a timeline was reduced at: its window's span, else the whole trace's. */
export function reducedScale(timeline: Timeline): number {
  const window = timeline.window;
  return window === null || window === undefined ? timeline.span_us : window[1] - window[0];
}

/**
 * True when the view is zoomed in past what `timeline` resolves: it has merged blocks, and the
 * events merged into them could be told apart at this zoom (the merge threshold is wider than
 * a pixel). The panel then asks the server for the window in detail.
 */
export function needsDetail(timeline: Timeline, view: TimeView, width: number): boolean {
  const merged = timeline.lanes.some((lane) => lane.events.some((e) => e.merged === true));
  const mergeUs = reducedScale(timeline) / SERVER_RESOLUTION;
  return merged && mergeUs > (view.end - view.start) / width;
}

/** True when a detail window covers the view (the parts of it inside the trace). */
export function covers(window: readonly [number, number], view: TimeView, spanUs: number): boolean {
  return window[0] <= Math.max(view.start, 0) && Math.min(view.end, spanUs) <= window[1];
}

/** The window to ask for: the view and half its width on each side (pans stay covered). */
export function detailWindow(view: TimeView, spanUs: number): [number, number] {
  const pad = (view.end - view.start) / 2;
  return [Math.max(0, view.start - pad), Math.min(spanUs, view.end + pad)];
}

/**
 * `rows` (the overview's layout) with their events taken from `detail` instead, matched by lane
 * id and depth: the rows keep their places, so the view does not jump when the detail arrives.
 */
export function withDetail(
  rows: readonly Row[],
  laneIds: readonly string[],
  detail: Timeline,
): Row[] {
  const byKey = new Map<string, TimelineEvent[]>();
  for (const lane of detail.lanes) {
    for (const event of lane.events) {
      const key = `${lane.id}\u0000${event.depth}`;
      const list = byKey.get(key);
      if (list === undefined) {
        byKey.set(key, [event]);
      } else {
        list.push(event);
      }
    }
  }
  return rows.map((row) => {
    const events = [...(byKey.get(`${laneIds[row.lane] ?? ""}\u0000${row.depth}`) ?? [])].sort(
      (a, b) => a.start - b.start,
    );
    let latest = -Infinity;
    return {
      ...row,
      events,
      maxEnd: events.map((e) => (latest = Math.max(latest, e.start + e.dur))),
    };
  });
}

/** The theme colour (a VS Code CSS variable) of an event category. */
export function categoryColor(cat: string): string {
  switch (cat) {
    case "kernel":
      return "--vscode-charts-blue";
    case "memcpy":
      return "--vscode-charts-yellow";
    case "memset":
      return "--vscode-charts-orange";
    case "cpu_op":
      return "--vscode-charts-green";
    case "user_annotation":
      return "--vscode-charts-purple";
    case "cuda_runtime":
    case "cuda_driver":
      return "--vscode-charts-red";
    default:
      return "--vscode-charts-lines";
  }
}

/** The categories of {@link categoryColor}, with the legend's words for them. */
export const LEGEND: readonly { cat: string; label: string }[] = [
  { cat: "user_annotation", label: "source line" },
  { cat: "cpu_op", label: "ATen op" },
  { cat: "python_function", label: "Python" },
  { cat: "cuda_runtime", label: "CUDA runtime" },
  { cat: "kernel", label: "kernel" },
  { cat: "memcpy", label: "memcpy" },
  { cat: "memset", label: "memset" },
];

/**
 * The legend's entries for the categories the timeline draws (a CPU run has no CUDA runtime,
 * kernel or memcpy to explain); the whole legend when no event says its category.
 */
export function legendFor(
  lanes: readonly { events: readonly { cat: string }[] }[],
): readonly { cat: string; label: string }[] {
  const cats = new Set<string>();
  for (const lane of lanes) {
    for (const event of lane.events) {
      cats.add(event.cat === "cuda_driver" ? "cuda_runtime" : event.cat);
    }
  }
  const shown = LEGEND.filter(({ cat }) => cats.has(cat));
  return shown.length === 0 ? LEGEND : shown;
}

/**
 * The longest prefix of `text` (with an ellipsis when cut) that `measure` says fits in
 * `maxWidth`; empty when not even one character and the ellipsis fit.
 */
export function fitText(text: string, maxWidth: number, measure: (s: string) => number): string {
  if (measure(text) <= maxWidth) {
    return text;
  }
  const n = firstWhere(text.length + 1, (i) => measure(`${text.slice(0, i)}…`) > maxWidth) - 1;
  return n < 1 ? "" : `${text.slice(0, n)}…`;
}

/** What a tooltip says about an event: its name, its duration and where it comes from. */
export function describeEvent(
  event: TimelineEvent,
  formatDuration: (us: number) => string,
): string[] {
  const lines = [event.merged === true ? `${event.count ?? 0} events (merged)` : event.name];
  lines.push(`${formatDuration(event.dur)} · starts at ${formatDuration(event.start)}`);
  const parts = [event.cat];
  if (event.line !== null) {
    parts.push(`line ${event.line}`);
  }
  lines.push(parts.join(" · "));
  return lines;
}

/**
 * How opaque a merged block is drawn: by how many events it holds per pixel of its width, so
 * that the overview of a big trace shows where its events are dense (0.25 for one event per
 * pixel or fewer, opaque from about 30 per pixel, on a log scale).
 */
export function mergedAlpha(count: number, widthPx: number): number {
  const perPixel = Math.max(count, 1) / Math.max(widthPx, 1);
  return Math.min(0.95, 0.25 + 0.14 * Math.log2(Math.max(perPixel, 1)));
}
