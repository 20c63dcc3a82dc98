"""Timeline lanes for the report panel, on the H200 trace and on a 200k-event synthetic trace."""

import json
from pathlib import Path

from kernel_lens.analysis.timeline import build_timeline

DATA = Path(__file__).parent.parent / "data" / "h200"


def test_h200_trace_lanes_and_lines() -> None:
    t = build_timeline(json.loads((DATA / "matmul_relu_trace.json").read_text()))
    kinds = [lane["kind"] for lane in t["lanes"]]
    assert kinds[-2:] == ["runtime", "gpu"] and kinds.count("cpu") == 2
    gpu = t["lanes"][-1]
    assert gpu["title"] == "GPU 0 · stream 7"
    assert [(e["short"], e["line"]) for e in gpu["events"]] == [
        (
            "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x64x8_stage3_warpsize2x2x1_ffma_"
            "aligna4_alignc4_execute_kernel__5x_cublas",
            10,
        ),
        ("vectorized_elementwise_kernel", 11),
        ("vectorized_elementwise_kernel", 11),
    ]
    assert gpu["events"][0]["dur"] == 56.513
    runtime = t["lanes"][-2]
    assert [e["line"] for e in runtime["events"]][:3] == [10, 11, 11]
    main = next(lane for lane in t["lanes"] if lane["id"] == "cpu-418-418")
    src = [e for e in main["events"] if e["name"].startswith("src:")]
    assert [e["line"] for e in src] == [10, 11, 11]
    mm = next(e for e in main["events"] if e["name"] == "aten::mm")
    assert mm["line"] == 10 and mm["depth"] > next(e for e in src if e["line"] == 10)["depth"]


def _big_trace(n: int) -> dict:
    events = []
    for i in range(n):
        events.append(
            {
                "ph": "X",
                "cat": "cpu_op",
                "name": f"aten::op{i % 7}",
                "pid": 1,
                "tid": 1,
                "ts": i * 10.0,
                "dur": 4.0,
                "args": {"External id": i},
            }
        )
        events.append(
            {
                "ph": "X",
                "cat": "kernel",
                "name": "k",
                "pid": 0,
                "tid": 7,
                "ts": i * 10.0 + 5,
                "dur": 3.0,
                "args": {"External id": i, "stream": 7, "device": 0},
            }
        )
    return {"traceEvents": events}


def test_a_200k_event_trace_is_reduced_for_the_panel() -> None:
    t = build_timeline(_big_trace(100_000), resolution=4000)
    assert t["event_count"] == 200_000
    for lane in t["lanes"]:
        assert len(lane["events"]) <= 4000 + 1
        merged = [e for e in lane["events"] if e.get("merged")]
        assert merged and sum(e["count"] for e in merged) == 100_000
    # Nothing is lost at full resolution on a small trace.
    small = build_timeline(_big_trace(50), resolution=10_000)
    assert small["kept"] == 100
