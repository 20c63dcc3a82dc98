"""The two Nsight Compute readers on the cases the recorded reports do not hold: units, missing
values, rule kinds and their order, markup, a report with several kernels (a stand-in for
NVIDIA's ``ncu_report`` module where the recorded reports have one)."""

from __future__ import annotations

import types
from typing import Any

import pytest

from kernel_lens.analysis.ncu import (
    METRICS,
    NcuError,
    NcuHint,
    kernels_from_report,
    read_ncu_csv,
    strip_markup,
)

HEADER = (
    '"ID","Kernel Name","Grid Size","Block Size","Section Name","Metric Name","Metric Unit",'
    '"Metric Value","Rule Name","Rule Type","Rule Description","Estimated Speedup Type",'
    '"Estimated Speedup"'
)


def _row(
    kid: int, name: str, metric: str = "", unit: str = "", value: str = "", **rule: str
) -> str:
    cells = [
        str(kid),
        name,
        rule.get("grid", "(8, 1, 1)"),
        rule.get("block", "(64, 1, 1)"),
        rule.get("section", "SpeedOfLight"),
        metric,
        unit,
        value,
        rule.get("rule", ""),
        rule.get("kind", ""),
        rule.get("text", ""),
        rule.get("stype", ""),
        rule.get("speedup", ""),
    ]
    return ",".join(f'"{c}"' for c in cells)


def test_csv_units_missing_values_and_two_kernels() -> None:
    text = "\n".join(
        [
            "==PROF== Connected to process 1",
            HEADER,
            _row(0, "k_ns", "Duration", "nsecond", "4,160"),
            _row(0, "k_ns", "Registers Per Thread", "register/thread", "32"),
            _row(0, "k_ns", "Waves Per SM", "", "n/a"),
            _row(0, "k_ns", "Not a metric we read", "", "7"),
            _row(0, "k_ns", rule="R1", kind="", text="plain", stype="", speedup=""),
            _row(1, "k_ms", "Duration", "msecond", "1.5", grid="", block=""),
            _row(1, "k_ms", "DRAM Bandwidth", "Gbyte/s", "1,008.5"),
            _row(2, "k_us", "Duration", "usecond", "2.5"),
        ]
    )
    a, b, c = read_ncu_csv(text)
    assert (a.id, a.name, a.demangled) == (0, "k_ns", "k_ns")
    assert a.duration_us == pytest.approx(4.16)
    assert a.registers == 32 and a.waves is None
    assert (a.grid, a.block) == ("(8, 1, 1)", "(64, 1, 1)")
    assert a.hints == [
        NcuHint(
            rule="R1",
            section="SpeedOfLight",
            kind="INF",
            title="R1",
            message="plain",
            speedup_pct=None,
            speedup_type=None,
        )
    ]
    assert b.duration_us == 1500.0 and b.dram_bandwidth_gbs == 1008.5
    assert (b.grid, b.block) == (None, None)
    assert c.duration_us == 2.5


def test_hints_rank_errors_then_optimisations_by_speedup_then_warnings() -> None:
    rows = [
        _row(0, "k", rule="W", kind="WRN", text="w", stype="global", speedup="99"),
        _row(0, "k", rule="O1", kind="OPT", text="o1", stype="local", speedup="10"),
        _row(0, "k", rule="I", kind="INF", text="i"),
        _row(0, "k", rule="E", kind="ERR", text="e"),
        _row(0, "k", rule="O2", kind="OPT", text="o2", stype="global", speedup="50.5"),
        _row(0, "k", rule="O3", kind="OPT", text="o3"),
    ]
    (k,) = read_ncu_csv("\n".join([HEADER, *rows]))
    assert [(h["rule"], h["kind"], h["speedup_pct"], h["speedup_type"]) for h in k.hints] == [
        ("E", "ERR", None, None),
        ("O2", "OPT", 50.5, "global"),
        ("O1", "OPT", 10.0, "local"),
        ("O3", "OPT", None, None),
        ("W", "WRN", 99.0, "global"),
        ("I", "INF", None, None),
    ]


def test_markup() -> None:
    assert strip_markup("see @section:WarpStateStats:Warp State Statistics@.") == (
        "see Warp State Statistics."
    )
    assert strip_markup("@metric:sm__warps_active.avg@ is low") == "sm__warps_active.avg is low"
    assert strip_markup("@table:Occupancy@ and @path:a/b@") == "Occupancy and a/b"
    assert strip_markup("  padded  ") == "padded"
    assert strip_markup("an @ sign") == "an @ sign"


class _Metric:
    def __init__(self, value: Any) -> None:
        self._value = value

    def value(self) -> Any:
        return self._value


