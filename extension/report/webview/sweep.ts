/**
 * The Sweep tab: the function's median time and effective bandwidth against the values of an
 * int parameter (log2 x axis, Chart.js bundled into the webview script: nothing is loaded from
 * elsewhere), the best value marked, a table, a button that writes the best value into the
 * source (the server's edit, undoable), and a form to run a sweep.
 */
import { isInterpreterSweep, proposedParam } from "./reportActions";
import {
  Chart,
  Legend,
  LineController,
  LineElement,
  LinearScale,
  LogarithmicScale,
  PointElement,
  Tooltip,
  type ChartConfiguration,
  type Scale,
} from "chart.js";
import type { SweepResult } from "../../generated/wire";
import { button, cssVar, el } from "./dom";
import { formatGbs, formatMs, significant } from "./format";
import { parseValues, sweepSeries, type SweepPoint, type SweepSeries } from "./sweepData";

Chart.register(
  LineController,
  LineElement,
  PointElement,
  LinearScale,
  LogarithmicScale,
  Tooltip,
  Legend,
);

export { DEFAULT_PARAM } from "./reportActions";

export interface SweepActions {
  onSweep: (param: string, values: number[] | null) => void;
  onApply: (param: string, value: number) => void;
}

/** The "Run sweep" form. */
function sweepForm(
  sweep: SweepResult | null,
  actions: SweepActions,
  intParameters?: Record<string, number>,
): HTMLElement {
  const param = el("input", {
    attrs: {
      type: "text",
      id: "sweep-param",
      spellcheck: "false",
      "aria-label": "Parameter",
      placeholder: Object.keys(intParameters ?? {}).join(", ") || "an int parameter",
    },
  });
  param.value = proposedParam(sweep, intParameters);
  const values = el("input", {
    attrs: {
      type: "text",
      id: "sweep-values",
      spellcheck: "false",
      placeholder: "e.g. 128, 256, 512, 1024 (empty: powers of two around the current value)",
      "aria-label": "Values",
    },
  });
  if (sweep !== null) {
    values.value = sweep.rows.map((r) => r.value).join(", ");
  }
  const error = el("div", { className: "form-error", attrs: { role: "alert" } });
  const form = el("form", { className: "sweep-form" }, [
    el("label", { text: "Parameter", attrs: { for: "sweep-param" } }),
    param,
    el("label", { text: "Values", attrs: { for: "sweep-values" } }),
    values,
    button(sweep === null ? "Run sweep" : "Run again", () => form.requestSubmit(), {
      primary: sweep === null,
      action: "sweep",
    }),
    error,
  ]);
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const name = param.value.trim();
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      error.textContent = "The parameter must be the name of an int parameter of the function.";
      return;
    }
    const parsed = parseValues(values.value);
    if (!parsed.ok) {
      error.textContent = `Values: ${parsed.error}.`;
      return;
    }
    error.textContent = "";
    actions.onSweep(name, parsed.values);
  });
  return form;
}

/** The tab before any sweep. */
export function noSweep(
  actions: SweepActions,
  intParameters?: Record<string, number>,
): HTMLElement {
  return el("section", { className: "empty" }, [
    el("p", { text: "No sweep of this function yet." }),
    el("p", {
      className: "muted",
      text: "A sweep times the function for each value of one of its int parameters (a block size, a chunk size) and shows which is fastest; the best can then be written into the source.",
    }),
    sweepForm(null, actions, intParameters),
  ]);
}

/** The Sweep tab with a result; `dispose` destroys the chart. */
export class SweepView {
  readonly element: HTMLElement;
  private chart: Chart<"line", { x: number; y: number }[]> | undefined;
  private readonly canvas: HTMLCanvasElement;

