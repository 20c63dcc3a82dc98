/**
 * Lens rows that fit the editor (`lensFit.ts`, issue 41): a row too long for the room says its
 * verdict first and folds the rest of its first lens into the hover, so that every action after
 * it stays on screen at 1280 px with the explorer open and the Report beside (the editor test,
 * scenario 161, measures the same rows' bounds).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  NARROW_ROW_CHARS,
  WIDE_ROW_CHARS,
  fitRows,
  rowChars,
  shorten,
  visibleChars,
  type LensLike,
} from "../../extension/lensFit";

const GPU_ONLY =
  "$(warning) Profile failed: unsupported — this code needs an NVIDIA GPU — run the agent on " +
  "one (kernelLens.agentCommand) (the script raised AssertionError: Torch not compiled with " +
  "CUDA enabled at line 7)";
const BUSY =
  "$(watch) 160.251 ms ±20.8% $(warning) busy machine · 6 ops · peak 48 MiB at line 20 · CPU";
const SCRIPT =
  "$(warning) Profile failed: runtime — the script raised RuntimeError: mat1 and mat2 shapes " +
  "cannot be multiplied (1x8 and 3x3)";

function lens(line: number, title: string): LensLike & { command: { title: string } } {
  return { range: { start: { line } }, command: { title } };
}

function rowWidth(lenses: LensLike[], line: number): number {
  const titles = lenses
    .filter((l) => l.range.start.line === line)
    .map((l) => l.command?.title ?? "");
  return titles.reduce((n, t) => n + visibleChars(t), 0) + 3 * (titles.length - 1);
}

describe("shorten", () => {
  it("keeps a GPU-only failure's reason, not `… (the scrip…`", () => {
    assert.equal(shorten(GPU_ONLY, 60), "$(warning) Profile failed: this code needs an NVIDIA GPU");
    assert.equal(shorten(GPU_ONLY, 40), "$(warning) this code needs an NVIDIA GPU");
    assert.ok(!shorten(GPU_ONLY, 50).includes("(the scrip"));
  });

  it("says a script's exception as the verdict", () => {
    assert.equal(shorten(SCRIPT, 41), "$(warning) Profile failed: RuntimeError");
  });

  it("keeps a summary's time and spread first", () => {
    assert.equal(shorten(BUSY, 40), "$(watch) 160.251 ms ±20.8% $(warning) busy machine");
    assert.equal(shorten(BUSY, 24), "$(watch) 160.251 ms ±20.8%");
    assert.equal(shorten("$(watch) 1.2 ms ±1.0% · CPU", 60), "$(watch) 1.2 ms ±1.0% · CPU");
  });
});

describe("fitRows", () => {
  it("keeps every action of a narrow row, the rest of the verdict in its hover", () => {
    const lenses = [
      lens(3, BUSY),
      lens(3, "$(refresh) Re-profile longer"),
      lens(3, "$(graph) Report"),
      lens(3, "More…"),
      lens(9, GPU_ONLY),
      lens(9, "$(play) Profile"),
      lens(12, "24% of 160 ms · aten::ones · CPU ".repeat(3)), // a line's lens: left alone
    ];
    fitRows(lenses, NARROW_ROW_CHARS);
    assert.ok(rowWidth(lenses, 3) <= NARROW_ROW_CHARS, String(rowWidth(lenses, 3)));
    assert.ok(rowWidth(lenses, 9) <= NARROW_ROW_CHARS, String(rowWidth(lenses, 9)));
    assert.ok(lenses[0]?.command.title.startsWith("$(watch) 160.251 ms ±20.8%"));
    assert.match(lenses[0]?.command.tooltip ?? "", /peak 48 MiB at line 20 · CPU/);
    assert.match(lenses[4]?.command.title ?? "", /needs an NVIDIA GPU/);
    assert.match(lenses[4]?.command.tooltip ?? "", /AssertionError/);
    assert.deepEqual(
      lenses.slice(1, 4).map((l) => l.command.title),
      ["$(refresh) Re-profile longer", "$(graph) Report", "More…"],
    );
    assert.ok((lenses[6]?.command.title.length ?? 0) > NARROW_ROW_CHARS);
  });

  it("shortens the failure, not the driver lens before it", () => {
    const lenses = [
      lens(5, "$(arrow-right) inputs from kv_bench.py"),
      lens(5, GPU_ONLY),
      lens(5, "$(play) Profile"),
    ];
    fitRows(lenses, NARROW_ROW_CHARS);
    assert.equal(lenses[0]?.command.title, "$(arrow-right) inputs from kv_bench.py");
    assert.match(lenses[1]?.command.title ?? "", /^\$\(warning\) Profile failed/);
    assert.match(lenses[1]?.command.tooltip ?? "", /needs an NVIDIA GPU/);
    assert.match(lenses[1]?.command.tooltip ?? "", /AssertionError/);
  });

  it("leaves a row that fits as it is, and a wide editor's rows whole", () => {
    const short = [
      lens(0, "$(watch) 0.131 ms ±0.6% · 3 ops · CPU"),
      lens(0, "$(refresh) Re-profile"),
    ];
    fitRows(short, NARROW_ROW_CHARS);
    assert.equal(short[0]?.command.title, "$(watch) 0.131 ms ±0.6% · 3 ops · CPU");
    assert.equal(short[0]?.command.tooltip, undefined);
    const memory = [lens(3, BUSY), lens(3, "$(refresh) Re-profile longer"), lens(3, "More…")];
    fitRows(memory, rowChars(1));
    assert.equal(memory[0]?.command.title, BUSY);
    assert.equal(rowChars(1), WIDE_ROW_CHARS);
    assert.equal(rowChars(2), NARROW_ROW_CHARS);
  });

  it("adds the whole text before a tooltip the lens had", () => {
    const row = [
      { range: { start: { line: 1 } }, command: { title: BUSY, tooltip: "Set as Baseline" } },
      lens(1, "$(refresh) Re-profile longer"),
      lens(1, "$(graph) Report"),
      lens(1, "More…"),
    ];
    fitRows(row, NARROW_ROW_CHARS);
    assert.match(row[0]?.command.tooltip ?? "", /^160\.251 ms .*CPU\n\nSet as Baseline$/);
  });
});
