/**
 * The timeline tab: a hand-written canvas of the server's reduced trace. One band per lane (CPU
 * thread, CUDA runtime, GPU stream) with one row per nesting depth, a time axis, wheel zoom
 * around the cursor, drag to pan (both ways), a tooltip on hover, and a click on an event with
 * a source line revealing that line in the editor. Only the visible events are drawn
 * (`timelineModel.ts` does the maths); colours are read from the theme at every draw.
 *
 * A distributed step's timeline has one lane group per rank, under a band saying the rank, the
 * straggler and its wait, with a marker at each collective (its skew across ranks on hover);
 * the ranks are aligned on their first collective's start (`rankGroups.ts`).
 */
import type { MemoryDevice, Timeline, TimelineEvent } from "../../generated/wire";
import { cssVar, el } from "./dom";
import { formatBytes, formatUs } from "./format";
import { laneCorners } from "./memoryModel";
import {
  collectiveTooltip,
  markerAt,
  markersOf,
  rankGroupLabel,
  rankGroupTooltip,
  type Marker,
} from "./rankGroups";
import {
  DEFAULT_METRICS,
  legendFor,
  categoryColor,
  covers,
  describeEvent,
  detailWindow,
  fitText,
  fullView,
  GROUP_HEIGHT,
  groupBandAt,
  hitTest,
  initiallyCollapsed,
  laneHeaderAt,
  layoutLanes,
  mergedAlpha,
  needsDetail,
  panBy,
  ticks,
  timeToX,
  visibleBoxes,
  wheelZoomFactor,
  withDetail,
  xToTime,
  zoomAround,
  type GroupBlock,
  type LaneBlock,
  type Row,
  type TimeView,
} from "./timelineModel";

const AXIS_HEIGHT = 24;
/** Pixels the pointer must move before a press becomes a drag rather than a click. */
const DRAG_THRESHOLD = 4;

/** The zoom of each timeline seen, so a redraw after new data keeps it (same trace). */
const savedViews = new Map<string, TimeView>();
/** The folded lanes of each timeline seen. */
const savedCollapsed = new Map<string, Set<string>>();

function timelineKey(timeline: Timeline): string {
  return `${timeline.span_us}:${timeline.event_count}:${timeline.kept}`;
}

export interface TimelineOptions {
  /** Called with the 1-based line of a clicked event; absent: no source linking. */
  onRevealLine?: (line: number) => void;
  /**
   * Asks for the events between `start` and `end` in detail; the answer comes back through
   * {@link TimelineView.receiveDetail} with the same `id`. Absent: the overview only.
   */
  requestDetail?: (id: number, start: number, end: number) => void;
  /** A profile with memory: one lane per device of its live bytes, under the same zoom. */
  memory?: readonly MemoryDevice[];
}

/** Height of one device's memory lane, in CSS pixels. */
const MEMORY_LANE_HEIGHT = 36;

/** Quiet time after a zoom or pan before asking for detail, in milliseconds. */
const DETAIL_DELAY_MS = 150;

let detailRequests = 0;

/** The timeline view; `element` goes into the page, `dispose` before it leaves. */
export class TimelineView {
  readonly element: HTMLElement;
  private readonly axis: HTMLCanvasElement;
  private readonly memoryCanvas: HTMLCanvasElement | undefined;
  private readonly body: HTMLCanvasElement;
  private readonly scroller: HTMLElement;
  private readonly tooltip: HTMLElement;
  private lanes: LaneBlock[] = [];
  private groups: GroupBlock[] = [];
  private rows: Row[] = [];
  private readonly laneIds: string[];
  private height = 0;
  private readonly collapsed: Set<string>;
  /** The server's detail of a window, drawn while it covers the view. */
  private detail: { window: [number, number]; timeline: Timeline; rows: Row[] } | undefined;
  private pending: { id: number; window: [number, number] } | undefined;
  private detailTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly bounds: TimeView;
  private readonly key: string;
  private view: TimeView;
  private hovered: TimelineEvent | undefined;
  private selected: TimelineEvent | undefined;
  private drag:
    | { x: number; y: number; view: TimeView; scrollTop: number; moved: boolean; pointer: number }
    | undefined;
  private frame = 0;
  private readonly resize: ResizeObserver;
  private hatch: { color: string; pattern: CanvasPattern | null } | undefined;

