"""One parse per document version (issue 26 item 3): the model of a text, its lens targets from
a single ``ast.parse`` whatever the number of functions, and the same answers as the per-call
functions it replaces (``find_functions``, ``find_function``, ``lens_targets``)."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from benchmarks.bench_lens_scale import generated_module

from kernel_lens.analysis import document_model
from kernel_lens.analysis.document_model import analyze
from kernel_lens.analysis.functions import find_function, find_functions
from kernel_lens.analysis.lens_targets import lens_targets

ROOT = Path(__file__).resolve().parent.parent.parent

#: Files with classes, decorators, kernels, directives, module-level work.
SAMPLES = [
    ROOT / "kernels" / "square.py",
    ROOT / "kernels" / "triton_square.py",
    ROOT / "kernels" / "fusion.py",
    ROOT / "tests" / "data" / "examples" / "lsp_cases.py",
]


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts ``ast.parse`` calls (every parse in kernel_lens goes through it)."""
    calls: list[int] = []
    real = ast.parse

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting)
    return calls


@pytest.mark.parametrize("n", [40, 400])
def test_lens_targets_of_n_functions_parse_once(parses: list[int], n: int) -> None:
    source = generated_module(n)
    targets = lens_targets(source)
    assert len(targets) == n
    assert len(parses) == 1  # was 2 + 2 per function: quadratic in the file
    parses.clear()
    model = analyze(source)
    assert len(model.targets) == n and len(parses) == 1


def test_the_lint_reuses_the_workers_tree(parses: list[int]) -> None:
    source = generated_module(50) + "import time\nt0 = time.perf_counter()\n"
    document_model.analyze_keyed("k", source)
    document_model.lint_keyed("k", source)
    assert len(parses) == 1


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
@pytest.mark.parametrize("show_all", [False, True])
def test_the_model_answers_as_the_per_call_functions(path: Path, show_all: bool) -> None:
    source = path.read_text()
    model = analyze(source, show_all=show_all)
    assert list(model.functions) == find_functions(source)
    assert list(model.targets) == lens_targets(source, show_all=show_all)
    for line in range(1, source.count("\n") + 2):
        assert model.function_at(line) == find_function(source, line=line), line
    for info in model.functions:
        assert model.function_named(info.qualname) == find_function(source, name=info.qualname)


def test_a_text_that_does_not_parse_gives_its_syntax_error() -> None:
    model = analyze("def f(:\n    pass\n")
    assert model.syntax_error is not None and model.syntax_error[1] == 1
    assert model.functions == () and model.function_at(1) is None
    with pytest.raises(ValueError, match="line 1"):
        model.check()


def test_the_model_crosses_a_process_boundary() -> None:
    import pickle

    model = analyze(generated_module(20))
    back = pickle.loads(pickle.dumps(model))
    assert back == model
    assert back.function_at(5) == model.function_at(5) is not None


def test_rows_made_in_the_worker_are_the_lenses_made_on_the_loop() -> None:
    """The big-file path (rows serialised in the worker, joined as JSON) answers exactly what
    the object path answers, trusted or not."""
    from pygls.workspace import Workspace

    from kernel_lens.lsp.code_lens import document_lenses, document_lenses_json, rows_ahead
    from kernel_lens.lsp.server import create_server

    ls = create_server()
    ls.protocol._workspace = Workspace(None)  # what `initialize` sets up
    uri = "file:///tmp/kernel-lens-rows.py"
    source = (ROOT / "kernels" / "triton_square.py").read_text() + generated_module(30)
    model = analyze(source)
    unstructure = ls.protocol._converter.unstructure
    rows = rows_ahead(uri, source, model, unstructure)
    for trusted in (True, False):
        ls.settings.workspace_trusted = trusted
        objects = [unstructure(lens) for lens in document_lenses(ls, uri, source, model)]
        assert objects  # the comparison has something to compare
        assert json.loads(document_lenses_json(ls, uri, source, model, rows)) == objects


