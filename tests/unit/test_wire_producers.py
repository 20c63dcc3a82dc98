"""The producers speak the wire: each ``to_json`` (and each builder) of the analysis and the
agent emits exactly the keys of its ``wire`` TypedDict — every required key, no key the wire
does not declare — down through the nested objects, and a ``Literal`` field holds one of its
values.

Every instance here is real: attributions of traces recorded on an H200
(``tests/data/h200``), a torch.compile'd CPU step with its graphs (``tests/data/compiled``), two
recorded profiles compared, ncu's CSV page, Triton PTX of the repo's kernels, torch's state under
``torch.autocast``, and a CPU profile of a tiny function run by the agent's engine in this
process. mypy checks the keys where the producers build the dicts; this test checks what they
emit at run time (a ``**`` spread, a key added after the literal, a value outside a Literal).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
import typing
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints, is_typeddict

import pytest

from kernel_lens.agent.results import line_results, profile_head
from kernel_lens.analysis.asm_diff import compare, summarise, triton_side
from kernel_lens.analysis.compare import compare_results, diff_kernels, diff_lines
from kernel_lens.analysis.compiled_lines import compiled_graphs
from kernel_lens.analysis.line_attribution import attribute_trace
from kernel_lens.analysis.ncu import read_ncu_csv
from kernel_lens.wire import lsp as wire_lsp
from kernel_lens.wire import results as wire

DATA = Path(__file__).resolve().parents[1] / "data"
H200 = DATA / "h200"
KERNELS = Path(__file__).resolve().parents[2] / "kernels"

#: Objects of another stage's producer, not held here (none left: the timing stage's
#: ``ProfileTiming`` declares its samples and quartiles now).
_NOT_DESCENDED: frozenset[Any] = frozenset()


def _keys(td: Any) -> tuple[frozenset[str], frozenset[str]]:
    return frozenset(td.__required_keys__), frozenset(td.__optional_keys__)


def check(value: Any, tp: Any, where: str = "$", skip: frozenset[Any] = _NOT_DESCENDED) -> None:
    """``value`` against the wire type ``tp``: a TypedDict's keys (required present, none
    undeclared), a list's or a dict's items, a Literal's value, a union's member that fits;
    the TypedDicts of ``skip`` are not looked into."""
    if is_typeddict(tp):
        assert isinstance(value, dict), f"{where}: {type(value).__name__}, not {tp.__name__}"
        if tp in skip:
            return
        required, optional = _keys(tp)
        emitted = set(value)
        assert not emitted - required - optional, (
            f"{where}: keys {sorted(emitted - required - optional)} not in {tp.__name__}"
        )
        assert not required - emitted, f"{where}: {tp.__name__}'s {sorted(required - emitted)}"
        hints = get_type_hints(tp)
        for key in emitted:
            check(value[key], hints[key], f"{where}.{key}", skip)
        return
    origin = get_origin(tp)
    args = get_args(tp)
    if origin is Literal:
        assert value in args, f"{where}: {value!r} not one of {args}"
    elif origin is list:
        assert isinstance(value, list), f"{where}: not a list"
        for i, item in enumerate(value):
            check(item, args[0], f"{where}[{i}]", skip)
    elif origin is dict:
        assert isinstance(value, dict), f"{where}: not a dict"
        for key, item in value.items():
            check(item, args[1], f"{where}[{key!r}]", skip)
    elif origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return
        members = [a for a in args if a is not type(None)]
        if len(members) == 1:
            check(value, members[0], where, skip)


def check_part(part: dict[str, Any], td: Any) -> None:
    """Keys of a part of a ``td`` object (``line_results``' keys of a profile): each declared,
    each value its declared type."""
    hints = get_type_hints(td)
    for key, value in part.items():
        assert key in hints, f"$.{key} not in {td.__name__}"
        check(value, hints[key], f"$.{key}")


def _emitted_keys(value: Any, tp: Any) -> set[str]:
    """The keys a list of ``tp`` objects emitted, together."""
    return {k for item in value for k in item} if isinstance(value, list) else set(value)


# The line attribution (KernelStat, OpStat, LineOps, BackwardPass, Remainder, Accounting).


@pytest.fixture(scope="module")
def training_part() -> dict[str, Any]:
    """A training step recorded on the H200: backward parts and a backward pass on the lines,
    memcpy/memset, a remainder."""
    result = json.loads((H200 / "training" / "train_step-train_step.json").read_text())
    trace = json.loads((H200 / "training" / "train_step-train_step-trace.json").read_text())
    return line_results(
        trace,
        runs=result["profiled_runs"],
        source_of=lambda n: f"line {n}",
        within=(result["first_line"], result["last_line"]),
    )


def test_line_results_of_a_recorded_training_step_are_the_wires_profile_keys(
    training_part: dict[str, Any],
) -> None:
    check_part(training_part, wire.Profile)
    lines = training_part["lines"]
    # the objects this step makes are there, so their keys were checked
    assert any("backward" in line for line in lines)
    assert any("backward_pass" in line for line in lines)
    assert training_part["kernels"] and training_part["unattributed"] == []


def test_each_attribution_to_json_is_its_wire_type() -> None:
    """``to_json`` of each dataclass, one by one: the key sets equal the TypedDict's (all of
    them, the optional ones included, across the instances of a recorded step)."""
    result = json.loads((H200 / "training" / "train_step-train_step.json").read_text())
    trace = json.loads((H200 / "training" / "train_step-train_step-trace.json").read_text())
    # the step cut short of its function's last lines: some device time is a remainder
    found = attribute_trace(
        trace,
        runs=result["profiled_runs"],
        first_line=result["first_line"],
        last_line=result["first_line"] + 2,
    )
    lines = [stat.to_json(f"line {no}") for no, stat in found.lines.items()]
    for row in lines:
        check(row, wire.ProfileLine)
    ops = [op for stat in found.lines.values() for op in stat.ops.values()]
    kernels = [k for op in ops for k in op.kernels.values()]
    passes = [s.backward_pass for s in found.lines.values() if s.backward_pass is not None]
    remainders = list(found.accounting.remainder.values())
    assert ops and kernels and passes and remainders and found.unattributed
    for objects, td in (
        (ops, wire.ProfileOp),
        (kernels, wire.ProfileKernel),
        (found.unattributed, wire.ProfileKernel),
        (passes, wire.BackwardPassInfo),
        (remainders, wire.AccountingRemainder),
        ([found.accounting], wire.Accounting),
    ):
        emitted = [o.to_json() for o in objects]  # type: ignore[attr-defined]
        for one in emitted:
            check(one, td)
        required, optional = _keys(td)
        keys = _emitted_keys(emitted, td)
        # not of an eager step: ``other_files`` (the result builder's, a deep run's other files)
        # and ``compiled`` (a torch.compile graph's kernel: the next test)
        assert keys == required | (optional - {"other_files", "compiled"}), td.__name__
    backward = [row["backward"] for row in lines if "backward" in row]
    assert backward and all(set(b) == set(wire.ProfileBackward.__required_keys__) for b in backward)


def test_a_compiled_steps_lines_carry_compiled_and_shared_ops_of_the_wire() -> None:
    raw = json.loads((DATA / "compiled" / "cpu_block-graphs.json").read_text())

    def line_key(file: str, line: int) -> int | None:
        return line if Path(file).name == "compiled_step.py" else None

    trace = json.loads((DATA / "compiled" / "cpu_block-trace.json").read_text())
    part = line_results(
        trace,
        runs=3,
        source_of=lambda n: f"line {n}",
        within=(32, 38),
        compiled=compiled_graphs(raw, line_key),
    )
    check_part(part, wire.Profile)
    shared = [op for row in part["lines"] for op in row.get("shared") or []]
    compiled = [op for row in part["lines"] for op in row["ops"] if "compiled" in op]
    assert shared and compiled
    assert set(shared[0]) == set(wire.ProfileSharedOp.__required_keys__) | {"dispatch", "compiled"}
    # the graph's kernel, then placed on the row's lines (``shared_with`` on every row)
    required = set(wire.CompiledKernelInfo.__required_keys__)
    assert all(set(op["compiled"]) >= required | {"shared_with"} for op in compiled)
    assert any("counted_on" in op["compiled"] for op in shared)
    kernels = [
        k
        for graph in compiled_graphs(raw, line_key).values()
        for k in [*graph.kernels.values(), *(k for _, k in graph.externs)]
    ]
    assert kernels
    for kernel in kernels:
        emitted = kernel.to_json()
        check(emitted, wire.CompiledKernelInfo)
        assert set(emitted) == required


# The comparison (Verdict, LineDelta, KernelDelta).


def test_a_comparison_of_two_recorded_profiles_is_the_wires_verdict_and_deltas() -> None:
    before = json.loads((H200 / "square_three_ways_profile.json").read_text())
    after = json.loads((H200 / "triton_square_profile.json").read_text())
    comparison = compare_results(before, after)
    check(comparison["verdict"], wire_lsp.CompareVerdict)
    required, optional = _keys(wire_lsp.CompareVerdict)
    assert set(comparison["verdict"]) == required | optional
    for row in comparison["lines"]:
        check(row, wire_lsp.LineDelta)
    for row in comparison["kernels"]:
        check(row, wire_lsp.KernelDelta)
    assert set(comparison["kernels"][0]) == set(wire_lsp.KernelDelta.__required_keys__)
    # both runs with memory: the allocation keys are emitted too
    memory_line = {
        "line": 1,
        "source": "y = x * x",
        "ops": [],
        "memory": [{"device": "cpu", "allocated_bytes": 512}],
    }
    (delta,) = diff_lines([memory_line], [memory_line], cuda=False, memory=(True, True))
    emitted = delta.to_json()
    check(emitted, wire_lsp.LineDelta)
    required, optional = _keys(wire_lsp.LineDelta)
    assert set(emitted) == required | optional
    (kernel,) = diff_kernels(before["kernels"][:1], [])
    check(kernel.to_json(), wire_lsp.KernelDelta)


# Nsight Compute (NcuKernel, its hints).


def test_ncu_kernels_read_from_the_csv_page_are_the_wires() -> None:
    kernels = read_ncu_csv((H200 / "triton_fused_details.csv").read_text())
    assert kernels and any(k.hints for k in kernels)
    for k in kernels:
        emitted = k.to_json()
        check(emitted, wire.NcuKernel)
        required, optional = _keys(wire.NcuKernel)
        # ``line`` is the ncu stage's (the launching line), not the reader's
        assert set(emitted) == required | (optional - {"line"})


# Assembly diff (Summary, the sides, the documents).


def test_an_asm_diff_of_two_triton_ptx_is_the_wires() -> None:
    asm = DATA / "asm"
    path = str(KERNELS / "triton_square.py")
    sides = []
    for block in (1024, 64):
        meta = json.loads((asm / f"triton_square_{block}.ptx.json").read_text())
        text = (asm / f"triton_square_{block}.ptx").read_text()
        sides.append(triton_side({**meta, "asm": text}, path, "ptx"))
    diff = compare(sides[0], sides[1], "ptx")
    check(diff, wire_lsp.AsmDiffResult)
    summary = summarise("ptx", (asm / "triton_square_64.ptx").read_text()).to_json()
    check(summary, wire_lsp.AsmDiffSummary)
    assert set(summary) == set(wire_lsp.AsmDiffSummary.__required_keys__)


# torch's calling context (CallContext, its autocast entries).


def test_a_call_context_under_autocast_is_the_wires() -> None:
    torch = pytest.importorskip("torch")
    from kernel_lens.agent.context import snapshot

    with torch.autocast("cpu", dtype=torch.bfloat16), torch.no_grad():
        context = snapshot()
    emitted = context.to_json(default=snapshot())
    check(emitted, wire.CallContextInfo)
    assert set(emitted) == set(wire.CallContextInfo.__required_keys__)
    assert emitted["autocast"] and emitted["grad"] == "no_grad"
    assert "autocast cpu bfloat16" in emitted["label"]


# The profile result (its head, then the stages' keys), from a real CPU profile.


SOURCE = """\
import torch


