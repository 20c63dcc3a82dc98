/**
 * The Summary tab: the function's timing (median ± spread, repetitions, device) and, per
 * source line, the ops it dispatched and the kernels they launched with their device time.
 * Clicking a line's row reveals it in the editor.
 */
import type { Profile, ProfileLine, ReportInputs } from "../../generated/wire";
import { button, el } from "./dom";
import {
  accountingText,
  cpuCell,
  formatCount,
  formatMs,
  formatOps,
  formatUs,
  linesSpan,
  opCalls,
  significant,
} from "./format";
import { byFileView } from "./byFile";
import { memoryView } from "./memory";
import { graphText, otherTimingWarnings, stabilityText, timingPolicyLines } from "./timingPolicy";

export interface SummaryActions {
  onRevealLine: (line: number) => void;
  onProfile: () => void;
}

/** The tab when there is no profile yet. */
export function noProfile(fn: string, actions: SummaryActions): HTMLElement {
  return el("section", { className: "empty" }, [
    el("p", { text: `${fn} has not been profiled yet (or its last profile failed).` }),
    el("p", {
      className: "muted",
      text: "Profiling runs the function: a warm-up, then timed repetitions, then one run under torch.profiler for the ops, kernels and the timeline.",
    }),
    button(`Profile ${fn}`, actions.onProfile, { primary: true, action: "profile" }),
  ]);
}

function stat(label: string, value: string, detail: string): HTMLElement {
  return el("div", { className: "stat" }, [
    el("div", { className: "stat-label", text: label }),
    el("div", { className: "stat-value", text: value }),
    el("div", { className: "stat-detail muted", text: detail }),
  ]);
}

/** The Pass column's meaning, on its header. */
const PASS_NOTE =
  "fwd: the line's own ops; bwd: the backward work its forward ops caused (their autograd " +
  "nodes, wherever the backward ran); total: the backward pass the line ran, whose parts are on " +
  "the forward lines.";

const PASS_TITLES: Record<Pass, string> = {
  fwd: "the line's own ops (the forward)",
  bwd: "the backward work this line's forward ops caused",
  pass: "the whole backward pass this line ran (also on the forward lines as their bwd rows)",
};

/** Why CPU shares, not CPU times, per line (as the lenses and hovers say). */
const CPU_NOTE =
  "Each op's share of the measured median, split as the profiler attributed CPU time. The " +
  "profiler's own CPU times (in each cell's tooltip) are inflated by the profiler itself: for " +
  "comparing lines, never the function's time (the median above, timed without the profiler).";

/** Which pass a row's work belongs to: the line's own (forward) ops, or the backward work its
 * forward ops caused (their autograd nodes), or the line's backward pass as a whole. */
type Pass = "fwd" | "bwd" | "pass";

/** One table row per kernel (or per op without kernels) of each line. */
interface LineRow {
  line: ProfileLine;
  first: boolean;
  pass: Pass;
  op: string;
  kernel: string;
  kernelFull: string;
  deviceUs: number;
  cpuUs: number | null;
  calls: number;
}

function lineRows(lines: readonly ProfileLine[]): LineRow[] {
  const rows: LineRow[] = [];
  for (const line of lines) {
    let first = true;
    let pass: Pass = "fwd";
    const push = (row: Omit<LineRow, "line" | "first" | "pass">): void => {
      rows.push({ line, first, pass, ...row });
      first = false;
    };
    if (line.backward_pass !== undefined) {
      pass = "pass";
      const spread = linesSpan(line.backward_pass.lines);
      push({
        op: `backward pass${spread === "" ? "" : ` · spread over lines ${spread}`}`,
        kernel: "",
        kernelFull: "",
        deviceUs: line.backward_pass.device_us,
        cpuUs: line.backward_pass.cpu_us,
        calls: 0,
      });
      pass = "fwd";
    }
    const parts: [Pass, typeof line.ops][] = [["fwd", line.ops]];
    if (line.backward !== undefined) {
      parts.push(["bwd", line.backward.ops]);
    }
    for (const [which, ops] of parts) {
      pass = which;
      pushOps(ops, push);
    }
    if (line.ops.length === 0 && line.backward_pass === undefined) {
      pass = "fwd";
      push({ op: "", kernel: "", kernelFull: "", deviceUs: 0, cpuUs: null, calls: 0 });
    }
  }
  return rows;
}

