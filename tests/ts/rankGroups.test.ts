/**
 * A distributed step's timeline in the Report (issue 27): the rank groups' labels (the
 * straggler marked, its wait), the collective markers and their skew tooltips, the layout of
 * one band per rank above its lanes, the detail windows' sources, and that all of it is text
 * (op names and labels full of `<`, `>`, `&` shown as they are, never parsed as HTML).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import type { Timeline, TimelineRank } from "../../extension/generated/wire";
import { formatUs } from "../../extension/report/webview/format";
import {
  collectiveTooltip,
  markerAt,
  markersOf,
  rankGroupLabel,
  rankGroupTooltip,
} from "../../extension/report/webview/rankGroups";
import {
  DEFAULT_METRICS,
  GROUP_HEIGHT,
  groupBandAt,
  hitTest,
  laneHeaderAt,
  layoutLanes,
} from "../../extension/report/webview/timelineModel";
import { timelineSource } from "../../extension/report/timelineSource";

function rank(r: number, extra: Partial<TimelineRank> = {}): TimelineRank {
  return {
    rank: r,
    path: `/traces/step-rank${r}.json`,
    shift_us: r === 0 ? 20413.085 : 0,
    first_collective_us: r === 0 ? 973.879 : 21386.964,
    straggler: r === 1,
    wait_us: r === 0 ? 43438.475 : 0,
    lanes: [`rank${r}/cpu-1`, `rank${r}/cpu-2`],
    ...extra,
  };
}

/** Two ranks of two lanes each, as the server sends them (`analysis/rank_timeline.py`). */
const TWO_RANKS: Timeline = {
  span_us: 72027.047,
  window: null,
  path: "/traces/step-rank0.json",
  event_count: 80,
  kept: 8,
  lanes: [0, 1].flatMap((r) =>
    [1, 2].map((t) => ({
      id: `rank${r}/cpu-${t}`,
      title: t === 2 ? `CPU thread ${t} · gloo collectives` : `CPU thread ${t}`,
      kind: "cpu" as const,
      rank: r,
      events: [
        {
          start: 21386.964,
          dur: 1000,
          depth: 0,
          name: t === 2 ? "gloo:all_reduce" : "src:24",
          short: "",
          cat: "user_annotation",
          line: 24,
        },
      ],
    })),
  ),
  ranks: [rank(0), rank(1)],
  collectives: [
    {
      index: 0,
      name: "all_reduce",
      line: 24,
      skew_us: 21978.71,
      first_rank: 0,
      last_rank: 1,
      starts: [21386.964, 21386.964],
      durs: [26129.031, 5266.565],
    },
    {
      index: 1,
      name: "all_reduce",
      line: 24,
      skew_us: 21459.765,
      first_rank: 0,
      last_rank: 1,
      starts: [48473.674, 47954.729],
      durs: [23078.331, 5439.984],
    },
  ],
};

describe("rank group labels", () => {
  it("names the rank, marks the straggler and says how long each waited", () => {
    assert.equal(
      rankGroupLabel(rank(1, { wait_us: 200 }), formatUs),
      "rank 1 · straggler · waited 200 µs",
    );
    assert.equal(
      rankGroupLabel(rank(1, { wait_us: 1234.5 }), formatUs),
      "rank 1 · straggler · waited 1.23 ms",
    );
    assert.equal(
      rankGroupLabel(rank(1, { wait_us: 0 }), formatUs),
      "rank 1 · straggler · waited 0 µs",
    );
    assert.equal(rankGroupLabel(rank(0), formatUs), "rank 0 · waited 43.4 ms");
    assert.equal(
      rankGroupLabel(
        rank(2, { straggler: false, wait_us: null, first_collective_us: null }),
        formatUs,
      ),
      "rank 2 · no collective: not aligned",
    );
  });

  it("explains the straggler and the alignment on hover", () => {
    assert.deepEqual(rankGroupTooltip(rank(1), formatUs), [
      "rank 1 · straggler · waited 0 µs",
      "the rank the others wait for (the least time waiting in collectives)",
      "first collective at 21.4 ms into its trace",
      "/traces/step-rank1.json",
    ]);
    assert.deepEqual(rankGroupTooltip(rank(0), formatUs), [
      "rank 0 · waited 43.4 ms",
      "first collective at 974 µs into its trace · drawn 20.4 ms later to align",
      "/traces/step-rank0.json",
    ]);
  });
});

describe("collective markers", () => {
  it("puts one marker per collective on each rank, where that rank starts it", () => {
    assert.deepEqual(
      markersOf(TWO_RANKS.collectives, 0).map((m) => [m.collective.index, m.start, m.dur]),
      [
        [0, 21386.964, 26129.031],
        [1, 48473.674, 23078.331],
      ],
    );
    assert.deepEqual(
      markersOf(TWO_RANKS.collectives, 1).map((m) => m.start),
      [21386.964, 47954.729],
    );
    assert.deepEqual(markersOf(undefined, 0), []);
    assert.deepEqual(markersOf([{ ...TWO_RANKS.collectives![0]!, starts: [null, 3] }], 0), []);
  });

  it("finds the marker under the pointer within a few pixels", () => {
    const markers = markersOf(TWO_RANKS.collectives, 1);
    const view = { start: 0, end: 72000 };
    // 1000 px wide: 72 µs a pixel; the second marker is at 47954.729 µs = 666.0 px
    assert.equal(markerAt(markers, view, 1000, 668)?.collective.index, 1);
    assert.equal(markerAt(markers, view, 1000, 297)?.collective.index, 0);
    assert.equal(markerAt(markers, view, 1000, 500), undefined);
  });

  it("gives each collective's skew across ranks in its tooltip", () => {
    const [first, second] = markersOf(TWO_RANKS.collectives, 1);
    assert.deepEqual(collectiveTooltip(first!, formatUs), [
      "all_reduce #1 · line 24",
      "skew 22 ms across ranks (rank 0 first, rank 1 last)",
      "rank 1: starts at 21.4 ms, in it for 5.27 ms",
      "the ranks are aligned on this collective's start",
    ]);
    assert.deepEqual(collectiveTooltip(second!, formatUs).slice(0, 2), [
      "all_reduce #2 · line 24",
      "skew 21.5 ms across ranks (rank 0 first, rank 1 last)",
    ]);
  });
});

