/**
 * Where a run's time is, file by file (issue 48): the workspace's files and the installed
 * packages named for attribution (`kernelLens.attributeInPackages`), each with its share, and
 * per other file its lines (a package's lines: `modeling_llama.py` under `transformers`).
 * The shares are `byFileModel.ts`'s.
 */
import type { Profile, ProfileLine } from "../../generated/wire";
import { fileShares, packageTotals } from "./byFileModel";
import { el } from "./dom";
import { formatUs } from "./format";

/** A line's own time (forward and its backward part), µs: device on a GPU, else CPU. */
function lineUs(line: ProfileLine, gpu: boolean): number {
  const own = gpu ? (line.device_us ?? 0) : (line.cpu_us ?? 0);
  const back =
    line.backward === undefined ? 0 : gpu ? line.backward.device_us : line.backward.cpu_us;
  return own + back;
}

/** The "By file" section of the Summary (nothing for a run of one file). */
export function byFileView(profile: Profile): HTMLElement | null {
  const rows = fileShares(profile);
  if (rows.length === 0) {
    return null;
  }
  const gpu = profile.device_kind === "cuda";
  const files = profile.files ?? {};
  const children: HTMLElement[] = [
    el("h2", { text: "By file" }),
    el("p", { className: "muted", text: packageTotals(rows) }),
  ];
  const table = el("table", { className: "lines by-file" }, [
    el("thead", {}, [
      el("tr", {}, [
        el("th", { text: "File" }),
        el("th", { text: "In" }),
        el("th", { className: "num", text: gpu ? "Device" : "CPU*" }),
        el("th", { className: "num", text: "Share" }),
      ]),
    ]),
    el(
      "tbody",
      {},
      rows.map((row) =>
        el("tr", {}, [
          el("td", {}, [el("code", { text: row.name, title: row.path })]),
          el("td", { text: row.where }),
          el("td", { className: "num", text: formatUs(row.us) }),
          el("td", { className: "num", text: `${row.pct.toFixed(row.pct < 10 ? 1 : 0)}%` }),
        ]),
      ),
    ),
  ]);
  children.push(el("div", { className: "table-scroll" }, [table]));
  for (const row of rows) {
    const lines = files[row.path];
    if (lines === undefined || lines.length === 0) {
      continue;
    }
    const top = [...lines].sort((a, b) => lineUs(b, gpu) - lineUs(a, gpu)).slice(0, 12);
    children.push(
      el("h3", { text: `${row.name} (${row.where})`, title: row.path }),
      el("div", { className: "table-scroll" }, [
        el("table", { className: "lines" }, [
          el("thead", {}, [
            el("tr", {}, [
              el("th", { className: "num", text: "Line" }),
              el("th", { text: "Source" }),
              el("th", { className: "num", text: gpu ? "Device (fwd + bwd)" : "CPU* (fwd + bwd)" }),
            ]),
          ]),
          el(
            "tbody",
            {},
            top.map((line) =>
              el("tr", {}, [
                el("td", { className: "num", text: String(line.line) }),
                el("td", { className: "source" }, [el("code", { text: line.source })]),
                el("td", { className: "num", text: formatUs(lineUs(line, gpu)) }),
              ]),
            ),
          ),
        ]),
      ]),
    );
  }
  return el("section", { className: "by-file" }, children);
}