  constructor(
    private readonly sweep: SweepResult,
    actions: SweepActions,
  ) {
    const series = sweepSeries(sweep);
    const best = series.points[series.best];
    this.canvas = el("canvas", {
      attrs: {
        role: "img",
        "aria-label": `Median time and effective bandwidth against ${sweep.param}`,
      },
    });
    const interpreted = isInterpreterSweep(sweep);
    this.element = el("section", { className: "sweep" }, [
      el("div", { className: "toolbar" }, [
        el("span", { text: sweepHeadline(sweep, best, interpreted) }),
        el("span", { className: "muted", text: `${sweep.device} · ${sweep.method}` }),
        // Values the statistics cannot tell apart from the fastest (issue 11): said, not hidden.
        !interpreted && (sweep.ties ?? []).length > 1
          ? el("span", { className: "verdict same", text: sweep.verdict ?? "" })
          : null,
        el("span", { className: "spacer" }),
        applyControl(sweep, best, { interpreted, current: series.bestIsCurrent }, actions),
      ]),
      el("div", { className: "chart-box" }, [this.canvas]),
      el("table", { className: "sweep-table" }, [
        el("thead", {}, [
          el(
            "tr",
            {},
            ["Value", "Median", "Spread", "Reps", "Effective", ""].map((h, i) =>
              el("th", { className: i < 5 ? "num" : "", text: h }),
            ),
          ),
        ]),
        el(
          "tbody",
          {},
          sweep.rows.map((row) => sweepRow(sweep, row, best, interpreted)),
        ),
      ]),
      sweepForm(sweep, actions),
    ]);
  }

  /** Creates the chart (again: after a theme change, its colours are re-read). */
  draw(): void {
    this.chart?.destroy();
    const series = sweepSeries(this.sweep);
    const fg = cssVar("--vscode-foreground", "#ccc");
    const grid = cssVar("--vscode-panel-border", "rgba(128,128,128,0.3)");
    Chart.defaults.color = fg;
    Chart.defaults.borderColor = grid;
    Chart.defaults.font.family = cssVar("--vscode-font-family", "sans-serif");
    const param = this.sweep.param;
    const config: ChartConfiguration<"line", { x: number; y: number }[]> = {
      type: "line",
      data: { datasets: sweepDatasets(this.sweep, series) },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        interaction: { mode: "nearest", intersect: false, axis: "x" },
        scales: {
          x: {
            type: "logarithmic",
            title: { display: true, text: `${param} (log2 scale)` },
            afterBuildTicks: (axis: Scale) => {
              axis.ticks = series.ticks.map((value) => ({ value }));
            },
            ticks: { callback: (value) => String(value) },
          },
          y: {
            type: "linear",
            position: "left",
            beginAtZero: true,
            title: { display: true, text: "median time (ms)" },
          },
          y1: {
            type: "linear",
            position: "right",
            beginAtZero: true,
            grid: { drawOnChartArea: false },
            title: { display: true, text: "effective GB/s" },
          },
        },
        plugins: {
          legend: { position: "bottom", labels: { usePointStyle: true } },
          tooltip: {
            callbacks: {
              title: (items) => `${param} = ${items[0]?.parsed.x ?? ""}`,
              label: (item) =>
                item.dataset.yAxisID === "y1"
                  ? ` ${formatGbs(item.parsed.y)}`
                  : ` ${formatMs(item.parsed.y ?? 0)}`,
            },
          },
        },
      },
    };
    this.chart = new Chart(this.canvas, config);
  }

  dispose(): void {
    this.chart?.destroy();
    this.chart = undefined;
  }
}

/** The toolbar's headline: the best value and its time (or that every value failed). */
function sweepHeadline(
  sweep: SweepResult,
  best: SweepPoint | undefined,
  interpreted: boolean,
): string {
  return best === undefined
    ? `${sweep.param}: every value failed`
    : interpreted
      ? `Interpreter-mode sweep of ${sweep.param}: fastest here ${best.value} (${formatMs(best.ms)})`
      : `Best ${sweep.param} = ${best.value}: ${formatMs(best.ms)}` +
        (sweep.current === null ? "" : ` (now ${sweep.current})`);
}