/** One row per kernel of each op (or one for an op that launched none). */
function pushOps(
  ops: ProfileLine["ops"],
  push: (row: Omit<LineRow, "line" | "first" | "pass">) => void,
): void {
  for (const op of ops) {
    const name =
      op.dispatch !== undefined && op.dispatch.length > 0
        ? `${op.name} → ${op.dispatch.join(", ")}`
        : op.name;
    if (op.kernels.length === 0) {
      push({
        op: name,
        kernel: "",
        kernelFull: "",
        deviceUs: op.device_us,
        cpuUs: op.cpu_us,
        calls: op.calls,
      });
    }
    for (const k of op.kernels) {
      push({
        op: name,
        kernel: k.short_name,
        kernelFull: k.name,
        deviceUs: k.device_us,
        cpuUs: null,
        calls: k.calls,
      });
    }
  }
}

/** The Summary tab. */
export function summaryView(
  profile: Profile,
  actions: SummaryActions,
  inputs: ReportInputs | null = null,
  roofline: HTMLElement | null = null,
  outdated = false,
): HTMLElement {
  const timing = profile.timing;
  const gpu = profile.device_kind !== "cpu" && profile.kernels.length > 0;
  const rows = lineRows(profile.lines);
  const policyLines = [...timingPolicyLines(timing), ...otherTimingWarnings(timing)];
  return el("section", { className: "summary" }, [
    // As the lens says `outdated: …`: the function changed since this run (edited, or a run
    // restored from the history of an older text); its lines and source are the run's.
    outdated ? outdatedNote(actions) : null,
    summaryStats(profile, gpu),
    policyLines.length === 0
      ? null
      : el(
          "div",
          { className: "timing-policy muted" },
          policyLines.map((line) => el("div", { text: line })),
        ),
    roofline,
    inputsView(inputs),
    memoryView(profile, actions.onRevealLine),
    el("div", { className: "toolbar" }, [
      el("h2", { text: "Per line" }),
      el("span", { className: "spacer" }),
      button("Profile again", actions.onProfile, { action: "profile" }),
    ]),
    rows.length === 0
      ? el("p", { className: "muted", text: "No line of the function ran a torch op." })
      : el("div", { className: "table-scroll" }, [
          linesTable(rows, { timing, gpu, outdated, actions }),
        ]),
    gpu || rows.length === 0 ? null : el("p", { className: "muted note", text: `* ${CPU_NOTE}` }),
    byFileView(profile),
  ]);
}

/** The note over an outdated run, with a button to profile again. */
function outdatedNote(actions: SummaryActions): HTMLElement {
  return el("div", { className: "outdated-note toolbar" }, [
    el("span", {
      text:
        "Outdated: the function changed since this run; its lines and source below " +
        "are the run's.",
    }),
    el("span", { className: "spacer" }),
    button("Profile again", actions.onProfile),
  ]);
}

/** The row of figures at the top: the median, in a CUDA graph, the device, kernels or ops. */
function summaryStats(profile: Profile, gpu: boolean): HTMLElement {
  const timing = profile.timing;
  const kernelUs = profile.kernels.reduce((sum, k) => sum + k.device_us, 0);
  const launches = profile.kernels.reduce((sum, k) => sum + k.calls, 0);
  return el("div", { className: "stats" }, [
    timing === null
      ? stat("Median", "–", "not timed")
      : stat(
          "Median",
          formatMs(timing.median_ms),
          `± ${significant(timing.spread_pct)} % spread · ${formatCount(timing.reps)} reps` +
            (timing.method === undefined ? "" : ` · ${timing.method}`) +
            stabilityText(timing),
        ),
    timing !== null && typeof timing.graph?.median_ms === "number"
      ? stat("In a CUDA graph", formatMs(timing.graph.median_ms), graphText(timing) ?? "")
      : null,
    stat(
      "Device",
      profile.device,
      profile.device_kind === "cpu" ? "no GPU: CPU timings and ops" : "",
    ),
    gpu
      ? stat(
          "Kernels",
          `${launches} launches`,
          `${formatUs(kernelUs)} on the GPU per call` + accountingText(profile),
        )
      : stat(
          "Ops",
          formatOps(opCalls(profile)),
          "op calls per call on the function's lines" +
            (profile.lines.some((l) => l.backward !== undefined) ? ", forward + backward" : ""),
        ),
  ]);
}

/** What the per-line table is drawn with. */
interface TableContext {
  timing: Profile["timing"];
  gpu: boolean;
  outdated: boolean;
  actions: SummaryActions;
}

/** How each row's time cell is drawn: its bar's scale and, on a CPU, the total of the shares. */
interface RowScale {
  gpu: boolean;
  hasBackward: boolean;
  maxUs: number;
  cpuTotal: number;
}

