/**
 * The Nsight Compute tab: per profiled kernel, its duration, Speed-of-Light throughputs as
 * bars (percent of peak), achieved vs theoretical occupancy, registers, launch shape, waves,
 * and ncu's rule hints as ranked by the server. In the report panel it also runs ncu.
 */
import type { NcuHint, NcuKernel } from "../../generated/wire";
import { bar, button, el } from "./dom";
import { formatCount, formatGbs, formatPct, formatUs, noBidi, significant } from "./format";

export interface NcuActions {
  /** Absent in a custom editor (nothing to run). */
  onRun?: (set: "basic" | "full") => void;
  /** Why ncu cannot run here (e.g. the function ran on a CPU): the buttons are disabled. */
  unavailable?: string;
  /** Absent without source linking. */
  onRevealLine?: (line: number) => void;
}

/** The "Run Nsight Compute" buttons. */
function runButtons(actions: NcuActions): HTMLElement[] {
  const run = actions.onRun;
  if (run === undefined) {
    return [];
  }
  const buttons = [
    button("Run Nsight Compute", () => run("basic"), {
      primary: true,
      action: "runNcu",
      title:
        "ncu --set basic on one call of the function: Speed of Light, launch statistics, occupancy",
    }),
    button("Full set", () => run("full"), {
      action: "runNcu",
      title: "ncu --set full: every section (slower: many replays per kernel)",
    }),
  ];
  const reason = actions.unavailable;
  if (reason === undefined) {
    return buttons;
  }
  // Offered, but disabled with the reason, rather than a failure after the click.
  for (const b of buttons) {
    b.disabled = true;
    b.title = noBidi(reason);
  }
  return [...buttons, el("span", { className: "muted disabled-reason", text: reason })];
}

/** The tab before any ncu run. */
export function noNcu(actions: NcuActions): HTMLElement {
  return el("section", { className: "empty" }, [
    el("p", { text: "Nsight Compute has not run on this function yet." }),
    el("p", {
      className: "muted",
      text: "It replays each kernel of one call of the function under ncu and reads why it is not faster: throughput against the hardware's peak, occupancy, and rule hints with an estimated speedup. It needs an NVIDIA GPU and ncu on the machine that runs the agent.",
    }),
    el("div", { className: "buttons" }, runButtons(actions)),
  ]);
}

function metric(label: string, value: HTMLElement | string): HTMLElement {
  return el("div", { className: "metric" }, [
    el("div", { className: "metric-label", text: label }),
    typeof value === "string" ? el("div", { className: "metric-value", text: value }) : value,
  ]);
}

function occupancy(k: NcuKernel): HTMLElement {
  const theoretical = el("div", { className: "fill theoretical" });
  theoretical.style.width = `${Math.min(100, k.theoretical_occupancy_pct ?? 0)}%`;
  const achieved = el("div", { className: "fill" });
  achieved.style.width = `${Math.min(100, k.achieved_occupancy_pct ?? 0)}%`;
  const label = `${formatPct(k.achieved_occupancy_pct)} achieved of ${formatPct(k.theoretical_occupancy_pct)} theoretical`;
  return el("div", { className: "bar", attrs: { role: "img", "aria-label": label } }, [
    theoretical,
    achieved,
    el("span", { className: "bar-label", text: label }),
  ]);
}

function launchShape(k: NcuKernel): string {
  if (k.grid !== null && k.block !== null) {
    return `${k.grid} × ${k.block}`;
  }
  return `${formatCount(k.grid_size)} × ${formatCount(k.block_size)}`;
}

/** Hints shown open; the rest show their title line until clicked. */
const OPEN_HINTS = 3;

