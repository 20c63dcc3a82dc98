/**
 * Where a run's time is, file by file (issue 48): the workspace's files and the installed
 * packages named for attribution (`kernelLens.attributeInPackages`). Pure (no DOM): the
 * Summary's "By file" section (`byFile.ts`) and the tests read it.
 */
import type { Profile } from "../../generated/wire";

/** One file's part of the run, as the Summary shows it. */
export interface FileShareRow {
  path: string;
  /** The file's name (`modeling_llama.py`). */
  name: string;
  /** `workspace`, or the package it is in (`transformers`). */
  where: string;
  /** The time the share is of: device time on a GPU, the profiler's CPU time on a CPU, µs. */
  us: number;
  /** `us` over the run's total, 0..100. */
  pct: number;
}

/** The run's files with their shares, most first (`by_file` of the result); `[]` when the
 * run has one file only. */
export function fileShares(profile: Pick<Profile, "by_file" | "device_kind">): FileShareRow[] {
  const files = profile.by_file ?? [];
  if (files.length < 2) {
    return [];
  }
  const gpu = profile.device_kind === "cuda";
  const time = (f: (typeof files)[number]): number => (gpu ? f.device_us : f.cpu_us);
  const total = files.reduce((sum, f) => sum + time(f), 0);
  return files
    .map((f) => ({
      path: f.path,
      name: f.path.slice(f.path.lastIndexOf("/") + 1),
      where: f.package ?? "workspace",
      us: time(f),
      pct: total > 0 ? (100 * time(f)) / total : 0,
    }))
    .sort((a, b) => b.us - a.us);
}

/** A package's share of the run and a workspace's: `transformers 97% · workspace 3%`. */
export function packageTotals(rows: readonly FileShareRow[]): string {
  const by = new Map<string, number>();
  for (const row of rows) {
    by.set(row.where, (by.get(row.where) ?? 0) + row.pct);
  }
  return [...by.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([where, pct]) => `${where} ${Math.round(pct)}%`)
    .join(" · ");
}

/** The trace's name of a line range of the `k`-th file of a run (`src:<k>:<line>`). */
const OTHER_FILE_RANGE = /^src:(\d+):(\d+)$/;
/** The range open while an installed package's outermost frame runs (`pkg:<name>`). */
const PACKAGE_RANGE = /^pkg:(.+)$/;

/** The part of a timeline event {@link labelFiles} reads and sets. */
export interface LabelledEvent {
  name: string;
  short: string;
  cat: string;
  line: number | null;
}

/**
 * Names the line ranges of a run's other files in a timeline (`src:3:11` → `layers.py:11 ·
 * tinymodel`) and the ranges of time inside a package (`pkg:transformers` → `inside
 * transformers`), in place. A range of another file loses its `line` (a click would reveal that
 * line in the wrong document).
 *
 * Args:
 *   events: the timeline's events (of every lane).
 *   files: the run's `file_order` (the script first).
 *   packages: the run's `packages` (name → folder).
 */
export function labelFiles(
  events: Iterable<LabelledEvent>,
  files: readonly string[],
  packages: Readonly<Record<string, string>> = {},
): void {
  const where = (file: string): string => {
    for (const [name, root] of Object.entries(packages)) {
      if (file === root || file.startsWith(`${root}/`)) return ` · ${name}`;
    }
    return "";
  };
  for (const event of events) {
    if (event.cat !== "user_annotation") continue;
    const line = OTHER_FILE_RANGE.exec(event.name);
    if (line !== null) {
      const file = files[Number(line[1])];
      if (file !== undefined) {
        event.short = `${file.slice(file.lastIndexOf("/") + 1)}:${line[2]}${where(file)}`;
        event.line = null;
      }
      continue;
    }
    const pkg = PACKAGE_RANGE.exec(event.name);
    if (pkg !== null) {
      event.short = `inside ${pkg[1]}`;
    }
  }
}