class _Doc:
    def __init__(self, source: str, version: int) -> None:
        self.source, self.version = source, version


class _Server:
    """What `DocumentModels` reads of the server: its open documents and settings."""

    def __init__(self) -> None:
        from kernel_lens.lsp.settings import Settings

        self.settings = Settings()
        self.workspace = type("W", (), {"text_documents": {}})()

    def open(self, uri: str, source: str, version: int) -> str:
        self.workspace.text_documents[uri] = _Doc(source, version)
        return source


def test_models_are_kept_by_uri_and_version_newest_only() -> None:
    from kernel_lens.lsp.models import DocumentModels

    ls, models = _Server(), DocumentModels()
    uri = "file:///tmp/a.py"
    v1 = ls.open(uri, generated_module(8), 1)
    first = models.now(ls, uri, v1)
    assert models.now(ls, uri, v1) is first and models.analysed == 1
    v2 = ls.open(uri, generated_module(9), 2)
    assert len(models.now(ls, uri, v2).functions) == 9
    assert models.ready(ls, uri, v1) is None  # the older version went
    models.forget(uri)
    assert models.ready(ls, uri, v2) is None


def test_a_big_text_is_analysed_once_in_the_worker_with_its_rows() -> None:
    import asyncio

    from kernel_lens.lsp.code_lens import rows_ahead
    from kernel_lens.lsp.models import DocumentModels

    async def run() -> None:
        ls, models = _Server(), DocumentModels(inline_chars=0)
        models.rows_ahead = rows_ahead
        uri = "file:///tmp/big.py"
        source = ls.open(uri, generated_module(200), 1)
        try:
            model, again = await asyncio.gather(
                models.get(ls, uri, source),
                models.get(ls, uri, source),
            )
            assert model is again and models.analysed == 1  # one parse, both waited for it
            assert model == analyze(source)
            rows = models.rows(ls, uri, source)
            assert rows is not None and len(rows.trusted) == 200
            lint = await models.lint(ls, uri, source)
            assert lint == document_model.lint(source)
        finally:
            models.shutdown()

    asyncio.run(run())


#: Imports at several depths (a name bound twice: the first in ``ast.walk`` order wins), in
#: handlers, cases and nested defs; a distributed call; int parameters to sweep (show-all).
TRICKY = """
import numpy as np
try:
    import torch as np2
except ImportError:
    import triton as tr
    from triton import language as tl
else:
    pass
finally:
    import os
def ünïcode_fn(x, A=1, B=2, C=3):
    import cupy as np
    def inner():
        import numba as tr
    return torch.distributed.init_process_group("nccl") @ x
class K:
    def m(self, BLOCK=4):
        match self:
            case 1:
                import triton.language as tl
            case _:
                from torch import nn as tr
        return np.zeros(BLOCK) @ self
async def g(*, N=8, M=9, O=None):
    global np
    return {**{}, 1: N} @ N
"""