/** The per-line table: one row per kernel (or op) of each line. */
function linesTable(rows: readonly LineRow[], context: TableContext): HTMLElement {
  const { timing, gpu, outdated } = context;
  const hasBackward = rows.some((r) => r.pass !== "fwd");
  // A pass row's total is also on the forward lines' bwd rows: it neither scales the bars nor
  // counts in the CPU shares.
  const parts = rows.filter((r) => r.pass !== "pass");
  const maxUs = Math.max(1e-9, ...parts.map((r) => (gpu ? r.deviceUs : (r.cpuUs ?? 0))));
  // On a CPU an op's time under the profiler is inflated by the profiler itself: the cell reads
  // as its share of the measured median (as the lenses do); the absolute time is its tooltip.
  const cpuTotal = parts.reduce((sum, r) => sum + (r.cpuUs ?? 0), 0);
  const scale: RowScale = { gpu, hasBackward, maxUs, cpuTotal };
  const body = el(
    "tbody",
    {},
    rows.map((row) => lineRow(row, scale, context.actions)),
  );
  return el("table", { className: "lines" }, [
    el("thead", {}, [
      el("tr", {}, [
        el("th", { className: "num", text: "Line" }),
        el("th", {
          text: outdated ? "Source (as profiled)" : "Source",
          ...(outdated ? { title: "the line as it was when this run was profiled" } : {}),
        }),
        hasBackward ? el("th", { text: "Pass", title: PASS_NOTE }) : null,
        el("th", { text: gpu ? "Op → kernel" : "Op" }),
        el("th", {
          className: "num",
          text: gpu
            ? "Device"
            : timing !== null && timing.median_ms > 0
              ? `Share* of ${formatMs(timing.median_ms)}`
              : "Share*",
          ...(gpu ? {} : { title: CPU_NOTE }),
        }),
        el("th", { className: "num", text: "Calls" }),
      ]),
    ]),
    body,
  ]);
}

/** One row of the per-line table; clicking it (or Enter, Space) reveals its line. */
function lineRow(row: LineRow, scale: RowScale, actions: SummaryActions): HTMLElement {
  const { gpu, hasBackward, maxUs, cpuTotal } = scale;
  const time = gpu ? row.deviceUs : (row.cpuUs ?? 0);
  const cell = gpu
    ? { text: time > 0 ? formatUs(time) : "–", title: "" }
    : // The median is in the column's header: a narrow panel keeps every column in view.
      cpuCell(time, cpuTotal, null);
  const fill = el("div", { className: "fill" });
  fill.style.width = `${Math.min(100, (100 * time) / maxUs)}%`;
  const tr = el(
    "tr",
    {
      className: `clickable ${row.first ? "line-first" : "line-cont"}`,
      title: `Go to line ${row.line.line}`,
      attrs: { tabindex: "0" },
      onClick: () => actions.onRevealLine(row.line.line),
    },
    [
      el("td", { className: "num", text: row.first ? String(row.line.line) : "" }),
      el("td", { className: "source" }, [
        row.first ? el("code", { text: row.line.source, title: row.line.source }) : null,
      ]),
      hasBackward
        ? el("td", {
            className: `pass pass-${row.pass}`,
            text: row.pass === "pass" ? "total" : row.pass,
            title: PASS_TITLES[row.pass],
          })
        : null,
      el("td", { className: "op" }, [
        el("span", { text: row.op }),
        row.kernel === "" ? null : el("span", { className: "arrow", text: " → " }),
        row.kernel === "" ? null : el("code", { text: row.kernel, title: row.kernelFull }),
      ]),
      el("td", { className: "num timecell" }, [
        el("div", { className: "minibar" }, [fill]),
        el("span", { text: cell.text, ...(cell.title === "" ? {} : { title: cell.title }) }),
      ]),
      el("td", { className: "num", text: row.calls > 0 ? String(row.calls) : "" }),
    ],
  );
  tr.addEventListener("keydown", (e) => {
    if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      actions.onRevealLine(row.line.line);
    }
  });
  return tr;
}

/** Where the run's inputs came from and each argument (the hover's words), or nothing. */
export function inputsView(inputs: ReportInputs | null): HTMLElement | null {
  if (inputs === null) {
    return null;
  }
  return el("div", { className: "inputs" }, [
    el("h2", { text: "Inputs" }),
    el("p", { className: "muted", text: inputs.source }),
    inputs.args.length === 0
      ? null
      : el(
          "ul",
          {},
          inputs.args.map((arg) => el("li", {}, [el("code", { text: arg })])),
        ),
  ]);
}
