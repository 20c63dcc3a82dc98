/**
 * The report webview's entry point (bundled to `dist/webview/report.js`). It renders what the
 * extension sends (`messages.ts`): a function's report in four tabs (Summary, Timeline, Nsight
 * Compute, Sweep), or, in a custom editor, a trace file's timeline or an ncu report's kernels.
 * It sends back only line numbers and actions; the extension knows which document they are for.
 */
import { noTimelineText, ncuUnavailable, traceNotSaved } from "./reportActions";
import type {
  CompareResult,
  HistoryResult,
  NcuFileResult,
  MemoryDevice,
  ReportResult,
  TraceFileResult,
} from "../../generated/wire";
import {
  REPORT_TABS,
  VIEW_MODES,
  isToWebview,
  type Action,
  type ReportTab,
  type ToWebview,
  type ViewMode,
} from "../messages";
import { labelFiles } from "./byFileModel";
import { baseName, button, el } from "./dom";
import { historyView, noHistory } from "./history";
import { ncuView, noNcu } from "./ncu";
import { RooflineView } from "./rooflineView";
import { noProfile, summaryView } from "./summary";
import { SweepView, noSweep } from "./sweep";
import { TimelineView } from "./timeline";
import { partialTraceText } from "../traceLoading";
import { traceSummaryView } from "./traceSummary";
import { loadState, post, saveState } from "./vscodeApi";

/** A rendered tab that holds resources (a canvas, a chart). */
interface LiveView {
  redraw(): void;
  dispose(): void;
}

const TAB_LABELS: Readonly<Record<ReportTab, string>> = {
  summary: "Summary",
  timeline: "Timeline",
  ncu: "Nsight Compute",
  sweep: "Sweep",
  history: "History",
};

/** The tabs of each mode, the first being the default. */
const MODE_TABS: Readonly<Record<ViewMode, readonly ReportTab[]>> = {
  report: REPORT_TABS,
  trace: ["timeline", "summary"],
  ncu: ["ncu"],
};

const modeAttr = document.body.dataset["mode"];
const mode: ViewMode = VIEW_MODES.find((m) => m === modeAttr) ?? "report";
const app = document.getElementById("app") ?? document.body;

const state: {
  tab: ReportTab;
  report?: ReportResult;
  trace?: TraceFileResult;
  ncuFile?: NcuFileResult;
  loading?: string | undefined;
  error?: string | undefined;
  busy: Action | null;
  /** The History tab's runs (null: unreadable), and the last comparison asked for. */
  history?: HistoryResult | null;
  comparison?: CompareResult | undefined;
} = {
  tab: MODE_TABS[mode].find((t) => t === loadState().tab) ?? MODE_TABS[mode][0] ?? "summary",
  busy: null,
};

let live: LiveView | undefined;
/** The timeline on screen, which detail answers go to. */
let timelineView: TimelineView | undefined;

/** {@link live} as set by the last render (read through a call: renders set it as they go). */
function liveView(): LiveView | undefined {
  return live;
}

function revealLine(line: number): void {
  post({ type: "revealLine", line });
}

function setTab(tab: ReportTab): void {
  state.tab = tab;
  saveState({ tab });
  render();
}

function tabBar(): HTMLElement {
  const tabs = MODE_TABS[mode];
  const bar = el("div", { className: "tabs", attrs: { role: "tablist" } });
  for (const tab of tabs) {
    const selected = tab === state.tab;
    const b = el("button", {
      className: `tab ${selected ? "selected" : ""}`,
      text: TAB_LABELS[tab],
      attrs: {
        type: "button",
        role: "tab",
        id: `tab-${tab}`,
        "aria-selected": String(selected),
        "aria-controls": "panel",
        tabindex: selected ? "0" : "-1",
      },
      onClick: () => setTab(tab),
    });
    b.addEventListener("keydown", (e) => {
      const step = e.key === "ArrowRight" ? 1 : e.key === "ArrowLeft" ? -1 : 0;
      if (step !== 0) {
        const next = tabs[(tabs.indexOf(tab) + step + tabs.length) % tabs.length];
        if (next !== undefined) {
          setTab(next);
          document.getElementById(`tab-${next}`)?.focus();
        }
      }
    });
    bar.append(b);
  }
  return bar;
}