def test_the_model_finds_imports_and_process_groups_as_the_full_walk_does() -> None:
    from kernel_lens.analysis.document_model import _imports
    from kernel_lens.analysis.functions import import_aliases
    from kernel_lens.analysis.lens_targets import uses_process_group

    tree = ast.parse(TRICKY)
    walked = [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
    assert _imports(tree) == walked and len(walked) == 9
    model = analyze(TRICKY)
    assert model.process_group is uses_process_group(TRICKY) is True
    assert analyze(TRICKY.replace("init_process_group", "barrier")).process_group is False
    assert dict(import_aliases(tree))["np"] == "numpy"
    assert list(model.targets) == lens_targets(TRICKY)


@pytest.mark.parametrize("show_all", [False, True])
@pytest.mark.parametrize(
    "uri", ["file:///tmp/kernel-lens-rows.py", "file:///tmp/a{0}b/%7B\\ue0001\ue000/ü.py"]
)
def test_rows_from_templates_are_the_rows_made_lens_by_lens(show_all: bool, uri: str) -> None:
    """A big file's rows are filled-in templates (one per number of sweep parameters): each is
    byte for byte the row made from its lenses, whatever the names and the URI hold."""
    from kernel_lens.lsp.code_lens import (
        TRUST_COMMAND,
        TRUST_TITLE,
        _function_lenses,
        _lens,
        row_json,
        rows_ahead,
    )
    from kernel_lens.lsp.convert import server_converter

    unstructure = server_converter().unstructure
    source = (
        (ROOT / "kernels" / "triton_square.py").read_text()
        + TRICKY
        + generated_module(12)
        + (ROOT / "tests" / "data" / "examples" / "lsp_cases.py").read_text()
    )
    model = analyze(source, show_all=show_all)
    rows = rows_ahead(uri, source, model, unstructure)
    made = {"profile": 0, "kernel": 0}
    sweeps = set()
    for target, trusted, untrusted in zip(model.targets, rows.trusted, rows.untrusted, strict=True):
        line0 = target.info.first_line - 1
        if target.role == "none":
            assert trusted == untrusted == ""
            continue
        made[target.role] += 1
        assert untrusted == row_json([_lens(line0, TRUST_TITLE, TRUST_COMMAND)], unstructure)
        if target.role == "kernel":
            assert trusted is None
            continue
        sweeps.add(len(target.sweep_params))
        assert trusted == row_json(_function_lenses(uri, target, None, source), unstructure)
        assert json.loads(f"[{trusted}]")[0]["range"]["start"]["line"] == line0
    assert made["profile"] > 10 and made["kernel"] >= 1
    if show_all:
        assert {0, 1, 2, 3} <= sweeps  # rows with More…, too


def test_the_lint_asked_first_runs_after_the_model_and_reuses_its_parse() -> None:
    """On open the lint is asked before the lenses: in the one worker it still comes after the
    model (the lenses never wait behind it) and lints the tree the model's work kept."""
    import asyncio

    from kernel_lens.lsp.code_lens import rows_ahead
    from kernel_lens.lsp.models import DocumentModels

    async def run() -> None:
        ls, models = _Server(), DocumentModels(inline_chars=0)
        models.rows_ahead = rows_ahead
        uri = "file:///tmp/big-lint-first.py"
        timed = (
            "def q(x):\n    t0 = time.perf_counter()\n    y = torch.relu(x)\n"
            "    return time.perf_counter() - t0\n"
        )
        source = ls.open(uri, "import time\n" + generated_module(300) + timed, 1)
        order: list[str] = []
        try:
            lint = asyncio.ensure_future(models.lint(ls, uri, source))
            lint.add_done_callback(lambda _: order.append("lint"))
            await asyncio.sleep(0)  # the lint is asked (and queued) first
            model = asyncio.ensure_future(models.get(ls, uri, source))
            model.add_done_callback(lambda _: order.append("model"))
            found, issues = await asyncio.gather(model, lint)
            assert order == ["model", "lint"]
            assert models.analysed == 1 and found == analyze(source)
            assert issues == document_model.lint(source) and issues
        finally:
            models.shutdown()

    asyncio.run(run())


def test_a_running_profiles_lenses_read_the_model_not_the_text(parses: list[int]) -> None:
    """A big file's lenses while one of its functions is profiled (a refresh at each streamed
    stage) place the record on the model: no parse of the whole text per request."""
    from kernel_lens.lsp.code_lens import _running_lenses
    from kernel_lens.lsp.results import Record, function_text

    source = generated_module(40)
    model = analyze(source)
    parses.clear()
    info = model.function_named("f4")
    assert info is not None
    record = Record(
        "f4",
        "running",
        function_text(source.splitlines(), info),
        info.first_line,
        result={"lines": [{"line": info.body_first_line + 1, "source": "c = torch.relu(x) * 4"}]},
        stage="timing",
    )
    lenses = _running_lenses(record, source, info.first_line - 1, model)
    assert parses == []
    assert lenses[0].command is not None and "Profiling" not in lenses[0].command.title