  constructor(
    private readonly timeline: Timeline,
    private readonly options: TimelineOptions = {},
  ) {
    this.collapsed = savedCollapsed.get(timelineKey(timeline)) ?? initiallyCollapsed(timeline);
    this.relayout();
    this.laneIds = timeline.lanes.map((lane) => lane.id);
    this.bounds = fullView(timeline.span_us);
    this.key = timelineKey(timeline);
    this.view = savedViews.get(this.key) ?? this.bounds;

    this.axis = el("canvas", { className: "timeline-axis" });
    this.memoryCanvas =
      (options.memory ?? []).length === 0
        ? undefined
        : el("canvas", {
            className: "timeline-memory",
            attrs: { role: "img", "aria-label": "Memory: live bytes per device over time" },
          });
    this.body = el("canvas", {
      className: "timeline-body",
      attrs: {
        tabindex: "0",
        role: "img",
        "aria-label":
          "Timeline. Wheel or + and - to zoom, drag or arrow keys to pan, 0 to show everything.",
      },
    });
    this.tooltip = el("div", { className: "tooltip hidden", attrs: { role: "tooltip" } });
    this.scroller = el("div", { className: "timeline-scroller" }, [this.body]);
    const reset = el("button", {
      className: "secondary",
      text: "Show all",
      attrs: { type: "button" },
      onClick: () => this.setView(this.bounds),
    });
    this.element = el("section", { className: "timeline" }, [
      el("div", { className: "toolbar" }, [
        timelineLegend(timeline),
        el("span", { className: "spacer" }),
        el("span", { className: "muted", text: timelineFacts(timeline) }),
        reset,
      ]),
      el("div", { className: "timeline-frame" }, [
        this.axis,
        this.memoryCanvas ?? null,
        this.scroller,
        this.tooltip,
      ]),
      el("p", { className: "hint muted", text: timelineHint(timeline, options) }),
    ]);
    this.listen();
    this.resize = new ResizeObserver(() => this.redraw());
    this.resize.observe(this.scroller);
    // A zoom kept from before (same trace) may need its detail again.
    this.scheduleDetail();
  }

  /** The body's pointer, wheel and keys; the scroller's scroll. */
  private listen(): void {
    this.body.addEventListener("wheel", (e) => this.onWheel(e), { passive: false });
    this.body.addEventListener("pointerdown", (e) => this.onPointerDown(e));
    this.body.addEventListener("pointermove", (e) => this.onPointerMove(e));
    this.body.addEventListener("pointerup", (e) => this.onPointerUp(e));
    this.body.addEventListener("pointerleave", () => this.setHovered(undefined, 0, 0));
    this.body.addEventListener("dblclick", () => this.setView(this.bounds));
    this.body.addEventListener("keydown", (e) => this.onKey(e));
    this.scroller.addEventListener("scroll", () => this.hideTooltip());
  }

  dispose(): void {
    this.resize.disconnect();
    cancelAnimationFrame(this.frame);
    clearTimeout(this.detailTimer);
  }

  /** Lays the lanes out again (a lane folded or unfolded), keeping the detail. */
  private relayout(): void {
    const layout = layoutLanes(this.timeline, DEFAULT_METRICS, this.collapsed);
    this.lanes = layout.lanes;
    this.groups = layout.groups;
    this.rows = layout.rows;
    this.height = layout.height;
    if (this.detail !== undefined) {
      this.detail.rows = withDetail(this.rows, this.laneIds, this.detail.timeline);
    }
  }

  /** Folds or unfolds a lane. */
  private toggleLane(id: string): void {
    if (!this.collapsed.delete(id)) {
      this.collapsed.add(id);
    }
    savedCollapsed.set(this.key, new Set(this.collapsed));
    this.relayout();
    this.redraw();
  }