function header(): HTMLElement {
  let title: string;
  let subtitle: string;
  if (mode === "report") {
    title = state.report?.function ?? "Kernel Lens report";
    subtitle = state.report === undefined ? "" : baseName(state.report.uri);
  } else if (mode === "trace") {
    title = state.trace === undefined ? "Trace" : baseName(state.trace.path);
    subtitle = "Chrome trace";
  } else {
    title =
      state.ncuFile === undefined ? "Nsight Compute report" : baseName(state.ncuFile.report_path);
    subtitle = "Nsight Compute report";
  }
  const busyText: Readonly<Record<Action, string>> = {
    profile: "Profiling…",
    runNcu: "Running Nsight Compute…",
    sweep: "Sweeping…",
    applyParameter: "Applying…",
  };
  const status = state.busy !== null ? busyText[state.busy] : (state.loading ?? "");
  return el("header", { className: "header" }, [
    el("h1", { text: title }),
    el("span", { className: "muted", text: subtitle }),
    el("span", { className: "spacer" }),
    status === ""
      ? null
      : el("span", { className: "status", text: status, attrs: { role: "status" } }),
    button("Refresh", () => post({ type: "refresh" }), { title: "Ask the server again" }),
  ]);
}

function errorBanner(): HTMLElement | null {
  if (state.error === undefined) {
    return null;
  }
  return el("div", { className: "error-banner", attrs: { role: "alert" } }, [
    el("span", { text: state.error }),
    el("span", { className: "spacer" }),
    button("Dismiss", () => {
      state.error = undefined;
      render();
    }),
  ]);
}

/** The current tab's content; sets {@link live} for views that draw. */
function tabContent(): HTMLElement {
  if (mode === "trace" || mode === "ncu") {
    return fileContent();
  }
  const report = state.report;
  if (report === undefined) {
    return el("p", { className: "muted", text: state.loading ?? "" });
  }
  const profile = () => post({ type: "profile" });
  switch (state.tab) {
    case "summary":
      return summaryTab(report, profile);
    case "timeline":
      return timelineTab(report, profile);
    case "ncu": {
      const unavailable = ncuUnavailable(report);
      const actions = {
        onRun: (set: "basic" | "full") => post({ type: "runNcu", set }),
        onRevealLine: revealLine,
        ...(unavailable === undefined ? {} : { unavailable }),
      };
      return report.ncu === null ? noNcu(actions) : ncuView(report.ncu, actions);
    }
    case "sweep": {
      const actions = {
        onSweep: (param: string, values: number[] | null) => post({ type: "sweep", param, values }),
        onApply: (param: string, value: number) => post({ type: "applyParameter", param, value }),
      };
      if (report.sweep === null) {
        return noSweep(actions, report.int_parameters);
      }
      const view = new SweepView(report.sweep, actions);
      live = { redraw: () => view.draw(), dispose: () => view.dispose() };
      return view.element;
    }
    case "history":
      return state.history === undefined || state.history === null
        ? state.history === undefined
          ? el("p", { className: "muted", text: "Loading the history…" })
          : noHistory(report.function, true)
        : historyView(state.history, state.comparison, {
            onDiff: (run) => post({ type: "historyDiff", run }),
            onSetBaseline: (run) => post({ type: "setBaseline", run }),
            onCompare: (before, after) => post({ type: "compareRuns", before, after }),
          });
  }
}

/** A trace file's tab (its summary or its timeline), or an ncu report's kernels. */
function fileContent(): HTMLElement {
  if (mode === "ncu") {
    const result = state.ncuFile;
    return result === undefined
      ? el("p", { className: "muted", text: state.loading ?? "" })
      : ncuView(result, {});
  }
  const trace = state.trace;
  if (trace === undefined) {
    return el("p", { className: "muted", text: state.loading ?? "" });
  }
  const content =
    state.tab === "summary"
      ? traceSummaryView(trace.path, trace.summary)
      : timelineContent(trace.timeline, false);
  if (trace.partial === undefined) {
    return content;
  }
  return el("div", {}, [
    el("p", { className: "muted", text: partialTraceText(trace.partial) }),
    content,
  ]);
}

/** The report's Summary tab, with the kernels' roofline (nothing when no kernel's bytes or
 * FLOPs are known). */
function summaryTab(report: ReportResult, profile: () => void): HTMLElement {
  if (report.profile === null) {
    return noProfile(report.function, { onProfile: profile, onRevealLine: revealLine });
  }
  const roofline = new RooflineView(report.profile.roofline);
  if (roofline.element !== null) {
    live = { redraw: () => roofline.draw(), dispose: () => roofline.dispose() };
  }
  return summaryView(
    report.profile,
    { onProfile: profile, onRevealLine: revealLine },
    report.inputs ?? null,
    roofline.element,
    report.outdated === true,
  );
}