describe("rank group layout", () => {
  it("puts a band above each rank's lanes and keeps the lanes' headers and rows under it", () => {
    const { lanes, rows, groups, height } = layoutLanes(TWO_RANKS);
    const { header, row } = DEFAULT_METRICS;
    const perRank = 2 * (header + row);
    assert.deepEqual(
      groups.map((g) => [g.rank, g.y, g.bottom, g.info?.straggler]),
      [
        [0, 0, GROUP_HEIGHT + perRank, false],
        [1, GROUP_HEIGHT + perRank, 2 * (GROUP_HEIGHT + perRank), true],
      ],
    );
    assert.equal(height, 2 * (GROUP_HEIGHT + perRank));
    assert.deepEqual(
      lanes.map((l) => [l.id, l.y]),
      [
        ["rank0/cpu-1", GROUP_HEIGHT],
        ["rank0/cpu-2", GROUP_HEIGHT + header + row],
        ["rank1/cpu-1", 2 * GROUP_HEIGHT + perRank],
        ["rank1/cpu-2", 2 * GROUP_HEIGHT + perRank + header + row],
      ],
    );
    assert.equal(groupBandAt(groups, DEFAULT_METRICS, 5)?.rank, 0);
    assert.equal(groupBandAt(groups, DEFAULT_METRICS, GROUP_HEIGHT + perRank + 3)?.rank, 1);
    assert.equal(groupBandAt(groups, DEFAULT_METRICS, GROUP_HEIGHT + 3), undefined);
    // a lane's title is still where a click folds it, an event still where it is hit
    assert.equal(laneHeaderAt(lanes, DEFAULT_METRICS, GROUP_HEIGHT + 3)?.id, "rank0/cpu-1");
    const view = { start: 0, end: 72027.047 };
    const y = (rows[2]?.y ?? 0) + 3;
    assert.equal(hitTest(rows, DEFAULT_METRICS, view, 1000, 300, y)?.name, "src:24");
    // a folded lane folds only itself, in its own rank
    const folded = layoutLanes(TWO_RANKS, DEFAULT_METRICS, new Set(["rank0/cpu-2"]));
    assert.equal(folded.groups[1]?.y, GROUP_HEIGHT + 2 * header + row);
  });

  it("has no bands for a one-trace timeline", () => {
    const one: Timeline = {
      ...TWO_RANKS,
      lanes: TWO_RANKS.lanes.slice(0, 2).map(({ rank: _rank, ...lane }) => lane),
      ranks: [],
      collectives: [],
    };
    delete one.ranks;
    const { groups, lanes } = layoutLanes(one);
    assert.deepEqual(groups, []);
    assert.equal(lanes[0]?.y, 0);
  });
});

describe("rank group detail windows", () => {
  it("asks for every rank's trace at its shift", () => {
    assert.deepEqual(timelineSource(TWO_RANKS), {
      path: "/traces/step-rank0.json",
      ranks: [
        { path: "/traces/step-rank0.json", shift_us: 20413.085 },
        { path: "/traces/step-rank1.json", shift_us: 0 },
      ],
    });
    const single: Timeline = { ...TWO_RANKS };
    delete single.ranks;
    assert.deepEqual(timelineSource(single), { path: "/traces/step-rank0.json" });
    assert.equal(timelineSource(null), undefined);
    const gone = { ...TWO_RANKS, ranks: [rank(0), rank(1, { path: null })] };
    assert.deepEqual(timelineSource(gone), { path: "/traces/step-rank0.json" });
  });
});

describe("rank groups are text", () => {
  it("keeps op names and labels as they are (no escaping to undo, no HTML)", () => {
    const hostile = `<img src=x onerror="alert(1)">&amp;`;
    const marker = markersOf([{ ...TWO_RANKS.collectives![0]!, name: hostile }], 0)[0]!;
    assert.equal(collectiveTooltip(marker, formatUs)[0], `${hostile} #1 · line 24`);
    assert.equal(
      rankGroupTooltip(rank(0, { path: `/t/<b>&"r".json` }), formatUs).at(-1),
      `/t/<b>&"r".json`,
    );
  });

  it("draws on the canvas and shows tooltips through textContent only", () => {
    const root = path.resolve(__dirname, "..", "..", "extension", "report", "webview");
    for (const file of ["timeline.ts", "rankGroups.ts", "timelineModel.ts", "dom.ts"]) {
      const source = readFileSync(path.join(root, file), "utf8").replace(/\/\*[\s\S]*?\*\//g, "");
      assert.doesNotMatch(source, /innerHTML|outerHTML|insertAdjacentHTML|document\.write/, file);
    }
  });
});