def square(x=torch.randn(64, 64, requires_grad=True)):
    y = x * x
    return y.sum()
"""


def test_a_cpu_profile_of_the_engine_is_the_wires_profile(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from kernel_lens.agent.engine import Engine
    from kernel_lens.wire.jobs import ProfileRequest

    path = tmp_path / "square.py"
    path.write_text(SOURCE)
    result = Engine().profile(
        ProfileRequest(
            path=str(path),
            text=SOURCE,
            function="square",
            stages=("timing", "ops", "trace"),
            warmup_ms=1,
            budget_ms=20,
            trace_dir=str(tmp_path / "traces"),
            backward=True,
        )
    )
    check(result, wire.Profile)
    head_required, head_optional = _keys(wire.ProfileHead)
    assert head_required | head_optional <= set(result)
    assert any("backward" in line for line in result["lines"])


def test_the_profile_head_is_the_wires_head() -> None:
    pytest.importorskip("torch")
    head = profile_head(
        function="f",
        path="/a.py",
        def_line=1,
        first_line=1,
        last_line=3,
        device="CPU",
        device_kind="cpu",
        inputs={"source": "none"},
        stages=["ops"],
        call_style="called",
        triton_interpreter=False,
    )
    required, optional = _keys(wire.ProfileHead)
    assert set(head) == required | optional
    check(head, wire.ProfileHead)


def test_the_checker_fails_on_an_undeclared_or_missing_key() -> None:
    """The check above can fail: a key the wire does not declare, a required key left out, a
    value outside a Literal."""
    good = {"name": "k", "short_name": "k", "device_us": 1.0, "calls": 1}
    check(good, wire.ProfileKernel)
    with pytest.raises(AssertionError, match="not in ProfileKernel"):
        check({**good, "surprise": 1}, wire.ProfileKernel)
    with pytest.raises(AssertionError, match="calls"):
        check({k: v for k, v in good.items() if k != "calls"}, wire.ProfileKernel)
    with pytest.raises(AssertionError, match="not one of"):
        check({**good, "kind": "texture"}, wire.ProfileKernel)
    assert typing.get_type_hints(wire.ProfileLine)["ops"] == list[wire.ProfileOp]


# The timing stage (TimingResult, GraphTiming), from real repetitions.


def test_a_cpu_timing_is_the_wires_timing() -> None:
    from kernel_lens.agent.stages.timing import TimingConfig, time_function

    timing = time_function(
        lambda: sum(range(2000)),
        device="cpu",
        config=TimingConfig(warmup_ms=1, budget_ms=5, min_reps=5),
    )
    emitted = timing.to_json()
    check(emitted, wire.ProfileTiming)
    required, optional = _keys(wire.ProfileTiming)
    # ``clocks`` is CUDA's (NVML), ``graph`` the runner's (a launch-bound CUDA function)
    assert set(emitted) == required | (optional - {"clocks", "graph"})
    without = timing.to_json(with_samples=False)
    check(without, wire.ProfileTiming)
    assert set(emitted) - set(without) == {"samples_ms"}


@pytest.mark.gpu
def test_a_cuda_timing_and_its_graph_timing_are_the_wires() -> None:
    torch = pytest.importorskip("torch")
    from kernel_lens.agent.stages.timing import TimingConfig, time_function, time_in_graph

    x = torch.randn(1 << 16, device="cuda")
    timing = time_function(
        lambda: x * x, device="cuda", config=TimingConfig(warmup_ms=1, budget_ms=20)
    )
    emitted = timing.to_json()
    check(emitted, wire.ProfileTiming)
    assert set(emitted) >= set(wire.ProfileTiming.__required_keys__) | {"samples_ms", "q1_ms"}
    graph = time_in_graph(lambda: x * x, calls=10, flush_l2=False)
    emitted_graph = graph.to_json(why="median 3.6 µs < 20 µs", kernels_us=1.0)
    check(emitted_graph, wire.GraphTimingInfo)
    assert "reason" not in emitted_graph and emitted_graph["median_ms"] is not None
    # a host sync during capture: the reason, no time
    synced = time_in_graph(lambda: (x * x).sum().item(), calls=2, flush_l2=False)
    check(synced.to_json(why=None), wire.GraphTimingInfo)
    assert "reason" in synced.to_json()


# Memory on the lines (LineMemory), from a profile_memory trace recorded on the H200.


def test_the_memory_of_a_recorded_training_step_is_the_wires_line_memory() -> None:
    from kernel_lens.analysis.memory import attribute_memory

    trace = json.loads((H200 / "training" / "memory_step-trace.json").read_text())
    per_line, memory = attribute_memory(trace, runs=1, first_line=43, last_line=49)
    rows = [row for rows in per_line.values() for row in rows]
    assert rows and memory is not None
    for row in rows:
        check(row, wire.LineMemory)
    required, optional = _keys(wire.LineMemory)
    # the backward of ``out = model(x)`` allocated on its line: every key is emitted
    assert _emitted_keys(rows, wire.LineMemory) == required | optional


# Assembly line maps (LineMap), from the PTX of a repo kernel.


def test_a_ptx_line_map_is_the_wires_line_map_entries() -> None:
    from kernel_lens.analysis.asm_map import ptx_line_map

    ptx = (DATA / "asm" / "triton_square_1024.ptx").read_text()
    entries = ptx_line_map(ptx, "triton_square.py").to_json()
    assert entries
    for entry in entries:
        check(entry, wire.LineMapEntry)
        assert set(entry) == set(wire.LineMapEntry.__required_keys__)


# Show Values' out-of-bounds accesses (MemoryCheck), from Triton's interpreter.


def test_an_out_of_bounds_load_under_the_interpreter_is_the_wires_out_of_bounds() -> None:
    """kernels/triton_oob.py run by Triton's interpreter (in a child: the interpreter is chosen
    when triton is imported)."""
    pytest.importorskip("triton")
    path = KERNELS / "triton_oob.py"
    code = (
        "import json, sys\n"
        "from kernel_lens.agent.stages.interp_values import run_values\n"
        "path = sys.argv[1]\n"
        "result = run_values(path, open(path).read(), 'shift_kernel', program='last')\n"
        "print(json.dumps(result['oob']))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "TRITON_INTERPRET": "1", "CUDA_VISIBLE_DEVICES": ""},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    oob = json.loads(proc.stdout.strip().splitlines()[-1])
    assert oob and oob[0]["op"] == "load"
    for row in oob:
        check(row, wire_lsp.OutOfBounds)
        assert set(row) == set(wire_lsp.OutOfBounds.__required_keys__)


CUDA_SOURCE = """\
import torch


def square_and_back(x=torch.randn(1 << 20, device="cuda", requires_grad=True)):
    y = x * x
    z = y.sum()
    return z.cpu()
"""


@pytest.mark.gpu
def test_a_cuda_profile_of_the_cli_is_the_wires_profile(tmp_path: Path) -> None:
    """On a GPU: kernels, a memcpy, the backward, memory recorded by default and the roofline;
    the objects of other producers (timing, memory, roofline) are held by their own tests."""
    from tests.conftest import run_cli

    path = tmp_path / "square_cuda.py"
    path.write_text(CUDA_SOURCE)
    code, result, err = run_cli(
        "profile",
        f"{path}::square_and_back",
        "--json",
        "--backward",
        "--trace-dir",
        str(tmp_path / "traces"),
    )
    assert code == 0, err
    others = _NOT_DESCENDED | {wire.ProfileMemory, wire.KernelRoofline}
    check(result, wire.Profile, skip=others)
    kinds = {k.get("kind") for k in result["kernels"]}
    assert {"kernel", "memcpy"} <= kinds, kinds
