"""Nsight Compute hints on source lines, from reports recorded on the H200 (no GPU, no ncu).

A kernel's line is its NVTX ``src:<line>`` range when the report has one, else the one profiled
line that launched a kernel of the same short name; each OPT hint becomes an information
diagnostic spanning that line's text. Checked with the real ``DocumentStore`` and a stand-in for
the server's publish call.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from lsprotocol import types

from kernel_lens.lsp.dispatch import Dispatcher
from kernel_lens.lsp.report import _publish_hints, ncu_line_for_kernel
from kernel_lens.lsp.state import DocumentStore

H200 = Path(__file__).resolve().parent.parent / "data" / "h200"
URI = "file:///work/triton_square.py"

pytest.importorskip("ncu_report")


@pytest.fixture(scope="module")
def three_ways() -> dict[str, Any]:
    return json.loads((H200 / "square_three_ways_profile.json").read_text())


@pytest.fixture(scope="module")
def triton() -> dict[str, Any]:
    return json.loads((H200 / "triton_square_profile.json").read_text())


def _rows(report: str, first_id: int = 0) -> list[dict[str, Any]]:
    """The rows ``run_ncu`` returns for a recorded report: each kernel with its NVTX line."""
    from kernel_lens.agent.stages.ncu import kernel_lines_from_report
    from kernel_lens.traces.ncu_files import read_ncu_file

    path = str(H200 / report)
    kernels, reader = read_ncu_file(path)
    assert reader == "ncu_report"
    lines = kernel_lines_from_report(path)
    rows = []
    for i, k in enumerate(kernels):
        row = k.to_json()
        row["id"] = first_id + i
        row["line"] = lines[i] if i < len(lines) else None
        rows.append(row)
    return rows


def test_the_nvtx_line_wins(triton: dict[str, Any]) -> None:
    (row,) = _rows("triton_square_small.ncu-rep")
    assert row["line"] == 42
    assert ncu_line_for_kernel(row, None) == 42
    # Even when the profile has the kernel's name on another line.
    assert ncu_line_for_kernel(row, triton) == 42


def test_without_nvtx_the_unique_profiled_line_is_used(triton: dict[str, Any]) -> None:
    (row,) = _rows("triton_square_small.ncu-rep")
    row["line"] = None
    assert ncu_line_for_kernel(row, triton) == 35  # square_kernel[grid](...) in that recording
    assert ncu_line_for_kernel(row, None) is None
    assert ncu_line_for_kernel(row, {"lines": []}) is None
    # The short name of the demangled name is matched, not the raw one.
    mangled = {"name": "_Z13square_kernelPfS_i", "demangled": "square_kernel", "line": None}
    assert ncu_line_for_kernel(mangled, triton) == 35
    assert ncu_line_for_kernel({"name": "square_kernel", "line": None}, triton) == 35
    assert ncu_line_for_kernel({"name": "other_kernel", "line": None}, triton) is None


def test_an_ambiguous_short_name_has_no_line(three_ways: dict[str, Any]) -> None:
    # vectorized_elementwise_kernel ran on lines 35, 36 and 37: no guess.
    full = three_ways["lines"][2]["ops"][0]["kernels"][0]["name"]
    kernel = {"name": full, "demangled": full, "line": None}
    assert ncu_line_for_kernel(kernel, three_ways) is None
    one_line = {**three_ways, "lines": three_ways["lines"][2:]}
    assert ncu_line_for_kernel(kernel, one_line) == 37


class Server:
    """The parts of the language server that publishing diagnostics uses (``URI`` is open)."""

    def __init__(self) -> None:
        self.documents = DocumentStore()
        self.workspace = SimpleNamespace(text_documents={URI: object()})
        self.published: list[types.PublishDiagnosticsParams] = []
        self.dispatcher = Dispatcher(self)  # type: ignore[arg-type]

    def text_document_publish_diagnostics(self, params: types.PublishDiagnosticsParams) -> None:
        self.published.append(params)


def _source(lines: dict[int, str], length: int = 50) -> str:
    return "\n".join(lines.get(i, f"# line {i}") for i in range(1, length + 1))


LAUNCH = "    return square(x, BLOCK_SIZE=1024)"


def test_each_opt_hint_is_a_diagnostic_on_the_launching_line() -> None:
    ls = Server()
    ncu = {"kernels": _rows("triton_square_small.ncu-rep")}
    count = _publish_hints(ls, URI, _source({42: LAUNCH}), "square_small", ncu)  # type: ignore[arg-type]
    diagnostics = [d for group in ls.documents(URI).diagnostics.values() for d in group]
    assert list(ls.documents(URI).diagnostics) == [("ncu", "square_small")]
    assert count == len(diagnostics) == 7
    assert ls.published[-1].diagnostics == diagnostics
    for d in diagnostics:
        assert d.range == types.Range(types.Position(41, 4), types.Position(41, len(LAUNCH)))
        assert d.severity == types.DiagnosticSeverity.Information
        assert d.source == "Nsight Compute"
    small = next(d for d in diagnostics if d.code == "LaunchConfiguration")
    assert small.message.startswith(
        "square_kernel: Small Grid (est. global speedup 76%) — The grid for this launch is "
        "configured to execute only 32 blocks"
    )
    assert diagnostics[0].message.startswith(
        "square_kernel: Achieved Occupancy (est. local speedup 94%) — "
    )
    # A hint without an estimate has no "(est. …)".
    sol = next(d for d in diagnostics if d.code == "SOLBottleneck")
    assert sol.message.startswith("square_kernel: Small Grid — This kernel grid is too small")
    # A document closed before the result came: no Problems entry, no state.
    closed = Server()
    closed.workspace.text_documents.clear()
    _publish_hints(closed, URI, _source({42: LAUNCH}), "square_small", ncu)  # type: ignore[arg-type]
    assert closed.documents.peek(URI) is None
    assert all(p.diagnostics == [] for p in closed.published)


def test_several_kernels_in_one_report(three_ways: dict[str, Any]) -> None:
    ls = Server()
    ls.documents.put(
        URI,
        SimpleNamespace(qualname="f", state="ok", result=three_ways),  # type: ignore[arg-type]
    )
    ls.documents(URI).diagnostics[("syntax", "")] = [
        types.Diagnostic(
            range=types.Range(types.Position(0, 0), types.Position(0, 1)), message="kept"
        )
    ]
    ls.documents(URI).diagnostics[("ncu", "f")] = [
        types.Diagnostic(
            range=types.Range(types.Position(0, 0), types.Position(0, 1)), message="stale"
        )
    ]
    fused = _rows("triton_fused_full.ncu-rep", first_id=1)[0]
    fused["line"] = 40
    mul = three_ways["lines"][1]["ops"][0]["kernels"][0]["name"]
    pow_ = three_ways["lines"][2]["ops"][0]["kernels"][0]["name"]
    kernels = [
        # A short name three lines share: no line, no diagnostic.
        {"id": 2, "name": pow_, "demangled": pow_, "line": None, "hints": fused["hints"]},
        fused,  # its NVTX line: 12 hints, the WRN one not shown
        # No NVTX line, and the mul kernel's short name is shared by all three lines, but its
        # full name by none other than line 36: its line (test below).
        {"id": 3, "name": mul, "demangled": mul, "line": None, "hints": []},
        # A line past the end of the text: nothing.
        {**fused, "id": 4, "line": 99},
    ]
    source = _source({40: "z = torch.relu(x * y) + 1", 42: LAUNCH})
    count = _publish_hints(ls, URI, source, "f", {"kernels": kernels})  # type: ignore[arg-type]
    entries = ls.documents(URI).diagnostics
    assert count == 11
    assert sorted(entries) == [("ncu", "f"), ("syntax", "")]
    assert [d.message for d in entries[("syntax", "")]] == ["kept"]
    ncu = entries[("ncu", "f")]
    assert "stale" not in [d.message for d in ncu]
    # Kernel 1's OPT hints, in order (kernel 2 has no line, 3 no hints, 4's is past the end).
    assert [d.code for d in ncu] == [h["rule"] for h in fused["hints"] if h["kind"] == "OPT"]
    assert {d.range.start.line for d in ncu} == {39}
    assert all(d.message.startswith("triton_poi_fused_add_mul_relu_0: ") for d in ncu)
    assert "PM Sampling Data" not in " ".join(d.message for d in ncu)


def test_each_kernel_of_one_report_lands_on_its_own_launching_line(
    three_ways: dict[str, Any],
) -> None:
    """Several kernels in one Nsight Compute report: the Triton square kernel (NVTX line 42,
    recorded), inductor's fused kernel (recorded, no NVTX range) and the eager mul and pow
    kernels of the three-ways profile (one template, one short name). Each kernel's hints are on
    its own line and no other, and its row (the Report's metrics) carries that line."""
    ls = Server()
    profile = json.loads(json.dumps(three_ways))
    fused = _rows("triton_fused_full.ncu-rep", first_id=1)[0]
    fused["line"] = None
    # The fused kernel as the profile saw it, launched from line 38 (a torch.compile call).
    profile["lines"].append(
        {
            "line": 38,
            "source": "z = compiled(x, y)",
            "ops": [{"name": "Torch-Compiled Region", "kernels": [
                {"name": fused["name"], "short_name": fused["name"], "device_us": 4.16,
                 "calls": 1}]}],
        }
    )  # fmt: skip
    ls.documents.put(
        URI,
        SimpleNamespace(qualname="f", state="ok", result=profile),  # type: ignore[arg-type]
    )
    square = _rows("triton_square_small.ncu-rep")[0]
    mul = three_ways["lines"][1]["ops"][0]["kernels"][0]["name"]
    pow_ = three_ways["lines"][2]["ops"][0]["kernels"][0]["name"]
    opt = [h for h in fused["hints"] if h["kind"] == "OPT"]
    kernels = [
        square,
        fused,
        {"id": 2, "name": mul, "demangled": mul, "line": None, "hints": opt[:2],
         "duration_us": 188.0},
        # torch.square and x ** 2 launch the same pow kernel (lines 35 and 37): no guess.
        {"id": 3, "name": pow_, "demangled": pow_, "line": None, "hints": opt[:1]},
    ]  # fmt: skip
    source = _source({35: "a = torch.square(x)", 36: "b = x * x", 37: "c = x ** 2", 42: LAUNCH})
    count = _publish_hints(ls, URI, source, "f", {"kernels": kernels})  # type: ignore[arg-type]
    ncu = ls.documents(URI).diagnostics[("ncu", "f")]
    by_line: dict[int, set[str]] = {}
    for d in ncu:
        by_line.setdefault(d.range.start.line + 1, set()).add(d.message.split(":")[0])
    assert by_line == {
        42: {"square_kernel"},
        38: {"triton_poi_fused_add_mul_relu_0"},
        36: {"vectorized_elementwise_kernel"},
    }
    square_opt = [h for h in square["hints"] if h["kind"] == "OPT"]
    assert count == len(square_opt) + len(opt) + 2
    # The Report's rows: each kernel's metrics with its own line (the pow kernel's: none).
    assert [k["line"] for k in kernels] == [42, 38, 36, None]
    assert [d.code for d in ncu if d.range.start.line == 35] == [h["rule"] for h in opt[:2]]
