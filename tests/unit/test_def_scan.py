"""The scan of a text without ``ast`` (issue 26 item 3): a big file's first lenses.

It must find the functions ``find_functions`` finds — same qualified names, ``def`` lines and
first lines (decorators) — on real files, and never give a lens role the full model does not
give (the full model only adds lenses), on tricky inputs as on real code.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from benchmarks.bench_lens_scale import generated_module

from kernel_lens.analysis.def_scan import blank_strings, outline, outline_targets
from kernel_lens.analysis.functions import find_functions
from kernel_lens.analysis.lens_targets import lens_targets

ROOT = Path(__file__).resolve().parent.parent.parent


def _torch_nn() -> list[Path]:
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dev dependency
        return []
    return sorted((Path(torch.__file__).parent / "nn").rglob("*.py"))


#: Real code: torch.nn (classes, decorators, overloads, nested functions, long docstrings), the
#: repository's kernels and the e2e fixtures (Triton kernels, directives, scripts).
REAL = [
    *_torch_nn(),
    *sorted((ROOT / "kernels").glob("*.py")),
    *sorted((ROOT / "tests" / "e2e" / "fixtures").rglob("*.py")),
]


def _found(source: str) -> set[tuple[int, int, str]]:
    return {(d.def_line, d.first_line, d.qualname) for d in outline(source).functions}


def _expected(source: str) -> set[tuple[int, int, str]]:
    return {(f.def_line, f.first_line, f.qualname) for f in find_functions(source)}


def _roles_are_the_full_models(source: str) -> None:
    """Each role the scan gives is the full model's, with the same row (no sweep)."""
    full = {
        (t.info.first_line, t.info.qualname): (t.role, t.sweep_params) for t in lens_targets(source)
    }
    roles, _ = outline_targets(source)
    for d, role in roles:
        if role != "none":
            assert full.get((d.first_line, d.qualname)) == (role, ()), (d.qualname, role)


def test_real_files_are_a_sample_worth_the_name() -> None:
    assert len(REAL) > 100
    assert sum(len(find_functions(p.read_text())) for p in REAL[:40]) > 200


def test_the_scan_finds_the_functions_ast_finds_in_real_files() -> None:
    wrong = []
    for path in REAL:
        source = path.read_text(encoding="utf-8")
        if _found(source) != _expected(source):
            wrong.append(path)
    assert not wrong


def test_the_scan_gives_no_role_the_full_model_does_not_in_real_files() -> None:
    given = 0
    for path in REAL:
        source = path.read_text(encoding="utf-8")
        _roles_are_the_full_models(source)
        given += sum(role != "none" for _, role in outline_targets(source)[0])
    assert given > 300  # and it gives most of them (torch.nn: ~440 of 560)


def test_the_benchmark_file_gets_all_its_lenses_from_the_scan() -> None:
    source = generated_module(2000)
    roles, process_group = outline_targets(source)
    full = lens_targets(source)
    assert [(d.first_line, d.qualname, role) for d, role in roles] == [
        (t.info.first_line, t.info.qualname, t.role) for t in full
    ]
    assert sum(role == "profile" for _, role in roles) == 1500 and not process_group


TRICKY = {
    "def in strings and comments": '''
x = """
def not_me():
    pass
"""
y = 'def nor_me(): pass'  # def nor_this(): pass
z = f"""{x}
class NotAClass:
    def m(self): ...
"""
b = rb\'\'\'
def no(): pass
\'\'\'

def real():
    """A docstring.

    def fake():
        pass
    """
    return 'it\\'s """ not a string start'


def after():
    s = "a \\" def quoted(): "
    return s
''',
    "nested functions and classes": """
class Outer:
    class Inner:
        def deep(self):
            def not_listed():
                pass
            return not_listed

    def method(self):
        class Local:
            def no(self):
                pass
        return Local


def top():
    def inner():
        pass
    return inner
""",
    "decorators over several lines": """
import functools


@functools.lru_cache(
    maxsize=None,
)
@staticmethod
def cached(x):
    return x


class A:
    @property
    def p(self):
        return 1

    @p.setter
    def p(self, value):
        pass

    @functools.wraps(
        cached
    )
    async def run(self):
        return None
""",
    "blocks that are not classes": """
import sys

if sys.platform == "linux":
    def linux_only():
        pass
else:
    def other():
        pass

try:
    def in_try():
        pass
except ImportError:
    pass


def listed():
    pass
""",
    "line continuations and brackets": """
x = [
1, 2,
]
class A:
    X = (1 +
2)
    Y = 3 + \\
4
    def m(self, a,
b=2):
        return a @ \\
            b

    def n(self):
        return (self
    @ self)


def f(
    a,
    b,
):
    return a
""",
    "one-line bodies": """
class Empty: pass
class Doc: '''doc'''
def one(): return 1
async def two(): return 2
class After:
    def m(self): return 3
""",
    "tabs": (
        "class T:\n\tdef m(self):\n\t\treturn 1\n\n\tdef n(self):\n\t\tpass\n\ndef f():\n\tpass\n"
    ),
    "unicode names": "def café():\n    pass\n\n\nclass Ünï:\n    def ſ(self):\n        pass\n",
}


@pytest.mark.parametrize("name", list(TRICKY))
def test_tricky_inputs(name: str) -> None:
    source = TRICKY[name]
    ast.parse(source)  # each is valid Python
    assert _found(source) == _expected(source)
    _roles_are_the_full_models(source)


