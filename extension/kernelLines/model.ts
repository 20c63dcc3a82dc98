/**
 * Profile Kernel Lines, the pure part (unit-tested without VS Code): the heat of a line, the
 * gutter bar's picture, the kernel's header, the remedy's Markdown, and which assembly lines are
 * a kernel's sampled instructions (by their `/*0070*\/` offsets).
 */
import type { KernelLinesKernel, KernelLinesRow } from "../generated/wire";

/** Heat levels of the gutter bar (0: no samples, no bar). */
export const HEAT_LEVELS = 5;

/** The bar's colour: Nsight Compute's own hot-spot orange, readable on light and dark themes. */
export const HEAT_COLOR = "#e8833a";

/** A line's heat level, 0..HEAT_LEVELS, from its share of the kernel's samples. */
export function heatLevel(sharePct: number): number {
  if (!(sharePct > 0)) {
    return 0;
  }
  // 1% → 1, 5% → 2, 15% → 3, 30% → 4, 50%+ → 5
  const steps = [1, 5, 15, 30, 50];
  let level = 1;
  for (let i = 0; i < steps.length; i++) {
    if (sharePct >= (steps[i] ?? Infinity)) {
      level = i + 1;
    }
  }
  return level;
}

/** The gutter bar of a heat level: an SVG whose bar is wider and more opaque the hotter. */
export function heatSvg(level: number): string {
  const width = 2 + Math.round((12 * level) / HEAT_LEVELS);
  const opacity = (0.35 + (0.65 * level) / HEAT_LEVELS).toFixed(2);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16">` +
    `<rect x="0" y="1" width="${width}" height="14" fill="${HEAT_COLOR}" ` +
    `fill-opacity="${opacity}"/></svg>`
  );
}

/** The gutter bar as a `data:` URI. */
export function heatUri(level: number): string {
  return `data:image/svg+xml;base64,${Buffer.from(heatSvg(level)).toString("base64")}`;
}

/** The text after a kernel line: the server's lens text. */
export function lineText(row: KernelLinesRow): string {
  return row.text;
}

/** The text after the kernel's first line: samples, time, the hottest line and its limits. */
export function headerText(kernel: KernelLinesKernel): string {
  const time =
    kernel.duration_us === null ? "" : ` · ${kernel.duration_us.toFixed(2)} µs per launch`;
  const was =
    kernel.before_duration_us === undefined || kernel.before_duration_us === null
      ? ""
      : ` (was ${kernel.before_duration_us.toFixed(2)} µs)`;
  const hottest = kernel.lines[0];
  const hot =
    hottest === undefined
      ? ""
      : ` · hottest: line ${hottest.line}${hottest.stall_label === null ? "" : ` (${hottest.stall_label})`}`;
  const few = kernel.notes.some((n) => n.startsWith("only ")) ? " · few samples" : "";
  return `Kernel lines: ${kernel.sampling}${time}${was}${hot}${few}`;
}

/** Only Nsight Compute's own documentation is ever a link (a report's text is data). */
export function isDocsLink(url: string | undefined): url is string {
  return url !== undefined && /^https:\/\/docs\.nvidia\.com\/nsight-compute\/[\w./#-]*$/.test(url);
}

/** Escapes text for Markdown: no link, image, HTML or code span can form from it. */
export function mdText(text: string): string {
  return text.replace(/[\\`*_[\]<>&#|]/g, (c) => `\\${c}`).replace(/[\r\n]+/g, " ");
}

/** The header's hover: the remedy for the hottest line, Nsight Compute's rule, the limits. */
export function remedyMarkdown(kernel: KernelLinesKernel): string {
  const out: string[] = [`**${mdText(kernel.kernel)}** · ${mdText(kernel.sampling)}`, ""];
  const fix = kernel.remedy;
  const hottest = kernel.lines[0];
  if (fix !== null && hottest !== undefined) {
    out.push(`Hottest line ${hottest.line}: ${mdText(fix.text)}`, "");
    if (fix.rule_message !== undefined) {
      const title = mdText(fix.rule_title ?? fix.rule ?? "Nsight Compute");
      const link = isDocsLink(fix.rule_url) ? ` [Profiling Guide](${fix.rule_url})` : "";
      out.push(`Nsight Compute, *${title}*: ${mdText(fix.rule_message)}${link}`, "");
    }
  }
  for (const note of kernel.notes) {
    out.push(`*${mdText(note)}*`, "");
  }
  if (!kernel.blamed) {
    out.push(
      "*Samples are where the warps waited (the line table's line), not what they waited for.*",
    );
  }
  return out.join("\n");
}

/** The byte offset an assembly line shows (`/*0070*\/ LDG…`), or undefined. */
export function sassOffset(text: string): number | undefined {
  const m = /^\s*\/\*([0-9a-f]{4,})\*\//i.exec(text);
  return m?.[1] === undefined ? undefined : parseInt(m[1], 16);
}

/** One sampled instruction of a kernel, for the assembly view's marks. */
export interface HotInstruction {
  offset: number;
  samples: number;
  sharePct: number;
  line: number;
  stall: string | null;
  /** Once blamed (issue 43): the stalls it caused (samples of the instructions that waited on it). */
  blamed?: number;
  /** Once blamed: the instructions its stalls were moved onto (its culprits). */
  waitsOn?: number[];
  /** Once blamed, a culprit: what it is (`global load, 32 sectors per request …`). */
  cause?: string;
}

/** The kernel's instructions with samples, by offset. */
export function hotInstructions(kernel: KernelLinesKernel): Map<number, HotInstruction> {
  const out = new Map<number, HotInstruction>();
  const total = kernel.samples > 0 ? kernel.samples : 1;
  for (const row of kernel.lines) {
    for (const ins of row.sass) {
      const blamed = ins.blamed ?? 0;
      if (ins.samples > 0 || blamed > 0) {
        out.set(ins.offset, {
          offset: ins.offset,
          samples: ins.samples,
          sharePct: (100 * ins.samples) / total,
          line: row.line,
          stall: row.stall_label,
          ...(ins.blamed === undefined ? {} : { blamed: ins.blamed }),
          ...(ins.waits_on === undefined ? {} : { waitsOn: ins.waits_on }),
          ...(ins.cause === undefined ? {} : { cause: ins.cause }),
        });
      }
    }
  }
  return out;
}

/** `0x00f0`, as the assembly view prints an offset (`/*00f0*\/`). */
function hex(offset: number): string {
  return `0x${offset.toString(16).padStart(4, "0")}`;
}

/** The text after a sampled instruction in the assembly view. */
export function instructionText(hot: HotInstruction): string {
  const share = hot.sharePct >= 1 ? `${hot.sharePct.toFixed(0)}%` : "<1%";
  const parts = [`◀ ${hot.samples.toLocaleString("en-US")} samples (${share}) · line ${hot.line}`];
  // the blame's links, both ways: a stalled instruction names what it waited for, the culprit
  // carries what it caused
  if (hot.waitsOn !== undefined && hot.waitsOn.length > 0) {
    parts.push(`waits on ${hot.waitsOn.map(hex).join(", ")}`);
  }
  const caused = hot.blamed ?? 0;
  if (hot.cause !== undefined && caused > 0) {
    parts.push(`causes ${Math.round(caused).toLocaleString("en-US")} stalls: ${hot.cause}`);
  }
  return parts.join(" · ");
}
