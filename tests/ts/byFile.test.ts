/**
 * The Report's "By file" section (issue 48): a run attributed inside a named package says how
 * much of its time is in each file and each package.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fileShares, labelFiles, packageTotals } from "../../extension/report/webview/byFileModel";

describe("fileShares", () => {
  it("gives each file its share, the package named, most first", () => {
    const rows = fileShares({
      device_kind: "cpu",
      by_file: [
        { path: "/ws/train.py", package: null, cpu_us: 30, device_us: 0 },
        {
          path: "/env/site-packages/transformers/models/llama/modeling_llama.py",
          package: "transformers",
          cpu_us: 900,
          device_us: 0,
        },
        {
          path: "/env/site-packages/transformers/loss/loss_utils.py",
          package: "transformers",
          cpu_us: 70,
          device_us: 0,
        },
      ],
    });
    assert.deepEqual(
      rows.map((r) => [r.name, r.where, Math.round(r.pct)]),
      [
        ["modeling_llama.py", "transformers", 90],
        ["loss_utils.py", "transformers", 7],
        ["train.py", "workspace", 3],
      ],
    );
    assert.equal(packageTotals(rows), "transformers 97% · workspace 3%");
  });

  it("reads device time on a GPU", () => {
    const rows = fileShares({
      device_kind: "cuda",
      by_file: [
        { path: "/ws/a.py", package: null, cpu_us: 900, device_us: 10 },
        { path: "/lib/timm/b.py", package: "timm", cpu_us: 1, device_us: 30 },
      ],
    });
    assert.deepEqual(
      rows.map((r) => [r.where, r.pct]),
      [
        ["timm", 75],
        ["workspace", 25],
      ],
    );
  });

  it("says nothing for a run of one file", () => {
    assert.deepEqual(
      fileShares({
        device_kind: "cpu",
        by_file: [{ path: "/ws/a.py", package: null, cpu_us: 1, device_us: 0 }],
      }),
      [],
    );
    assert.deepEqual(fileShares({ device_kind: "cpu" }), []);
  });
});

describe("labelFiles", () => {
  it("names another file's line ranges and the time inside a package", () => {
    const events = [
      { name: "src:7", short: "src:7", cat: "user_annotation", line: 7 },
      { name: "src:1:11", short: "src:1:11", cat: "user_annotation", line: 11 },
      { name: "src:2:4", short: "src:2:4", cat: "user_annotation", line: 4 },
      { name: "pkg:timm", short: "pkg:timm", cat: "user_annotation", line: null },
      { name: "src:1:11", short: "x", cat: "cpu_op", line: 11 },
    ];
    labelFiles(events, ["/ws/train.py", "/env/site-packages/tinymodel/layers.py", "/ws/util.py"], {
      tinymodel: "/env/site-packages/tinymodel",
    });
    assert.deepEqual(
      events.map((e) => [e.short, e.line]),
      [
        ["src:7", 7],
        ["layers.py:11 · tinymodel", null],
        ["util.py:4", null],
        ["inside timm", null],
        ["x", 11],
      ],
    );
  });
});
