/**
 * Memory in the Report (a profile with *Profile Memory*): per device, the peak and the line it
 * was reached on, a memory lane (the device's live bytes over the profiled calls, the peak
 * marked) and what was alive at the peak, grouped by the line that allocated it, largest first;
 * each row reveals its line. The maths is in `memoryModel.ts`.
 */
import type { MemoryDevice, Profile } from "../../generated/wire";
import { el } from "./dom";
import { formatBytes, formatUs } from "./format";
import { lanePath, peakText } from "./memoryModel";

const SVG = "http://www.w3.org/2000/svg";
const LANE_WIDTH = 600;
const LANE_HEIGHT = 64;

function lane(dev: MemoryDevice): Element {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("class", "memory-lane");
  svg.setAttribute("viewBox", `0 0 ${LANE_WIDTH} ${LANE_HEIGHT}`);
  svg.setAttribute("preserveAspectRatio", "none");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `${dev.label} live memory over the profiled calls`);
  const path = document.createElementNS(SVG, "path");
  path.setAttribute("d", lanePath(dev.timeline, LANE_WIDTH, LANE_HEIGHT));
  path.setAttribute("class", "memory-line");
  svg.append(path);
  const peak = dev.timeline.findIndex((p) => p[1] === dev.peak_bytes);
  const last = dev.timeline[dev.timeline.length - 1]?.[0] ?? 0;
  if (peak >= 0 && last > 0) {
    const mark = document.createElementNS(SVG, "line");
    const x = String((LANE_WIDTH * (dev.timeline[peak]?.[0] ?? 0)) / last);
    mark.setAttribute("x1", x);
    mark.setAttribute("x2", x);
    mark.setAttribute("y1", "0");
    mark.setAttribute("y2", String(LANE_HEIGHT));
    mark.setAttribute("class", "memory-peak");
    svg.append(mark);
  }
  return svg;
}

/** A device's memory lane over the whole run, with its caption (the Summary's). */
export function memoryLane(dev: MemoryDevice): HTMLElement {
  const last = dev.timeline[dev.timeline.length - 1]?.[0] ?? 0;
  return el("div", { className: "memory-lane-box" }, [
    el("div", {
      className: "muted",
      text:
        `${dev.label} · live bytes over the profiled calls (${formatUs(last)}) · ` +
        `0 – ${formatBytes(dev.peak_bytes)} · ${peakText(dev)}`,
    }),
    lane(dev),
  ]);
}

/** The Summary's Memory section: each device's peak, lane and what was alive at the peak. */
export function memoryView(
  profile: Profile,
  onRevealLine: (line: number) => void,
): HTMLElement | null {
  const devices = profile.memory?.devices ?? [];
  if (devices.length === 0) {
    return null;
  }
  return el(
    "section",
    { className: "memory" },
    devices.map((dev) => {
      const rows = dev.live_at_peak.map((group) =>
        el(
          "tr",
          {
            className: "clickable",
            title: `Go to line ${group.line}`,
            onClick: () => onRevealLine(group.line),
          },
          [
            el("td", { className: "num", text: formatBytes(group.bytes) }),
            el("td", { className: "num", text: String(group.line) }),
            el("td", {}, [el("code", { text: group.source })]),
            el("td", {
              className: "muted",
              text:
                group.kind === undefined
                  ? ""
                  : group.kind === "backward"
                    ? "allocated by its backward"
                    : group.kind,
            }),
          ],
        ),
      );
      const rest: [number, string][] = [
        [dev.before_bytes, "allocated before the profiled calls (parameters, inputs, state)"],
        [dev.outside_bytes, "allocated off the function's lines"],
      ];
      for (const [bytes, text] of rest) {
        if (bytes > 0) {
          rows.push(
            el("tr", {}, [
              el("td", { className: "num", text: formatBytes(bytes) }),
              el("td", {}),
              el("td", { className: "muted", text }),
              el("td", {}),
            ]),
          );
        }
      }
      return el("div", { className: "memory-device" }, [
        el("h2", { text: `Memory · ${dev.label} · ${peakText(dev)}` }),
        memoryLane(dev),
        el("h3", { text: "Alive at the peak, by the line that allocated it" }),
        el("table", { className: "lines memory-live" }, [
          el("thead", {}, [
            el("tr", {}, [
              el("th", { className: "num", text: "Bytes" }),
              el("th", { className: "num", text: "Line" }),
              el("th", { text: "Source" }),
              el("th", { text: "" }),
            ]),
          ]),
          el("tbody", {}, rows),
        ]),
      ]);
    }),
  );
}
