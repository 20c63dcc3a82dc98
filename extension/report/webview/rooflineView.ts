/**
 * The Summary's roofline (issue 25): each kernel whose bytes and FLOPs are known placed at its
 * arithmetic intensity and achieved TFLOP/s on a log-log chart (Chart.js, bundled: nothing is
 * loaded from elsewhere) under the bandwidth roof and the compute roof(s); kernels with only
 * bytes (or only FLOPs) known in a table with their TB/s and the fraction of peak. The data is
 * built by `roofline.ts` (pure, unit-tested).
 */
import {
  Chart,
  Legend,
  LineElement,
  LogarithmicScale,
  PointElement,
  ScatterController,
  Tooltip,
  type ChartConfiguration,
} from "chart.js";
import type { KernelRoofline } from "../../generated/wire";
import { cssVar, el } from "./dom";
import { formatPct, significant } from "./format";
import { SOURCE_LABELS, rooflineData, type RooflineData, type XY } from "./roofline";

Chart.register(ScatterController, LineElement, PointElement, LogarithmicScale, Tooltip, Legend);

function rate(value: number | null, unit: string): string {
  return value === null ? "–" : `${significant(value)} ${unit}`;
}

/** The table of kernels that cannot be placed (bytes or FLOPs alone). */
function unplacedTable(data: RooflineData): HTMLElement | null {
  if (data.unplaced.length === 0) {
    return null;
  }
  const flops = data.unplaced.some((r) => r.tflops !== null);
  const head = [
    "Kernel",
    "TB/s",
    "% of peak bandwidth",
    ...(flops ? ["TFLOP/s", "% of peak compute"] : []),
    "From",
  ];
  return el("div", { className: "table-scroll" }, [
    el("p", {
      className: "muted",
      text: "Only bytes (or only FLOPs) known: no intensity, so not on the chart.",
    }),
    el("table", { className: "roofline-table" }, [
      el("thead", {}, [
        el(
          "tr",
          {},
          head.map((h, i) =>
            el("th", { className: i > 0 && i < head.length - 1 ? "num" : "", text: h }),
          ),
        ),
      ]),
      el(
        "tbody",
        {},
        data.unplaced.map((r) =>
          el("tr", {}, [
            el("td", {}, [el("code", { text: r.label, title: r.name })]),
            el("td", { className: "num", text: rate(r.tbs, "TB/s") }),
            el("td", { className: "num", text: r.tbs === null ? "–" : formatPct(r.bandwidthPct) }),
            ...(flops
              ? [
                  el("td", { className: "num", text: rate(r.tflops, "TFLOP/s") }),
                  el("td", {
                    className: "num",
                    text: r.tflops === null ? "–" : formatPct(r.flopPct),
                  }),
                ]
              : []),
            el("td", { className: "muted", text: SOURCE_LABELS[r.source] }),
          ]),
        ),
      ),
    ]),
  ]);
}

/** The roofline section; `element` is null (nothing shown) when no kernel has bytes or FLOPs. */
export class RooflineView {
  readonly element: HTMLElement | null;
  private readonly data: RooflineData | null;
  private readonly canvas: HTMLCanvasElement | null;
  private chart: Chart<"scatter", XY[]> | undefined;

  constructor(roofs: readonly KernelRoofline[] | undefined) {
    this.data = rooflineData(roofs);
    const data = this.data;
    if (data === null) {
      this.element = null;
      this.canvas = null;
      return;
    }
    this.canvas =
      data.points.length === 0
        ? null
        : el("canvas", {
            attrs: {
              role: "img",
              "aria-label": `Roofline: ${data.points.map((p) => p.text).join("; ")}`,
            },
          });
    this.element = el("section", { className: "roofline" }, [
      el("h2", { text: "Against the hardware's limit" }),
      data.peakNote === null
        ? el("p", { className: "muted", text: "No peaks known for this GPU: no roofs drawn." })
        : el("p", { className: "muted", text: `Peaks: ${data.peakNote}.` }),
      this.canvas === null ? null : el("div", { className: "chart-box" }, [this.canvas]),
      unplacedTable(data),
    ]);
  }

  /** Creates the chart (again: after a theme change, its colours are re-read). */
  draw(): void {
    this.chart?.destroy();
    this.chart = undefined;
    const data = this.data;
    if (data === null || this.canvas === null) {
      return;
    }
    const fg = cssVar("--vscode-foreground", "#ccc");
    const grid = cssVar("--vscode-panel-border", "rgba(128,128,128,0.3)");
    const blue = cssVar("--vscode-charts-blue", "#3794ff");
    const orange = cssVar("--vscode-charts-orange", "#d18616");
    const red = cssVar("--vscode-charts-red", "#f14c4c");
    Chart.defaults.color = fg;
    Chart.defaults.borderColor = grid;
    Chart.defaults.font.family = cssVar("--vscode-font-family", "sans-serif");
    const roofLine = (label: string, points: XY[], color: string, dash: number[] = []) => ({
      label,
      data: points,
      showLine: true,
      borderColor: color,
      backgroundColor: color,
      borderDash: dash,
      pointRadius: 0,
      pointHoverRadius: 0,
    });
    const points = data.points;
    const config: ChartConfiguration<"scatter", XY[]> = {
      type: "scatter",
      data: {
        datasets: [
          {
            label: "kernels",
            data: points.map((p) => ({ x: p.x, y: p.y })),
            borderColor: blue,
            backgroundColor: blue,
            pointRadius: 5,
            pointHoverRadius: 7,
          },
          ...(data.peakTbs === null
            ? []
            : [roofLine(`bandwidth roof ${data.peakTbs} TB/s`, data.bandwidthRoof, orange)]),
          ...data.computeRoofs.map((roof) => roofLine(roof.label, roof.data, red, [6, 4])),
        ],
      },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        scales: {
          x: {
            type: "logarithmic",
            min: data.xMin,
            max: data.xMax,
            title: { display: true, text: "arithmetic intensity (FLOP/byte, log)" },
          },
          y: {
            type: "logarithmic",
            title: { display: true, text: "achieved TFLOP/s (log)" },
          },
        },
        plugins: {
          legend: { position: "bottom", labels: { usePointStyle: true } },
          tooltip: {
            filter: (item) => item.datasetIndex === 0,
            callbacks: {
              title: (items) => points[items[0]?.dataIndex ?? -1]?.name ?? "",
              label: (item) => {
                const p = points[item.dataIndex];
                return p === undefined
                  ? ""
                  : [
                      ` ${p.text}`,
                      ` ${significant(p.x)} FLOP/byte · from ${SOURCE_LABELS[p.source]}`,
                    ];
              },
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