def test_a_def_inside_a_docstring_gets_no_lens() -> None:
    source = TRICKY["def in strings and comments"]
    names = {d.qualname for d in outline(source).functions}
    assert names == {"real", "after"}


def test_crlf_line_ends() -> None:
    source = TRICKY["nested functions and classes"].replace("\n", "\r\n")
    assert _found(source) == _expected(source)
    assert {d.qualname for d in outline(source).functions} == {
        "Outer.Inner.deep",
        "Outer.method",
        "top",
    }


def test_a_syntax_error_mid_file_keeps_the_defs_before_and_after_it() -> None:
    source = (
        "import torch\n\n\ndef before(x):\n    return torch.relu(x)\n\n\n"
        "def broken(:\n    return (\n\n\n"
        "def after(x):\n    return x @ x\n\n\n"
        "class C:\n    def m(self, x):\n        return x.cuda()\n"
    )
    with pytest.raises(SyntaxError):
        ast.parse(source)
    found = {(d.def_line, d.qualname) for d in outline(source).functions}
    assert {(4, "before"), (12, "after"), (17, "C.m")} <= found
    roles = {d.qualname: role for d, role in outline_targets(source)[0]}
    assert roles["before"] == roles["after"] == roles["C.m"] == "profile"


def test_an_unclosed_string_ends_the_scan_only_where_python_would() -> None:
    source = 'def a():\n    s = "open\n    return 1\n\n\ndef b():\n    pass\n'
    assert {d.qualname for d in outline(source).functions} == {"a", "b"}
    source = 'def a():\n    """never closed\n\n\ndef b():\n    pass\n'
    assert {d.qualname for d in outline(source).functions} == {"a"}


def test_strings_are_blanked_and_lines_kept() -> None:
    source = 'a = """x\ndef f():\n""" + b  # c\nd = \'e\'\n'
    code = blank_strings(source)
    assert code.count("\n") == source.count("\n")
    assert "def" not in code and "# c" not in code and "'e'" not in code
    assert code.splitlines()[2].endswith("+ b  ")


ROLES = """
import torch
import triton
import triton.language as tl
from torch import nn
from numba import cuda


@triton.jit
def kernel(x_ptr, BLOCK: tl.constexpr):
    pass


@cuda.jit
def numba_kernel(x):
    pass


def launch(x, BLOCK=128):
    kernel[(1,)](x, BLOCK=BLOCK)


def plain(x, n=4):
    return x * n


class Net(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x


def square_inputs():
    return (torch.ones(4),)


def square(x):
    return x * x


def _private(x):
    return torch.relu(x)


def uses_attr(x):
    return x.torch.relu(x)


def main():
    print(square(*square_inputs()))
"""


def test_roles_the_scan_is_sure_of() -> None:
    roles = {d.qualname: role for d, role in outline_targets(ROLES)[0]}
    _roles_are_the_full_models(ROLES)
    assert roles["kernel"] == "kernel"
    assert roles["numba_kernel"] == "none"
    assert roles["Net.forward"] == "profile"  # an nn.Module's forward
    assert roles["Net.__init__"] == "none"
    assert roles["square_inputs"] == "none"  # an input factory
    assert roles["square"] == "profile"  # has a square_inputs factory
    # left to the full model: a sweep could be offered (the file launches kernels), a private
    # helper the script may call, a name that is an attribute, a main() that runs by itself
    assert roles["launch"] == roles["_private"] == roles["uses_attr"] == roles["main"] == "none"
    full = {t.info.qualname: t.role for t in lens_targets(ROLES)}
    assert full["launch"] == full["main"] == "profile"


def test_an_import_the_scan_cannot_read_resolves_nothing() -> None:
    source = "import os; import torch as np\n\n\ndef f(x):\n    return np.relu(x)\n"
    found = outline(source)
    assert not found.imports_complete
    assert [role for _, role in outline_targets(source)[0]] == ["none"]


def test_init_process_group_is_read_from_the_code() -> None:
    called = "import torch.distributed as dist\n\n\ndef f():\n    dist.init_process_group('nccl')\n"
    assert outline(called).process_group
    assert not outline(
        "s = 'init_process_group()'\n\n\ndef init_process_group(x):\n    pass\n"
    ).process_group


def test_brackets_nested_deeper_than_the_removal_passes() -> None:
    deep = "(" * 40 + "1" + ")" * 40
    source = (
        f"class A:\n    X = {deep[:-1]}\n){deep}\n\n    def m(self):\n        return 1\n\n\n"
        f"def f():\n    return {'[' * 30}\n{']' * 30}\n"
    )
    ast.parse(source)
    assert _found(source) == _expected(source)


def test_where_functions_end_is_where_ast_ends_them() -> None:
    """``last_line`` (a result's row placed before the tree is made) against ``end_lineno``:
    equal but where the last statement is a string over several lines (said in its doc)."""
    from kernel_lens.analysis.def_scan import last_line

    checked = 0
    for path in REAL:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        ends_in_string = {
            node.lineno
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and isinstance(node.body[-1], ast.Expr)
            and isinstance(node.body[-1].value, ast.Constant)
            and isinstance(node.body[-1].value.value, str)
        }
        expected = {(f.def_line, f.qualname): f.last_line for f in find_functions(source)}
        found = outline(source)
        for d in found.functions:
            end = last_line(found.code, d.def_line, d.def_start, d.end)
            if d.def_line not in ends_in_string:
                assert end == expected[(d.def_line, d.qualname)], (path, d.qualname)
                checked += 1
    assert checked > 1000