  /** Takes the server's answer to a detail request (only the latest request's is used). */
  receiveDetail(id: number, detail: Timeline | null): void {
    if (this.pending?.id !== id) {
      return;
    }
    const window = this.pending.window;
    this.pending = undefined;
    if (detail !== null) {
      this.detail = {
        window: detail.window ?? window,
        timeline: detail,
        rows: withDetail(this.rows, this.laneIds, detail),
      };
      this.redraw();
      // Zoomed in further while the answer was on its way?
      this.scheduleDetail();
    }
  }

  /** The rows to draw and hit: the detail's while it covers the view, else the overview's. */
  private currentRows(): Row[] {
    const detail = this.detail;
    return detail !== undefined && covers(detail.window, this.view, this.timeline.span_us)
      ? detail.rows
      : this.rows;
  }

  /** After the view settles, asks for detail if the view is zoomed past what it has. */
  private scheduleDetail(): void {
    const request = this.options.requestDetail;
    if (request === undefined) {
      return;
    }
    clearTimeout(this.detailTimer);
    this.detailTimer = setTimeout(() => {
      const span = this.timeline.span_us;
      const detail = this.detail;
      const data =
        detail !== undefined && covers(detail.window, this.view, span)
          ? detail.timeline
          : this.timeline;
      if (!needsDetail(data, this.view, this.width)) {
        return;
      }
      if (this.pending !== undefined && covers(this.pending.window, this.view, span)) {
        return;
      }
      const window = detailWindow(this.view, span);
      detailRequests += 1;
      this.pending = { id: detailRequests, window };
      request(detailRequests, window[0], window[1]);
    }, DETAIL_DELAY_MS);
  }

  /** Draws again on the next frame (new size, new theme). */
  redraw(): void {
    cancelAnimationFrame(this.frame);
    this.frame = requestAnimationFrame(() => this.draw());
  }

  private get width(): number {
    return Math.max(1, this.scroller.clientWidth);
  }

  private setView(view: TimeView): void {
    this.view = view;
    savedViews.set(this.key, view);
    this.hideTooltip();
    this.redraw();
    this.scheduleDetail();
  }

