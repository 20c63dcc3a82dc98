/**
 * The Summary tab of a trace file opened in the custom editor: the device, GPU busy time and
 * the top kernels and ops, read defensively from the server's trace summary.
 */
import { el, table } from "./dom";
import { formatUs, significant } from "./format";

type Json = Record<string, unknown>;

function records(value: unknown): Json[] {
  return Array.isArray(value)
    ? value.filter((v): v is Json => typeof v === "object" && v !== null)
    : [];
}

function num(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

/** How many rows of each table. */
const TOP = 15;

/** The trace summary tab. */
export function traceSummaryView(path: string, summary: Json): HTMLElement {
  const facts: string[] = [];
  // GPU, or what the device is when it is not one (MTIA, XPU, PrivateUse1)
  const kind = text(summary["device_kind"]) || "GPU";
  if (text(summary["device"]) !== "") {
    facts.push(kind === "GPU" ? text(summary["device"]) : `${text(summary["device"])} (${kind})`);
  }
  const busy = num(summary["gpu_busy_us"]);
  const wall = num(summary["wall_us"]);
  if (busy !== null) {
    facts.push(`${kind} busy ${formatUs(busy)}`);
  }
  if (wall !== null) {
    facts.push(`wall ${formatUs(wall)}`);
  }
  const kernels = records(summary["kernels"]).slice(0, TOP);
  const ops = records(summary["ops"]).slice(0, TOP);
  // What the numbers cannot say alone: kernel time no op was credited with, launches with no
  // kernel recorded, categories the reader does not use (plain text from the server).
  const notes = Array.isArray(summary["notes"]) ? summary["notes"].map(text) : [];
  return el("section", { className: "summary" }, [
    el("p", {}, [
      el("code", { className: "path", text: path }),
      facts.length > 0 ? ` · ${facts.join(" · ")}` : "",
    ]),
    ...notes.filter((n) => n !== "").map((n) => el("p", { className: "note", text: n })),
    el("h2", { text: "Kernels" }),
    kernels.length === 0
      ? el("p", { className: "muted", text: `No ${kind} kernel in this trace.` })
      : table(
          ["Kernel", "Calls", "Total", "Mean", "Share"],
          kernels.map((k) => [
            // the label tells apart two kernels of one short name
            el("code", {
              text: text(k["label"]) || text(k["short_name"]) || text(k["name"]),
              title: text(k["name"]),
            }),
            String(num(k["calls"]) ?? ""),
            formatUs(num(k["total_us"]) ?? 0),
            formatUs(num(k["mean_us"]) ?? 0),
            num(k["pct"]) === null ? "" : `${significant(num(k["pct"]) ?? 0)} %`,
          ]),
          "data",
        ),
    el("h2", { text: "Ops" }),
    ops.length === 0
      ? el("p", { className: "muted", text: "No ATen op in this trace." })
      : table(
          ["Op", "Calls", "CPU total", "CPU self", "Device"],
          ops.map((o) => [
            el("code", { text: text(o["name"]) }),
            String(num(o["calls"]) ?? ""),
            formatUs(num(o["cpu_total_us"]) ?? 0),
            formatUs(num(o["cpu_self_us"]) ?? 0),
            formatUs(num(o["device_us"]) ?? 0),
          ]),
          "data",
        ),
  ]);
}