function hintView(hint: NcuHint, index: number): HTMLElement {
  const speedup =
    hint.speedup_pct === null
      ? ""
      : `est. speedup ${significant(hint.speedup_pct)} %${hint.speedup_type === null ? "" : ` (${hint.speedup_type})`}`;
  const details = el("details", {}, [
    el("summary", { className: "hint-head" }, [
      el("span", { className: `badge kind-${hint.kind.toLowerCase()}`, text: hint.kind }),
      el("strong", { text: hint.title }),
      speedup === "" ? null : el("span", { className: "speedup", text: speedup }),
      el("span", { className: "spacer" }),
      el("span", { className: "muted", text: hint.section }),
    ]),
    el("p", { className: "hint-message", text: hint.message }),
  ]);
  details.open = index < OPEN_HINTS;
  return el("li", { className: `hint-item kind-${hint.kind.toLowerCase()}` }, [details]);
}

function kernelView(k: NcuKernel, actions: NcuActions): HTMLElement {
  const line = k.line ?? null;
  const reveal = actions.onRevealLine;
  const name = el("code", { className: "kernel-name", text: k.demangled || k.name, title: k.name });
  const head = el("div", { className: "kernel-head" }, [
    el("span", { className: "muted", text: `#${k.id}` }),
    name,
    k.device === null || k.device === undefined
      ? null
      : el("span", { className: "muted", text: k.device }),
    el("span", { className: "spacer" }),
    line !== null && reveal !== undefined
      ? button(`line ${line}`, () => reveal(line), { title: `Go to line ${line}` })
      : line !== null
        ? el("span", { className: "muted", text: `line ${line}` })
        : null,
  ]);
  const metrics = el("div", { className: "metrics" }, [
    metric("Duration", k.duration_us === null ? "–" : formatUs(k.duration_us)),
    metric(
      "Compute (SM) throughput",
      bar(k.compute_throughput_pct, formatPct(k.compute_throughput_pct), "compute"),
    ),
    metric(
      "Memory throughput",
      bar(k.memory_throughput_pct, formatPct(k.memory_throughput_pct), "memory"),
    ),
    metric(
      "DRAM throughput",
      bar(
        k.dram_throughput_pct,
        `${formatPct(k.dram_throughput_pct)} · ${formatGbs(k.dram_bandwidth_gbs)}`,
        "dram",
      ),
    ),
    metric("Occupancy", occupancy(k)),
    metric("Registers / thread", formatCount(k.registers)),
    metric("Grid × block", launchShape(k)),
    metric("Waves per SM", k.waves === null ? "–" : significant(k.waves)),
  ]);
  const hints =
    k.hints.length === 0
      ? el("p", { className: "muted", text: "No rule hints for this kernel." })
      : el("ol", { className: "hints" }, k.hints.map(hintView));
  return el("article", { className: "kernel" }, [
    head,
    metrics,
    el("h3", { text: "Hints" }),
    hints,
  ]);
}

/** The tab with an ncu result: its facts line, the run buttons, one card per kernel. */
export function ncuView(
  result: { report_path: string; reader: string; set?: string; kernels: readonly NcuKernel[] },
  actions: NcuActions,
): HTMLElement {
  const devices = [
    ...new Set(
      result.kernels.map((k) => k.device).filter((d): d is string => typeof d === "string"),
    ),
  ];
  const facts = [
    `${result.kernels.length} kernel${result.kernels.length === 1 ? "" : "s"}`,
    devices.join(", "),
    result.set === undefined ? "" : `set ${result.set}`,
    `read with ${result.reader}`,
  ].filter((s) => s !== "");
  return el("section", { className: "ncu" }, [
    el("div", { className: "toolbar" }, [
      el("span", { className: "muted", text: facts.join(" · ") }),
      el("code", { className: "muted path", text: result.report_path, title: result.report_path }),
      el("span", { className: "spacer" }),
      ...runButtons(actions),
    ]),
    result.kernels.length === 0
      ? el("p", { className: "muted", text: "The report holds no kernel." })
      : el(
          "div",
          { className: "kernels" },
          result.kernels.map((k) => kernelView(k, actions)),
        ),
  ]);
}
