import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { KernelLinesKernel, KernelLinesRow } from "../../extension/generated/wire";
import {
  HEAT_LEVELS,
  headerText,
  heatLevel,
  heatSvg,
  heatUri,
  hotInstructions,
  instructionText,
  isDocsLink,
  remedyMarkdown,
  sassOffset,
} from "../../extension/kernelLines/model";

const HOT: KernelLinesRow = {
  line: 26,
  samples: 241,
  share_pct: 73.476,
  executed: 65536,
  inst_share_pct: 19.048,
  stall: "long_scoreboard",
  stall_label: "long scoreboard (waiting on memory)",
  stalls: { long_scoreboard: 239, selected: 1, wait: 1 },
  helpers: ["maximum"],
  by_address: false,
  blamed_pct: null,
  text: "73% of samples · long scoreboard (waiting on memory) · 19% of instructions · via maximum",
  hover: "**73% of samples**",
  sass: [
    { offset: 0xd0, text: "FSETP.GEU.AND P0, PT, R2, RZ, PT", samples: 239, executed: 16384 },
    { offset: 0xe0, text: "FSETP.GEU.AND P1, PT, R3, RZ, PT", samples: 0, executed: 16384 },
  ],
};

const KERNEL: KernelLinesKernel = {
  kernel: "triton_poi_fused_add_mul_relu_0",
  demangled: "triton_poi_fused_add_mul_relu_0",
  duration_us: 4.16,
  launches: 1,
  samples: 328,
  executed: 344064,
  interval_cycles: 2048,
  sampling: "328 samples · 1 every 2,048 cycles per SM sub-partition · 1 launch",
  lines: [HOT],
  unplaced_samples: 0,
  unplaced_executed: 0,
  unplaced_why: [],
  files: {},
  remedy: {
    reason: "long_scoreboard",
    text: "Warps wait for global or local memory here: check that the load is coalesced.",
    rule: "CPIStall",
    rule_title: "Warp Stall",
    rule_message: "Check the [table](javascript:alert(1)) <b>now</b>",
    rule_url: "https://docs.nvidia.com/nsight-compute/ProfilingGuide/index.html#metrics-reference",
  },
  blamed: false,
  notes: [],
  span: [10, 31],
};

describe("kernel lines", () => {
  it("grades a line's heat from its share of the samples", () => {
    assert.deepEqual(
      [0, 0.5, 1, 4, 5, 20, 30, 73, 100].map(heatLevel),
      [0, 1, 1, 1, 2, 3, 4, 5, 5],
    );
    assert.ok(heatSvg(HEAT_LEVELS).includes('width="14"'));
    assert.ok(heatSvg(1).includes('width="4"'));
    assert.ok(heatUri(3).startsWith("data:image/svg+xml;base64,"));
  });

  it("says the kernel's sampling, time and hottest line on its first line", () => {
    assert.equal(
      headerText(KERNEL),
      "Kernel lines: 328 samples · 1 every 2,048 cycles per SM sub-partition · 1 launch · " +
        "4.16 µs per launch · hottest: line 26 (long scoreboard (waiting on memory))",
    );
    assert.ok(
      headerText({
        ...KERNEL,
        before_duration_us: 5.5,
        notes: ["only 12 samples: rough"],
      }).includes(
        "(was 5.50 µs) · hottest: line 26 (long scoreboard (waiting on memory)) · few samples",
      ),
    );
  });

  it("links only Nsight Compute's documentation; a report's text stays text", () => {
    const md = remedyMarkdown(KERNEL);
    assert.ok(md.includes("Hottest line 26: Warps wait for global or local memory"));
    assert.ok(md.includes("\\[table\\](javascript:alert(1)) \\<b\\>now\\</b\\>"));
    assert.ok(md.includes(`[Profiling Guide](${KERNEL.remedy?.rule_url ?? ""})`));
    assert.ok(!isDocsLink("https://evil.example/nsight-compute/"));
    assert.ok(!isDocsLink("https://docs.nvidia.com/nsight-compute/x)(javascript:1"));
    const evil = { ...KERNEL, remedy: { ...KERNEL.remedy!, rule_url: "https://evil.example/" } };
    assert.ok(!remedyMarkdown(evil).includes("evil.example"));
  });

  it("marks an assembly line by its offset", () => {
    assert.equal(sassOffset("        /*00d0*/                   FSETP.GEU.AND P0, PT ;"), 0xd0);
    assert.equal(sassOffset("        FSETP.GEU.AND P0, PT ;"), undefined);
    const hot = hotInstructions(KERNEL);
    assert.deepEqual([...hot.keys()], [0xd0]); // instructions without samples are not marked
    const ins = hot.get(0xd0);
    assert.ok(ins !== undefined);
    assert.equal(instructionText(ins), "◀ 239 samples (73%) · line 26");
  });

  it("links a stalled instruction to its culprit and the culprit back (issue 43)", () => {
    const blamedKernel = {
      ...KERNEL,
      lines: [
        {
          ...KERNEL.lines[0]!,
          sass: [
            {
              offset: 0xf0,
              text: "LDG.E R4",
              samples: 2,
              executed: 10,
              blamed: 8630,
              cause: "global load, 32 sectors per request (uncoalesced; ideal 4)",
            },
            {
              offset: 0x110,
              text: "FADD R9, R4, R3",
              samples: 8634,
              executed: 10,
              blamed: 4,
              waits_on: [0xd0, 0xf0],
            },
          ],
        },
      ],
    };
    const hot = hotInstructions(blamedKernel);
    assert.equal(
      instructionText(hot.get(0x110)!),
      `◀ 8,634 samples (${Math.round((100 * 8634) / KERNEL.samples)}%) · line ${KERNEL.lines[0]!.line} · waits on 0x00d0, 0x00f0`,
    );
    assert.match(
      instructionText(hot.get(0xf0)!),
      /· causes 8,630 stalls: global load, 32 sectors per request \(uncoalesced; ideal 4\)$/,
    );
  });
});