/** The report's Timeline tab, or why there is none. */
function timelineTab(report: ReportResult, profile: () => void): HTMLElement {
  if (report.timeline === null) {
    return report.profile === null
      ? noProfile(report.function, { onProfile: profile, onRevealLine: revealLine })
      : el("section", { className: "empty" }, [
          // Kernel Lens's own failure to write the trace is said as such (issue 26).
          el("p", {
            className: traceNotSaved(report) === null ? "" : "trace-error",
            text: noTimelineText(report),
            attrs: traceNotSaved(report) === null ? {} : { role: "status" },
          }),
          button("Profile again", profile, { primary: true, action: "profile" }),
        ]);
  }
  labelRunFiles(report.timeline);
  return timelineContent(report.timeline, true, report.profile?.memory?.devices ?? []);
}

/** The line ranges of a run's other files (a named package's too) named by file (issue 48). */
function labelRunFiles(timeline: NonNullable<ReportResult["timeline"]>): void {
  const profile = state.report?.profile;
  const files = profile?.file_order;
  if (files === undefined || files.length < 2) return;
  labelFiles(
    timeline.lanes.flatMap((lane) => lane.events),
    files,
    profile?.packages ?? {},
  );
}

function timelineContent(
  timeline: NonNullable<ReportResult["timeline"]>,
  links: boolean,
  memory: readonly MemoryDevice[] = [],
): HTMLElement {
  if (timeline.lanes.length === 0) {
    return el("p", { className: "muted", text: "The trace has no complete events to show." });
  }
  const requestDetail = (id: number, start: number, end: number): void =>
    post({ type: "timelineWindow", id, start, end });
  const view = new TimelineView(timeline, {
    ...(links ? { onRevealLine: revealLine } : {}),
    ...(timeline.path === undefined ? {} : { requestDetail }),
    ...(memory.length === 0 ? {} : { memory }),
  });
  live = view;
  timelineView = view;
  return view.element;
}

function render(): void {
  live?.dispose();
  live = undefined;
  timelineView = undefined;
  const content = tabContent();
  const banner = errorBanner();
  app.replaceChildren(
    header(),
    ...(banner === null ? [] : [banner]),
    tabBar(),
    el(
      "div",
      {
        className: "panel",
        attrs: { id: "panel", role: "tabpanel", "aria-labelledby": `tab-${state.tab}` },
      },
      [content],
    ),
  );
  liveView()?.redraw();
  updateBusy();
}

/** Disables the action buttons while an action runs. */
function updateBusy(): void {
  for (const node of document.querySelectorAll<HTMLButtonElement>("button[data-action]")) {
    node.disabled = state.busy !== null;
  }
}

function onMessage(message: ToWebview): void {
  switch (message.type) {
    case "loading":
      state.loading = message.message;
      break;
    case "report":
      state.report = message.report;
      state.loading = undefined;
      state.error = undefined;
      saveState({ target: { uri: message.report.uri, function: message.report.function } });
      if (message.tab !== undefined) {
        state.tab = message.tab;
        saveState({ tab: message.tab });
      }
      break;
    case "traceFile":
      state.trace = message.result;
      state.loading = undefined;
      state.error = undefined;
      break;
    case "ncuFile":
      state.ncuFile = message.result;
      state.loading = undefined;
      state.error = undefined;
      break;
    case "error":
      state.error = message.message;
      state.loading = undefined;
      break;
    case "busy":
      state.busy = message.action;
      // Only the header and the buttons change: the timeline keeps its zoom and scroll.
      app.querySelector("header")?.replaceWith(header());
      updateBusy();
      return;
    case "theme":
      live?.redraw();
      return;
    case "timelineWindow":
      if (message.timeline !== null) labelRunFiles(message.timeline);
      timelineView?.receiveDetail(message.id, message.timeline);
      return;
    case "history":
      if (state.history?.function !== message.history?.function) {
        state.comparison = undefined;
      }
      state.history = message.history;
      if (state.tab !== "history") {
        return;
      }
      break;
    case "comparison":
      state.comparison = message.comparison;
      break;
  }
  render();
}

window.addEventListener("message", (event: MessageEvent<unknown>) => {
  if (isToWebview(event.data)) {
    onMessage(event.data);
  }
});

// VS Code marks the theme's kind on the body; a change of theme redraws the canvases.
new MutationObserver(() => live?.redraw()).observe(document.body, {
  attributes: true,
  attributeFilter: ["class"],
});

render();
post({ type: "ready" });