  private onWheel(e: WheelEvent): void {
    e.preventDefault();
    const width = this.width;
    if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
      const delta = Math.abs(e.deltaX) > Math.abs(e.deltaY) ? e.deltaX : e.deltaY;
      this.setView(panBy(this.view, -delta, width, this.bounds));
      return;
    }
    const anchor = xToTime(e.offsetX, this.view, width);
    this.setView(
      zoomAround(this.view, anchor, wheelZoomFactor(e.deltaY, e.deltaMode), this.bounds),
    );
  }

  private onKey(e: KeyboardEvent): void {
    const width = this.width;
    const centre = (this.view.start + this.view.end) / 2;
    const moves: Record<string, () => TimeView> = {
      "+": () => zoomAround(this.view, centre, 0.5, this.bounds),
      "=": () => zoomAround(this.view, centre, 0.5, this.bounds),
      "-": () => zoomAround(this.view, centre, 2, this.bounds),
      ArrowLeft: () => panBy(this.view, width / 4, width, this.bounds),
      ArrowRight: () => panBy(this.view, -width / 4, width, this.bounds),
      "0": () => this.bounds,
    };
    const move = moves[e.key];
    if (move !== undefined) {
      e.preventDefault();
      this.setView(move());
    }
  }

  private onPointerDown(e: PointerEvent): void {
    if (e.button !== 0) {
      return;
    }
    this.body.setPointerCapture(e.pointerId);
    this.drag = {
      x: e.clientX,
      y: e.clientY,
      view: this.view,
      scrollTop: this.scroller.scrollTop,
      moved: false,
      pointer: e.pointerId,
    };
  }

  private onPointerMove(e: PointerEvent): void {
    const drag = this.drag;
    if (drag !== undefined && drag.pointer === e.pointerId) {
      const dx = e.clientX - drag.x;
      const dy = e.clientY - drag.y;
      if (!drag.moved && Math.hypot(dx, dy) < DRAG_THRESHOLD) {
        return;
      }
      drag.moved = true;
      this.body.classList.add("dragging");
      this.scroller.scrollTop = drag.scrollTop - dy;
      this.setView(panBy(drag.view, dx, this.width, this.bounds));
      return;
    }
    const onHeader = laneHeaderAt(this.lanes, DEFAULT_METRICS, e.offsetY) !== undefined;
    this.body.classList.toggle("on-header", onHeader);
    const group = groupBandAt(this.groups, DEFAULT_METRICS, e.offsetY);
    if (group !== undefined) {
      this.setHovered(undefined, 0, 0);
      this.showTooltip(this.groupTooltip(group, e.offsetX), e.offsetX, e.offsetY);
      return;
    }
    const event = hitTest(
      this.currentRows(),
      DEFAULT_METRICS,
      this.view,
      this.width,
      e.offsetX,
      e.offsetY,
    );
    this.setHovered(event, e.offsetX, e.offsetY);
  }

  private onPointerUp(e: PointerEvent): void {
    const drag = this.drag;
    this.drag = undefined;
    this.body.classList.remove("dragging");
    if (drag === undefined || drag.moved || drag.pointer !== e.pointerId) {
      return;
    }
    const header = laneHeaderAt(this.lanes, DEFAULT_METRICS, e.offsetY);
    if (header !== undefined) {
      this.toggleLane(header.id);
      return;
    }
    const event = hitTest(
      this.currentRows(),
      DEFAULT_METRICS,
      this.view,
      this.width,
      e.offsetX,
      e.offsetY,
    );
    this.selected = event;
    this.redraw();
    if (event?.line !== null && event?.line !== undefined && this.options.onRevealLine) {
      this.options.onRevealLine(event.line);
    }
  }

  private setHovered(event: TimelineEvent | undefined, x: number, y: number): void {
    if (event !== this.hovered) {
      this.hovered = event;
      this.redraw();
    }
    if (event === undefined) {
      this.hideTooltip();
      return;
    }
    const lines = describeEvent(event, formatUs);
    if (event.line !== null && this.options.onRevealLine !== undefined) {
      lines.push("click: go to the source line");
    }
    this.showTooltip(lines, x, y);
  }

  /** What the tooltip says over a rank group's band: the collective under x, else the rank. */
  private groupTooltip(group: GroupBlock, x: number): string[] {
    const marker = markerAt(this.markers(group), this.view, this.width, x);
    if (marker !== undefined) {
      return collectiveTooltip(marker, formatUs);
    }
    return group.info === undefined
      ? [`rank ${group.rank}`]
      : rankGroupTooltip(group.info, formatUs);
  }

  private markers(group: GroupBlock): Marker[] {
    return markersOf(this.timeline.collectives, group.rank);
  }

  /** Shows `lines` (text only) beside the pointer, flipped to stay inside the frame. */
  private showTooltip(lines: readonly string[], x: number, y: number): void {
    this.tooltip.replaceChildren(
      ...lines.map((text, i) => el("div", { className: i === 0 ? "tooltip-name" : "", text })),
    );
    this.tooltip.classList.remove("hidden");
    // Placed beside the pointer, flipped to stay inside the frame.
    const frame = this.scroller.getBoundingClientRect();
    const top = AXIS_HEIGHT + y - this.scroller.scrollTop + 16;
    const tipWidth = this.tooltip.offsetWidth;
    const left = x + 12 + tipWidth > frame.width ? Math.max(0, x - 12 - tipWidth) : x + 12;
    this.tooltip.style.left = `${left}px`;
    this.tooltip.style.top = `${top}px`;
  }

  private hideTooltip(): void {
    this.tooltip.classList.add("hidden");
  }

  /** A canvas sized for the device's pixel ratio, its context scaled to CSS pixels. */
  private prepare(
    canvas: HTMLCanvasElement,
    width: number,
    height: number,
  ): CanvasRenderingContext2D | null {
    const ratio = window.devicePixelRatio || 1;
    const w = Math.round(width * ratio);
    const h = Math.round(height * ratio);
    if (canvas.width !== w || canvas.height !== h) {
      canvas.width = w;
      canvas.height = h;
      canvas.style.width = `${width}px`;
      canvas.style.height = `${height}px`;
    }
    const context = canvas.getContext("2d");
    context?.setTransform(ratio, 0, 0, ratio, 0, 0);
    context?.clearRect(0, 0, width, height);
    return context;
  }

  private draw(): void {
    const width = this.width;
    const font = `${cssVar("--vscode-editor-font-size", "12px").replace(/^(\d+)$/, "$1px")} ${cssVar("--vscode-font-family", "sans-serif")}`;
    const style = getComputedStyle(document.body);
    const palette = new Map<string, string>();
    const colorOf = (cat: string): string => {
      let color = palette.get(cat);
      if (color === undefined) {
        color = style.getPropertyValue(categoryColor(cat)).trim() || "#888";
        palette.set(cat, color);
      }
      return color;
    };
    const colors = {
      colorOf,
      fg: cssVar("--vscode-foreground", "#ccc"),
      muted: cssVar("--vscode-descriptionForeground", "#999"),
      grid: cssVar("--vscode-panel-border", "rgba(128,128,128,0.35)"),
      header: cssVar("--vscode-sideBarSectionHeader-background", "rgba(128,128,128,0.12)"),
      boxText: cssVar("--vscode-editor-background", "#1e1e1e"),
      focus: cssVar("--vscode-focusBorder", "#007fd4"),
    };
    const grid = ticks(this.view, width);

    const axis = this.prepare(this.axis, width, AXIS_HEIGHT);
    if (axis !== null) {
      axis.font = `11px ${cssVar("--vscode-font-family", "sans-serif")}`;
      axis.fillStyle = colors.muted;
      axis.strokeStyle = colors.grid;
      axis.textBaseline = "middle";
      for (const tick of grid) {
        axis.beginPath();
        axis.moveTo(Math.round(tick.x) + 0.5, AXIS_HEIGHT - 6);
        axis.lineTo(Math.round(tick.x) + 0.5, AXIS_HEIGHT);
        axis.stroke();
        axis.fillText(tick.label, tick.x + 3, AXIS_HEIGHT / 2 - 2);
      }
      axis.beginPath();
      axis.moveTo(0, AXIS_HEIGHT - 0.5);
      axis.lineTo(width, AXIS_HEIGHT - 0.5);
      axis.stroke();
    }

    this.drawMemory(width, colors, grid);

    const c = this.prepare(this.body, width, Math.max(this.height, 1));
    if (c === null) {
      return;
    }
    c.font = font;
    c.textBaseline = "middle";
    const { header, row: rowHeight } = DEFAULT_METRICS;
    const top = this.scroller.scrollTop;
    const bottom = top + this.scroller.clientHeight;

    c.strokeStyle = colors.grid;
    c.lineWidth = 1;
    for (const tick of grid) {
      c.beginPath();
      c.moveTo(Math.round(tick.x) + 0.5, 0);
      c.lineTo(Math.round(tick.x) + 0.5, this.height);
      c.stroke();
    }
    for (const lane of this.lanes) {
      c.fillStyle = colors.header;
      c.fillRect(0, lane.y, width, header);
      c.fillStyle = colors.fg;
      const mark = lane.collapsed ? "▸" : "▾";
      const folded = lane.collapsed ? `  (${lane.depths} rows folded: click to show)` : "";
      const title = `${mark} ${lane.title}${folded}`;
      c.fillText(title, 6, lane.y + header / 2);
      if (lane.top) {
        // Where the lane's time goes in view, after its title, dimmer.
        c.fillStyle = colors.muted;
        c.fillText(`   ${lane.top}`, 6 + c.measureText(title).width, lane.y + header / 2);
      }
    }
    for (const group of this.groups) {
      this.drawGroup(c, group, width, colors);
    }
    for (const row of this.currentRows()) {
      if (row.y + rowHeight < top || row.y > bottom) {
        continue;
      }
      for (const box of visibleBoxes(row, this.view, width)) {
        this.drawBox(c, box.event, box.x, row.y, box.w, rowHeight, box.hidden, colors);
      }
    }
  }

  /**
   * A rank group's band: its label (the straggler's accent in the theme's warning colour), and a
   * marker at each of its collectives, a thin line down through its lanes, so the ranks' starts
   * of one collective can be compared at a glance.
   */
  private drawGroup(
    c: CanvasRenderingContext2D,
    group: GroupBlock,
    width: number,
    colors: { fg: string; header: string; focus: string; grid: string },
  ): void {
    const straggler = group.info?.straggler === true;
    const accent = straggler
      ? cssVar("--vscode-editorWarning-foreground", "#cca700")
      : colors.focus;
    const marker = cssVar("--vscode-charts-red", "#f14c4c");
    c.fillStyle = colors.header;
    c.fillRect(0, group.y, width, GROUP_HEIGHT);
    c.globalAlpha = 0.15;
    c.fillStyle = accent;
    c.fillRect(0, group.y, width, GROUP_HEIGHT);
    c.globalAlpha = 1;
    c.fillStyle = accent;
    c.fillRect(0, group.y, 4, group.bottom - group.y);
    const label =
      group.info === undefined ? `rank ${group.rank}` : rankGroupLabel(group.info, formatUs);
    const font = c.font;
    c.font = `bold ${font}`;
    c.fillStyle = straggler ? accent : colors.fg;
    c.fillText(label, 10, group.y + GROUP_HEIGHT / 2);
    c.font = font;
    for (const m of this.markers(group)) {
      const x = Math.round(timeToX(m.start, this.view, width)) + 0.5;
      if (x < -6 || x > width + 6) {
        continue;
      }
      c.strokeStyle = marker;
      c.globalAlpha = 0.45;
      c.beginPath();
      c.moveTo(x, group.y + GROUP_HEIGHT);
      c.lineTo(x, group.bottom);
      c.stroke();
      c.globalAlpha = 1;
      c.fillStyle = marker;
      c.beginPath();
      c.moveTo(x - 5, group.y + GROUP_HEIGHT - 9);
      c.lineTo(x + 5, group.y + GROUP_HEIGHT - 9);
      c.lineTo(x, group.y + GROUP_HEIGHT - 1);
      c.closePath();
      c.fill();
    }
  }

  /** The memory lanes: each device's live bytes as a step line under the current zoom. */
  private drawMemory(
    width: number,
    colors: { fg: string; muted: string; grid: string; header: string },
    grid: readonly { x: number }[],
  ): void {
    const devices = this.options.memory ?? [];
    if (this.memoryCanvas === undefined || devices.length === 0) {
      return;
    }
    const height = MEMORY_LANE_HEIGHT * devices.length;
    const m = this.prepare(this.memoryCanvas, width, height);
    if (m === null) {
      return;
    }
    m.font = `11px ${cssVar("--vscode-font-family", "sans-serif")}`;
    m.textBaseline = "top";
    devices.forEach((dev, i) => {
      const y0 = i * MEMORY_LANE_HEIGHT;
      const inner = MEMORY_LANE_HEIGHT - 4;
      m.fillStyle = colors.header;
      m.fillRect(0, y0, width, MEMORY_LANE_HEIGHT);
      m.strokeStyle = colors.grid;
      for (const tick of grid) {
        m.beginPath();
        m.moveTo(Math.round(tick.x) + 0.5, y0);
        m.lineTo(Math.round(tick.x) + 0.5, y0 + MEMORY_LANE_HEIGHT);
        m.stroke();
      }
      const corners = laneCorners(
        dev.timeline,
        dev.timeline_offset_us ?? 0,
        this.view,
        width,
        inner,
        dev.peak_bytes,
      );
      m.strokeStyle = cssVar("--vscode-charts-purple", "#b180d7");
      m.lineWidth = 1.5;
      m.beginPath();
      corners.forEach(([x, y], k) => {
        if (k === 0) {
          m.moveTo(x, y0 + 2 + y);
        } else {
          m.lineTo(x, y0 + 2 + y);
        }
      });
      m.stroke();
      m.lineWidth = 1;
      // The lane's name on a plate of its own, so the line never runs through it.
      const label = `Memory · ${dev.label} · peak ${formatBytes(dev.peak_bytes)}`;
      m.fillStyle = cssVar("--vscode-editor-background", "#1e1e1e");
      m.fillRect(2, y0 + 2, m.measureText(label).width + 8, 14);
      m.fillStyle = colors.fg;
      m.fillText(label, 6, y0 + 3);
    });
  }

  private drawBox(
    c: CanvasRenderingContext2D,
    event: TimelineEvent,
    x: number,
    y: number,
    w: number,
    h: number,
    hidden: number,
    colors: { colorOf: (cat: string) => string; boxText: string; focus: string; fg: string },
  ): void {
    const color = colors.colorOf(event.cat);
    const left = Math.max(x, -2);
    const right = Math.min(x + w, this.width + 2);
    const top = y + 1;
    const height = h - 2;
    if (event.merged === true) {
      c.globalAlpha = mergedAlpha(event.count ?? 1, w);
      c.fillStyle = color;
      c.fillRect(left, top, right - left, height);
      c.globalAlpha = 1;
      c.fillStyle = this.hatchPattern(c, colors.fg) ?? color;
      c.fillRect(left, top, right - left, height);
    } else {
      c.fillStyle = color;
      c.globalAlpha = hidden > 0 ? 0.7 : 0.9;
      c.fillRect(left, top, right - left, height);
      c.globalAlpha = 1;
    }
    if (event === this.hovered || event === this.selected) {
      c.strokeStyle = colors.focus;
      c.lineWidth = event === this.selected ? 2 : 1;
      c.strokeRect(left + 0.5, top + 0.5, Math.max(1, right - left - 1), height - 1);
    }
    const label =
      event.merged === true
        ? `${event.count ?? 0} events`
        : event.short !== ""
          ? event.short
          : event.name;
    const room = right - Math.max(left, 0) - 6;
    if (room > 14) {
      const text = fitText(label, room, (s) => c.measureText(s).width);
      if (text !== "") {
        c.fillStyle = event.merged === true ? colors.fg : colors.boxText;
        c.fillText(text, Math.max(left, 0) + 3, y + h / 2);
      }
    }
  }

  /** Diagonal stripes in `color`, for merged blocks (made once per colour). */
  private hatchPattern(c: CanvasRenderingContext2D, color: string): CanvasPattern | null {
    if (this.hatch?.color !== color) {
      const tile = document.createElement("canvas");
      tile.width = 6;
      tile.height = 6;
      const t = tile.getContext("2d");
      if (t !== null) {
        t.strokeStyle = color;
        t.globalAlpha = 0.5;
        t.beginPath();
        t.moveTo(0, 6);
        t.lineTo(6, 0);
        t.stroke();
      }
      this.hatch = { color, pattern: c.createPattern(tile, "repeat") };
    }
    return this.hatch.pattern;
  }
}

