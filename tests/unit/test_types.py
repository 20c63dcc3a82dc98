"""The shared job types: requests round-trip through JSON, the error kinds are a closed set that
holds every kind the code produces, and the stage results have the JSON the tools read."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from kernel_lens.agent.engine import METHODS, dispatch
from kernel_lens.agent.stages.compiled import generated_kernel
from kernel_lens.wire.errors import ERROR_KINDS, ProfileError
from kernel_lens.wire.jobs import (
    METHOD_NAMES,
    AsmRequest,
    InlineRequest,
    JobRequest,
    KernelLinesRequest,
    LightRequest,
    NcuRequest,
    ProfileRequest,
    SanitizerRequest,
    SweepRequest,
    ValuesRequest,
)
from kernel_lens.wire.paths import CacheDirs
from kernel_lens.wire.results import GeneratedKernel, InlineModule, SweepRow
from tests.conftest import ROOT

SERVER = ROOT / "server" / "kernel_lens"


def _kinds_in_code() -> set[str]:
    """Kinds named in the server's code: ``ProfileError("kind", …)`` and ``{"kind": "…",
    "message": …}`` error objects."""
    kinds: set[str] = set()
    for path in SERVER.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", getattr(node.func, "attr", None)) == "ProfileError"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                kinds.add(str(node.args[0].value))
            if isinstance(node, ast.Dict):
                keys = [k.value for k in node.keys if isinstance(k, ast.Constant)]
                if "kind" in keys and "message" in keys:
                    value = node.values[keys.index("kind")]
                    if isinstance(value, ast.Constant):
                        kinds.add(str(value.value))
    return kinds


def test_every_kind_in_the_code_is_in_the_closed_set() -> None:
    used = _kinds_in_code()
    assert used, "the scan found nothing: it is broken"
    assert used <= set(ERROR_KINDS), used - set(ERROR_KINDS)
    assert {"exit", "interrupted", "timeout", "crash", "inputs"} <= set(ERROR_KINDS)


def test_profile_error_rejects_an_unknown_kind_and_reads_one_as_internal() -> None:
    with pytest.raises(ValueError, match="unknown error kind"):
        ProfileError("oops", "x")  # type: ignore[arg-type]
    err = ProfileError.from_json({"kind": "oops", "message": "m", "line": "3"})
    assert (err.kind, err.message, err.line, err.traceback) == ("internal", "m", None, None)
    err = ProfileError("exit", "called sys.exit(3)", 7, "tb")
    assert ProfileError.from_json(err.to_json()) == err
    assert err.to_json() == {
        "kind": "exit",
        "message": "called sys.exit(3)",
        "line": 7,
        "traceback": "tb",
    }


@pytest.mark.parametrize(
    "request_",
    [
        ProfileRequest(path="/a.py", function="f", stages=("timing", "compiled"), reps=7),
        ProfileRequest(path="/a.py", line=12, extra={"sweep_param": "B", "sweep_values": [1]}),
        SweepRequest(path="/a.py", function="f", param="BLOCK", values=[64, 128]),
        AsmRequest(path="/k.py", kernel="k", arch=80, stage="ptx"),
        InlineRequest(path="/i.py", text="x = 1\n", build=True),
        NcuRequest(path="/a.py", function="f", set="full", timeout=30.0),
        # A function's inputs from a driver script's call: every job carries the same four.
        SweepRequest(
            path="/m.py",
            function="L.forward",
            param="n",
            driver="/bench.py",
            argv=["--dim", "8"],
            cwd="/w",
            env={"K": "v"},
        ),
        NcuRequest(
            path="/m.py",
            function="L.forward",
            driver="/bench.py",
            argv=["--dim", "8"],
            cwd="/w",
            env={"K": "v"},
        ),
    ],
)
def test_requests_round_trip_through_json(request_: JobRequest) -> None:
    wire = request_.to_json()
    assert isinstance(wire["path"], str)
    assert type(request_).from_json(wire) == request_
    # Unknown keys are ignored; null means the default.
    assert type(request_).from_json({**wire, "future_field": 1}) == request_


def test_profile_request_reads_the_servers_params() -> None:
    params: dict[str, Any] = {
        "path": "/w/a.py",
        "text": "def f(): pass\n",
        "function": "f",
        "stages": ["sweep"],
        "warmup_ms": 10,
        "budget_ms": 200.0,
        "reps": None,
        "keep_samples": False,
    }
    request = ProfileRequest.from_json(params)
    assert request.stages == ("sweep",) and request.reps == 0 and request.keep_samples is False


def test_every_method_has_a_request_and_an_engine_entry() -> None:
    assert set(METHODS) == set(METHOD_NAMES)
    requests = (
        ProfileRequest,
        SweepRequest,
        AsmRequest,
        InlineRequest,
        NcuRequest,
        ValuesRequest,
        SanitizerRequest,
        KernelLinesRequest,
        LightRequest,
    )
    assert {r.method for r in requests} == set(METHOD_NAMES)


def test_dispatch_errors_are_internal() -> None:
    with pytest.raises(ProfileError) as unknown:
        dispatch("nope", {})
    assert unknown.value.kind == "internal" and "unknown method 'nope'" in unknown.value.message
    with pytest.raises(ProfileError) as bad:
        dispatch("ncu", {"path": "/a.py"})  # no function
    assert bad.value.kind == "internal" and "bad params for 'ncu'" in bad.value.message


def test_cache_folders_follow_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KERNEL_LENS_CACHE", str(tmp_path / "c"))
    cache = CacheDirs.from_env()
    assert (cache.traces, cache.ncu, cache.compiled) == (
        str(tmp_path / "c" / "traces"),
        str(tmp_path / "c" / "ncu"),
        str(tmp_path / "c" / "compiled"),
    )
    monkeypatch.delenv("KERNEL_LENS_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert CacheDirs.from_env().traces == str(tmp_path / "xdg" / "kernel-lens" / "traces")


def test_result_json_keeps_the_shape_the_tools_read() -> None:
    extern = generated_kernel(
        {"name": "extern_kernels.mm", "kind": "extern", "call_line": 9, "lines": [4]}
    )
    assert extern == {
        "name": "extern_kernels.mm",
        "kind": "extern",
        "call_line": 9,
        "lines": [4],
    }
    fused = generated_kernel(
        {
            "name": "triton_poi_0",
            "kind": "triton",
            "call_line": 30,
            "def_line": 12,
            "lines": [4, 5],
            "asm": {"a": 1},
        }
    )
    assert list(fused) == ["name", "kind", "def_line", "call_line", "lines", "asm"]
    # What a stage may leave out, the wire types say (and the generated TypeScript reads).
    assert InlineModule.__optional_keys__ == {"ptx_seconds", "kernels", "sass", "sass_line_map"}
    assert SweepRow.__required_keys__ == {"value", "error"}
    assert GeneratedKernel.__optional_keys__ == {"def_line", "asm"}