class _Action:
    def __init__(self, name: str, metrics: dict[str, Any], rules: list[dict[str, Any]]) -> None:
        self._name, self._metrics, self._rules = name, metrics, rules

    def name(self, *base: Any) -> str:
        if base and base[0] is None:
            raise TypeError("name base None")  # the real module takes no None
        return f"demangled {self._name}" if base == ("DEMANGLED",) else self._name

    def metric_by_name(self, name: str) -> _Metric | None:
        return _Metric(self._metrics[name]) if name in self._metrics else None

    def metric_names(self) -> tuple[str, ...]:
        return tuple(self._metrics)

    def rule_results_as_dicts(self) -> list[dict[str, Any]]:
        return self._rules


class _Range:
    def __init__(self, actions: list[_Action]) -> None:
        self._actions = actions

    def num_actions(self) -> int:
        return len(self._actions)

    def action_by_idx(self, i: int) -> _Action:
        return self._actions[i]


class _Context:
    def __init__(self, ranges: list[_Range]) -> None:
        self._ranges = ranges

    def num_ranges(self) -> int:
        return len(self._ranges)

    def range_by_idx(self, i: int) -> _Range:
        return self._ranges[i]


def _module(**constants: Any) -> types.ModuleType:
    module = types.ModuleType("ncu_report_stand_in")
    module.IAction = types.SimpleNamespace(NameBase_DEMANGLED="DEMANGLED")  # type: ignore[attr-defined]
    for key, value in constants.items():
        setattr(module, key, value)
    return module


def _rule(kind: int | None, title: str = "", **extra: Any) -> dict[str, Any]:
    message = {"type": kind, "title": title, "message": extra.pop("message", "m")}
    return {"rule_identifier": "R", "section_identifier": "S", "rule_message": message, **extra}


def test_report_kernels_across_ranges_with_units_and_rule_kinds() -> None:
    module = _module(
        MsgType_OPTIMIZATION=12, MsgType_WARNING=13, MsgType_ERR=14, SpeedupType_GLOBAL=21
    )
    first = _Action(
        "k1",
        {
            "gpu__time_duration.sum": 4160,  # ns
            "dram__bytes.sum.per_second": 2.5e12,  # B/s
            "launch__registers_per_thread": 16,
            "launch__grid_size": 2048.0,
            "device__attribute_display_name": "NVIDIA H200",
            "launch__waves_per_multiprocessor": "n/a",
        },
        [
            _rule(12, "Opt", speedup_estimation={"speedup": 40, "type": 21}),
            _rule(12, "", name="Named", speedup_estimation={"speedup": 5.5, "type": 20}),
            _rule(13, "Warn", message="see @section:A:the A section@"),
            _rule(14, "Err", speedup_estimation={}),
            _rule(1, "Info"),  # another kind: dropped
            {"rule_identifier": "X"},  # no message: dropped
        ],
    )
    second = _Action("k2", {}, [])
    third = _Action(
        "k3",
        {
            "gpu__time_duration.sum": 1000,
            "sm__ops_path_tensor_src_bf16_dst_fp32.sum": 2.0 * 64**3,
            "sm__ops_path_tensor_src_bf16_dst_fp32_sparsity_off.sum": 2.0 * 64**3,  # not again
            "sm__sass_thread_inst_executed_op_ffma_pred_on.sum": 10,
        },
        [],
    )
    ctx = _Context([_Range([first, second]), _Range([]), _Range([third])])
    k1, k2, k3 = kernels_from_report(module, ctx)
    assert [(k.id, k.name, k.demangled) for k in (k1, k2, k3)] == [
        (0, "k1", "demangled k1"),
        (1, "k2", "demangled k2"),
        (2, "k3", "demangled k3"),
    ]
    assert k1.device == "NVIDIA H200" and k2.device is None
    assert k1.duration_us == 4.16 and k3.duration_us == 1.0
    # a tensor-core kernel: its tensor-path FLOPs counted once, on top of the CUDA cores' 20,
    # and its roof is the bf16 tensor one (issue 34 item 3)
    assert k3.tensor_flops == 2.0 * 64**3 and k3.flops == 2.0 * 64**3 + 20
    assert k3.math == "bf16 tensor" and k1.tensor_flops is None
    assert k1.dram_bandwidth_gbs == 2500.0
    assert k1.registers == 16.0 and isinstance(k1.registers, float)
    assert k1.grid_size == 2048.0 and k1.waves is None
    assert [
        (h["kind"], h["title"], h["speedup_pct"], h["speedup_type"], h["message"]) for h in k1.hints
    ] == [
        ("ERR", "Err", None, None, "m"),
        ("OPT", "Opt", 40.0, "global", "m"),
        ("OPT", "Named", 5.5, "local", "m"),
        ("WRN", "Warn", None, None, "see the A section"),
    ]
    assert (k1.hints[0]["rule"], k1.hints[0]["section"]) == ("R", "S")
    assert k2.hints == [] and k2.duration_us is None
    assert set(k1.to_json()) >= {f for f, _ in METRICS.values()} | {"hints", "grid", "block"}