/** The Apply button for the best value, or why there is none. */
function applyControl(
  sweep: SweepResult,
  best: SweepPoint | undefined,
  how: { interpreted: boolean; current: boolean },
  actions: SweepActions,
): HTMLElement | null {
  if (best === undefined) {
    return null;
  }
  if (how.interpreted) {
    // Under the interpreter the fastest value says nothing about a GPU: no Apply.
    return el("span", {
      className: "muted disabled-reason",
      text: "Interpreter-mode sweep: no value to apply (times are Triton's interpreter on the CPU, not a GPU's).",
    });
  }
  if (how.current) {
    return el("span", {
      className: "muted",
      text: `${sweep.param} = ${best.value} is already the value the function uses.`,
    });
  }
  return button(
    `Apply ${sweep.param} = ${best.value}`,
    () => actions.onApply(sweep.param, best.value),
    {
      primary: true,
      action: "applyParameter",
      title: `Write ${best.value} as the default of ${sweep.param} in the source (an edit you can undo)`,
    },
  );
}

/** One value's row of the table: its time, spread, reps, bandwidth, and best/current/error. */
function sweepRow(
  sweep: SweepResult,
  row: SweepResult["rows"][number],
  best: SweepPoint | undefined,
  interpreted: boolean,
): HTMLElement {
  // Under the interpreter no value is "best" for a GPU: none is marked.
  const isBest =
    !interpreted && best !== undefined && row.value === best.value && row.error === null;
  const note =
    row.error ??
    [isBest ? "best" : "", row.value === sweep.current ? "current" : ""]
      .filter((s) => s !== "")
      .join(", ");
  return el("tr", { className: `${isBest ? "best" : ""} ${row.error === null ? "" : "failed"}` }, [
    el("td", { className: "num", text: String(row.value) }),
    el("td", {
      className: "num",
      text: typeof row.median_ms === "number" ? formatMs(row.median_ms) : "–",
    }),
    el("td", {
      className: "num",
      text: typeof row.spread_pct === "number" ? `± ${significant(row.spread_pct)} %` : "",
    }),
    el("td", {
      className: "num",
      text: typeof row.reps === "number" ? String(row.reps) : "",
    }),
    el("td", { className: "num", text: formatGbs(row.gb_per_s) }),
    el("td", { className: row.error === null ? "" : "error-text", text: note }),
  ]);
}

/** The chart's series: median time, effective bandwidth, and the best value marked. */
function sweepDatasets(
  sweep: SweepResult,
  series: SweepSeries,
): ChartConfiguration<"line", { x: number; y: number }[]>["data"]["datasets"] {
  const blue = cssVar("--vscode-charts-blue", "#3794ff");
  const orange = cssVar("--vscode-charts-orange", "#d18616");
  const green = cssVar("--vscode-charts-green", "#89d185");
  const best = series.points[series.best];
  return [
    {
      label: "median time (ms)",
      data: series.points.map((p) => ({ x: p.value, y: p.ms })),
      yAxisID: "y",
      borderColor: blue,
      backgroundColor: blue,
      pointRadius: 3,
    },
    {
      label: "effective bandwidth (GB/s)",
      data: series.points.filter((p) => p.gbs !== null).map((p) => ({ x: p.value, y: p.gbs ?? 0 })),
      yAxisID: "y1",
      borderColor: orange,
      backgroundColor: orange,
      borderDash: [5, 4],
      pointRadius: 2,
    },
    {
      label:
        best === undefined
          ? "best"
          : `${isInterpreterSweep(sweep) ? "fastest under the interpreter" : "best"}: ${sweep.param} = ${best.value}`,
      data: best === undefined ? [] : [{ x: best.value, y: best.ms }],
      yAxisID: "y",
      borderColor: green,
      backgroundColor: green,
      pointStyle: "rectRot",
      pointRadius: 8,
      pointHoverRadius: 9,
      showLine: false,
    },
  ];
}