/** What the toolbar says of the timeline: ranks, events kept, the span. */
function timelineFacts(timeline: Timeline): string {
  const ranks = timeline.ranks ?? [];
  return (
    (ranks.length > 0
      ? `${ranks.length} ranks, aligned on their first collective's start · `
      : "") +
    `${timeline.kept} of ${timeline.event_count} events shown · span ${formatUs(timeline.span_us)}` +
    (timeline.kept < timeline.event_count ? " · short neighbours merged (hatched)" : "")
  );
}

/** The colours' legend, the runtime named as its lane has it ("MTIA runtime" on an MTIA trace). */
function timelineLegend(timeline: Timeline): HTMLElement {
  const runtime = timeline.lanes.find((lane) => lane.kind === "runtime")?.title;
  return el(
    "div",
    { className: "legend" },
    legendFor(timeline.lanes).map(({ cat, label }) => {
      const swatch = el("span", { className: "swatch" });
      swatch.style.backgroundColor = `var(${categoryColor(cat)})`;
      const shown = cat === "cuda_runtime" && runtime !== undefined ? runtime : label;
      return el("span", { className: "legend-item" }, [swatch, shown]);
    }),
  );
}

/** The hint under the timeline: how to zoom, pan, fold, and what a click does. */
function timelineHint(timeline: Timeline, options: TimelineOptions): string {
  const ranks = timeline.ranks ?? [];
  return (
    "Wheel: zoom around the pointer · Shift+wheel or drag: pan · double-click: show all · " +
    "click a lane's title: fold it" +
    (ranks.length > 0 ? " · hover a rank's marker: the collective's skew across ranks" : "") +
    (options.onRevealLine === undefined ? "" : " · click an event: go to its source line")
  );
}