def test_report_without_constants_uses_the_defaults() -> None:
    module = types.ModuleType("bare")
    module.IAction = types.SimpleNamespace()  # type: ignore[attr-defined]
    action = _Action(
        "k",
        {},
        [
            _rule(2, "Opt", speedup_estimation={"speedup": 1, "type": 2}),
            _rule(3, "Warn"),
            _rule(4, "Err"),
        ],
    )
    (k,) = kernels_from_report(module, _Context([_Range([action])]))
    assert k.demangled == "k"  # no demangled name base: the name
    assert [(h["kind"], h["speedup_type"]) for h in k.hints] == [
        ("ERR", None),
        ("OPT", "global"),
        ("WRN", None),
    ]


def test_csv_short_units_the_order_of_kernels_and_the_error() -> None:
    rows = [
        _row(2, "k2", "Duration", "ms", "2"),
        _row(0, "k0", "Duration", "ns", "500"),
        _row(1, "k1", "Duration", "us", "3"),
    ]
    kernels = read_ncu_csv("\n".join([HEADER, *rows]))
    # In the order of the report, not sorted by ID.
    assert [(k.id, k.duration_us) for k in kernels] == [(2, 2000.0), (0, 0.5), (1, 3.0)]
    with pytest.raises(NcuError) as info:
        read_ncu_csv("no table")
    assert str(info.value) == 'no CSV table in this output (expected a header starting with "ID")'


def test_csv_columns_are_text_and_may_be_missing() -> None:
    # Every column read as text: a numeric-looking kernel name stays as written.
    text = '"ID","Kernel Name","Metric Name","Metric Value"\n"0","0042","Duration","1.5"\n'
    (k,) = read_ncu_csv(text)
    assert (k.name, k.duration_us, k.grid, k.block, k.hints) == ("0042", 1.5, None, None, [])
    # A rule without its description column: an empty message.
    text = '"ID","Kernel Name","Rule Name","Rule Type"\n"0","k","R","OPT"\n'
    (k,) = read_ncu_csv(text)
    assert [
        (h["rule"], h["kind"], h["message"], h["section"], h["speedup_pct"], h["speedup_type"])
        for h in k.hints
    ] == [("R", "OPT", "", "", None, None)]
    # Without the rule type column: an information hint.
    (k,) = read_ncu_csv('"ID","Kernel Name","Rule Name"\n"0","k","R"\n')
    assert [h["kind"] for h in k.hints] == ["INF"]


def test_warnings_rank_before_other_kinds_whatever_their_speedup() -> None:
    rows = [
        _row(0, "k", rule="I", kind="INF", text="i", stype="global", speedup="80"),
        _row(0, "k", rule="W", kind="WRN", text="w", stype="global", speedup="10"),
    ]
    (k,) = read_ncu_csv("\n".join([HEADER, *rows]))
    assert [h["rule"] for h in k.hints] == ["W", "I"]


def test_report_rule_results_with_missing_fields() -> None:
    module = _module(MsgType_OPTIMIZATION=2)
    action = _Action(
        "k", {}, [{"rule_message": {"type": 2}}, {"rule_message": {"type": 2}, "name": "N"}]
    )
    (k,) = kernels_from_report(module, _Context([_Range([action])]))
    assert [(h["rule"], h["section"], h["title"], h["message"]) for h in k.hints] == [
        ("", "", "", ""),
        ("", "", "N", ""),
    ]


def test_a_hint_without_an_estimate_ranks_as_zero_speedup() -> None:
    rows = [
        _row(0, "k", rule="A", kind="OPT", text="a"),
        _row(0, "k", rule="B", kind="OPT", text="b", stype="local", speedup="0.5"),
    ]
    (k,) = read_ncu_csv("\n".join([HEADER, *rows]))
    assert [h["rule"] for h in k.hints] == ["B", "A"]


def test_csv_bytes_and_flop_counters_for_the_roofline() -> None:
    """The metrics the ncu stage adds (``--metrics``) are labelled by their own names on the
    details page, with byte and count units: each kernel's DRAM bytes and FLOPs (FMA twice)."""
    text = "\n".join(
        [
            HEADER,
            _row(0, "k", "Duration", "usecond", "4.16"),
            _row(0, "k", "dram__bytes_read.sum", "Mbyte", "4.20"),
            _row(0, "k", "dram__bytes_write.sum", "Kbyte", "512"),
            _row(0, "k", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "Minst", "1.5"),
            _row(0, "k", "sm__sass_thread_inst_executed_op_fadd_pred_on.sum", "inst", "1,000"),
            _row(0, "k", "sm__sass_thread_inst_executed_op_hmul_pred_on.sum", "inst", "0"),
            _row(1, "no_counters", "Duration", "usecond", "1.0"),
        ]
    )
    k, bare = read_ncu_csv(text)
    assert k.dram_bytes_read == pytest.approx(4.2e6)
    assert k.dram_bytes_write == pytest.approx(512e3)
    assert k.flops == pytest.approx(2 * 1.5e6 + 1000)
    assert (bare.dram_bytes_read, bare.dram_bytes_write, bare.flops) == (None, None, None)
