"""Loading the user's function and its inputs (``agent/stages/target.py``), in process: where the
inputs come from (directive, ``<name>_inputs()``, none, the script's own call), how a method gets
its ``self``, the description of the inputs, and every error with its kind, message and line.
Written for the mutants of target.py that the unit suite did not kill (docs/testing.md)."""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kernel_lens.agent.stages.target import Target, load_target
from kernel_lens.agent.usercode import parse_source
from kernel_lens.wire.errors import ProfileError


@pytest.fixture(autouse=True)
def _restore_process_state(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Loading runs the user's file: it may add to ``sys.path``, change folder and ``argv``."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.chdir(os.getcwd())
    yield


def _write(tmp_path: Path, text: str, name: str = "user.py") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def _load(tmp_path: Path, text: str, **kwargs: Any) -> Target:
    return load_target(_write(tmp_path, text), **kwargs)


def _error(tmp_path: Path, text: str, **kwargs: Any) -> ProfileError:
    with pytest.raises(ProfileError) as err:
        _load(tmp_path, text, **kwargs)
    return err.value


def _args(target: Target) -> list[tuple[str, str, str]]:
    assert target.inputs is not None
    return [(a["name"], a["type"], a["repr"]) for a in target.inputs["args"]]


# Where the inputs come from --------------------------------------------------------------


def test_a_directive_gives_args_and_kwargs(tmp_path: Path) -> None:
    target = _load(
        tmp_path,
        """\
        SCALE = 3


        # kernel-lens: inputs = ([2, 5], {"scale": SCALE})
        def f(a, b, scale=1):
            return (a + b) * scale
        """,
        name="f",
    )
    assert target.path == str(tmp_path / "user.py")
    assert (target.args, target.kwargs, target.inputs_source) == ((2, 5), {"scale": 3}, "directive")
    assert target.call() == 21
    assert target.inputs is not None
    assert (target.inputs["source"], target.inputs["label"], target.inputs["line"]) == (
        "directive",
        "directive",
        4,
    )
    assert _args(target) == [("a", "int", "2"), ("b", "int", "5"), ("scale", "int", "3")]
    assert target.inputs.get("self") is None
    assert target.code.co_name == "f" and target.module.__name__ == "user"
    assert target.module.__file__ == target.path
    assert sys.modules["user"] is sys.modules["_kernel_lens_target_user"] is target.module
    assert target.source_line(6) == "return (a + b) * scale"
    assert target.source_line(0) == "" and target.source_line(7) == ""
    assert target.source_line(1) == "SCALE = 3"


@pytest.mark.parametrize(
    "expr, args, kwargs",
    [
        ("(1, 2)", (1, 2), {}),
        ("[1, 2]", (1, 2), {}),
        ("7", (7,), {}),
        ("((1,), {'b': 2})", (1,), {"b": 2}),
        ("[(1,), {'b': 2}]", ((1,), {"b": 2}), {}),  # a list is always positional
        ("((1,), 2)", ((1,), 2), {}),  # a pair whose second is no dict: two positionals
        ("([1], {'b': 2})", (1,), {"b": 2}),
    ],
)
def test_the_shapes_a_directive_value_can_have(
    tmp_path: Path, expr: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    target = _load(
        tmp_path,
        f"""\
        # kernel-lens: inputs = {expr}
        def f(a, b=0):
            return a
        """,
        name="f",
    )
    assert (target.args, target.kwargs) == (args, kwargs)


def test_a_factory_gives_the_inputs_and_its_line(tmp_path: Path) -> None:
    target = _load(
        tmp_path,
        """\
        def f(a, b):
            return a - b


        def f_inputs():
            return (10, 4)
        """,
        line=2,
    )
    assert (target.args, target.inputs_source, target.call()) == ((10, 4), "f_inputs()", 6)
    assert target.inputs is not None
    assert (target.inputs["source"], target.inputs["label"], target.inputs["line"]) == (
        "factory",
        "f_inputs()",
        5,
    )
    assert _args(target) == [("a", "int", "10"), ("b", "int", "4")]


def test_a_factory_from_another_module_has_no_line(tmp_path: Path) -> None:
    _write(tmp_path, "def f_inputs():\n    return (1,)\n", "helpers.py")
    target = _load(
        tmp_path,
        """\
        from helpers import f_inputs


        def f(a):
            return a
        """,
        name="f",
    )
    assert target.inputs is not None
    assert (target.inputs["source"], target.inputs["label"], target.inputs["line"]) == (
        "factory",
        "f_inputs()",
        None,
    )
    assert tmp_path.as_posix() in sys.path  # sibling imports work as under `python FILE`


def test_a_method_factory_is_named_after_class_and_method(tmp_path: Path) -> None:
    target = _load(
        tmp_path,
        """\
        class K:
            def m(self, a):
                return a + 1


        k = K()


        def K_m_inputs():
            return [41]
        """,
        name="K.m",
    )
    assert (target.args, target.inputs_source, target.call()) == ((41,), "K_m_inputs()", 42)


def test_no_parameters_no_inputs(tmp_path: Path) -> None:
    target = _load(tmp_path, "def f(a=2, *, b=3):\n    return a * b\n", name="f")
    assert (target.args, target.kwargs, target.inputs_source, target.call()) == ((), {}, "none", 6)
    assert target.inputs is not None
    assert (
        target.inputs["source"],
        target.inputs["label"],
        target.inputs["line"],
        target.inputs["args"],
    ) == (
        "none",
        "none",
        None,
        [],
    )


def test_the_scripts_own_call_is_captured(tmp_path: Path) -> None:
    target = _load(
        tmp_path,
        """\
        def f(a, *rest, scale):
            return (a + sum(rest)) * scale


        def main():
            return f(1, 2, 3, scale=10)


        main()
        """,
        name="f",
    )
    assert (target.args, target.kwargs, target.inputs_source) == (
        (1, 2, 3),
        {"scale": 10},
        "captured",
    )
    assert target.call() == 60
    assert target.inputs is not None
    assert (target.inputs["source"], target.inputs["label"], target.inputs["line"]) == (
        "captured",
        "captured",
        9,
    )
    assert target.inputs["call"] == "main → f"
    assert target.inputs["setup_s"] is not None and target.inputs["setup_s"] >= 0
    # Positional names from the signature (the *rest ones past it are argN), then keywords.
    assert _args(target) == [
        ("a", "int", "1"),
        ("rest", "int", "2"),
        ("arg2", "int", "3"),
        ("scale", "int", "10"),
    ]


def test_a_captured_method_call_binds_that_instance(tmp_path: Path) -> None:
    target = _load(
        tmp_path,
        """\
        class K:
            def __init__(self, n):
                self.n = n

            def m(self, a):
                return self.n + a


        other = K(100)
        k = K(1)
        k.m(2)
        """,
        name="K.m",
    )
    assert (target.args, target.call()) == ((2,), 3)
    assert target.inputs is not None
    assert target.inputs.get("self") == {
        "class": "K",
        "how": "captured",
        "name": "k",
        "made_at": 10,
    }


def test_a_captured_classmethod_call_drops_cls(tmp_path: Path) -> None:
    target = _load(
        tmp_path,
        """\
        class K:
            @classmethod
            def c(cls, a):
                return cls.__name__ + a


        K.c("!")
        """,
        name="K.c",
    )
    assert (target.args, target.call()) == (("!",), "K!")
    assert target.inputs is not None and target.inputs.get("self") is None


def test_a_script_that_never_calls_it_says_how_to_give_inputs(tmp_path: Path) -> None:
    err = _error(tmp_path, "def f(a):\n    return a\n", name="f")
    assert err.kind == "inputs" and err.line == 1
    assert "without calling f" in err.message and "define f_inputs()" in err.message


# The instance a method is called on -------------------------------------------------------

METHODS = """\
class K:
    def __init__(self, n=7):
        self.n = n

    def m(self):
        return self.n

    @staticmethod
    def s():
        return "static"


"""


def test_the_modules_single_instance(tmp_path: Path) -> None:
    target = _load(tmp_path, METHODS + "k = K(5)\nalias = k\n", name="K.m")
    assert target.call() == 5
    assert target.inputs is not None
    assert target.inputs.get("self") == {
        "class": "K",
        "how": "module instance k",
        "name": "k",
        "made_at": 13,
    }


def test_the_last_assignment_is_where_the_instance_was_made(tmp_path: Path) -> None:
    target = _load(tmp_path, METHODS + "k = None\nk: K = K(5)\nprint(k)\n", name="K.m")
    assert target.inputs is not None and target.inputs.get("self") is not None
    assert target.inputs.get("self", {})["made_at"] == 14


@pytest.mark.parametrize("instances", ["", "a = K(1)\nb = K(2)\n"])
def test_none_or_several_instances_make_one_with_no_arguments(
    tmp_path: Path, instances: str
) -> None:
    target = _load(tmp_path, METHODS + instances, name="K.m")
    assert target.call() == 7
    assert target.inputs is not None
    assert target.inputs.get("self") == {"class": "K", "how": "K() with no arguments"}


def test_a_class_that_needs_arguments_is_an_inputs_error(tmp_path: Path) -> None:
    err = _error(tmp_path, METHODS.replace("n=7", "n"), name="K.m")
    assert err.kind == "inputs" and err.line == 5  # no line of the file raised: the method's def
    assert err.message == (
        "to profile the method 'K.m', Kernel Lens needs an instance of K: the script made none "
        "at module level and did not call the method, and K() with no arguments raised "
        "TypeError: K.__init__() missing 1 required positional argument: 'n'"
    )
    assert err.traceback is not None and "TypeError" in err.traceback
    raising = METHODS.replace("self.n = n", "raise ValueError('no default device')")
    err = _error(tmp_path, raising, name="K.m")
    assert err.kind == "inputs" and err.line == 3  # the line of __init__ that raised
    assert err.message.endswith("K() with no arguments raised ValueError: no default device")


def test_a_static_method_needs_no_instance(tmp_path: Path) -> None:
    target = _load(tmp_path, METHODS, name="K.s")
    assert target.call() == "static"
    assert target.inputs is not None and target.inputs.get("self") is None


# Errors -------------------------------------------------------------------------------------


def test_a_syntax_error_is_on_its_line(tmp_path: Path) -> None:
    err = _error(tmp_path, "x = 1\ndef f(:\n    pass\n", name="f")
    assert err.kind == "syntax" and err.line == 2


def test_parse_source_says_the_line() -> None:
    with pytest.raises(ProfileError) as err:
        parse_source("x = (\n", "/w/a.py")
    assert (err.value.kind, err.value.line) == ("syntax", 1)
    assert err.value.message == "'(' was never closed"
    assert parse_source("x = 1\n", "/w/a.py").body[0].lineno == 1


@pytest.mark.parametrize(
    "kwargs, message, line",
    [
        ({"name": "g"}, "no function 'g' in user.py", None),
        ({"line": 5}, "no function at line 5 in user.py", 5),
    ],
)
def test_no_such_function(
    tmp_path: Path, kwargs: dict[str, Any], message: str, line: int | None
) -> None:
    err = _error(tmp_path, "def f():\n    pass\n\n\nx = 1\n", **kwargs)
    assert (err.kind, err.message, err.line) == ("not-found", message, line)


@pytest.mark.parametrize(
    "statement, kind, message",
    [
        ("raise ValueError('bad')", "import", "loading the file raised ValueError: bad"),
        ("import sys; sys.exit(3)", "import", "loading the file raised SystemExit: 3"),
        ("raise KeyboardInterrupt", "interrupted", "loading the file raised KeyboardInterrupt: "),
    ],
)
def test_a_file_that_fails_to_load(tmp_path: Path, statement: str, kind: str, message: str) -> None:
    err = _error(tmp_path, f"def f():\n    return 1\n\n\n{statement}\n", name="f")
    assert (err.kind, err.message, err.line) == (kind, message, 5)
    assert err.traceback is not None and err.traceback.startswith("Traceback")


def test_a_function_defined_but_not_bound(tmp_path: Path) -> None:
    err = _error(tmp_path, "def f():\n    return 1\n\n\ndel f\n", name="f")
    assert (err.kind, err.line) == ("not-found", 1)
    assert err.message == (
        "'f' is defined in the text but not bound after loading the module (defined "
        "conditionally, or deleted?)"
    )


def test_a_name_rebound_to_a_value_is_not_callable(tmp_path: Path) -> None:
    err = _error(tmp_path, "def f():\n    return 1\n\n\nf = 3\n", name="f")
    assert (err.kind, err.message, err.line) == ("not-found", "'f' is not callable", 1)


def test_a_function_of_another_file_is_unsupported(tmp_path: Path) -> None:
    _write(tmp_path, "def g():\n    return 1\n", "other.py")
    err = _error(tmp_path, "from other import g\n\n\ndef f():\n    return 1\n\n\nf = g\n", name="f")
    assert (err.kind, err.line) == ("unsupported", 4)
    assert err.message == (
        "'f' is not a plain Python function of this file (a compiled or wrapped object Kernel "
        "Lens cannot see into)"
    )


# Inputs that do not fit ---------------------------------------------------------------------


def test_a_directive_that_does_not_fit(tmp_path: Path) -> None:
    err = _error(
        tmp_path,
        """\
        # kernel-lens: inputs = (1, 'x', 3)
        def f(a, b):
            return a
        """,
        name="f",
    )
    assert (err.kind, err.line) == ("inputs", 1)
    assert err.message == (
        "the inputs directive gives f(int, str, int), which does not fit f(a, b): "
        "too many positional arguments"
    )


def test_a_factory_that_does_not_fit_is_said_on_its_def(tmp_path: Path) -> None:
    err = _error(
        tmp_path,
        """\
        def f(a):
            return a


        def f_inputs():
            return ((), {"b": 1})
        """,
        name="f",
    )
    assert (err.kind, err.line) == ("inputs", 5)
    assert err.message == (
        "f_inputs() gives f(b=…), which does not fit f(a): missing a required argument: 'a'"
    )


def test_an_imported_factory_that_does_not_fit_is_said_on_the_def(tmp_path: Path) -> None:
    _write(tmp_path, "def f_inputs():\n    return (1, 2)\n", "helpers2.py")
    err = _error(tmp_path, "from helpers2 import f_inputs\n\n\ndef f(a):\n    return a\n", name="f")
    assert (err.kind, err.line) == ("inputs", 4)
    assert err.message.startswith("f_inputs() gives f(int, int), which does not fit f(a)")


def test_a_directive_that_does_not_parse_or_raises(tmp_path: Path) -> None:
    err = _error(tmp_path, "# kernel-lens: inputs = (1,\ndef f(a):\n    return a\n", name="f")
    assert (err.kind, err.line) == ("inputs", 1)
    assert err.message.startswith("the inputs directive does not parse: ")
    err = _error(tmp_path, "# kernel-lens: inputs = (1 / 0,)\ndef f(a):\n    return a\n", name="f")
    assert (err.kind, err.line) == ("inputs", 1)
    assert err.message == "the inputs directive raised ZeroDivisionError: division by zero"
    assert err.traceback is not None and 'File "' + str(tmp_path / "user.py") + '", line 1' in (
        err.traceback
    )


def test_a_factory_that_raises(tmp_path: Path) -> None:
    err = _error(
        tmp_path,
        """\
        def f(a):
            return a


        def f_inputs():
            raise RuntimeError("no data")
        """,
        name="f",
    )
    assert (err.kind, err.line) == ("inputs", 6)
    assert err.message == "f_inputs() raised RuntimeError: no data"
    assert err.traceback is not None and "RuntimeError: no data" in err.traceback


def test_a_factory_that_exits(tmp_path: Path) -> None:
    err = _error(
        tmp_path,
        """\
        import sys


        def f(a):
            return a


        def f_inputs():
            sys.exit(2)
        """,
        name="f",
    )
    assert (err.kind, err.message, err.line) == ("inputs", "f_inputs() raised SystemExit: 2", 9)


def test_keyword_only_parameters_without_defaults_want_inputs(tmp_path: Path) -> None:
    err = _error(tmp_path, "def f(*, a):\n    return a\n", name="f")
    assert err.kind == "inputs" and "without calling f" in err.message


def test_a_method_whose_only_parameter_is_self_needs_no_inputs(tmp_path: Path) -> None:
    # `self` is no input: no capture, the module's instance.
    target = _load(tmp_path, METHODS + "k = K(9)\n", name="K.m")
    assert (target.inputs_source, target.call()) == ("none", 9)


def test_the_text_given_is_what_runs_not_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "def f():\n    return 'saved'\n")
    target = load_target(path, "def f():\n    return 'unsaved'\n", name="f")
    assert target.call() == "unsaved"
    import linecache

    assert linecache.getline(path, 2) == "    return 'unsaved'\n"


# Edges -------------------------------------------------------------------------------------


def test_a_missing_file_says_why_in_words(tmp_path: Path) -> None:
    from kernel_lens.agent.usercode import read_source

    path = str(tmp_path / "gone.py")
    with pytest.raises(ProfileError) as err:
        read_source(path)
    assert err.value.message == f"cannot read {path}: No such file or directory"


def test_bytes_that_break_utf8_past_the_coding_lines(tmp_path: Path) -> None:
    from kernel_lens.agent.usercode import read_source

    path = tmp_path / "late.py"
    path.write_bytes(b"x = 1\ny = 2\nz = 'caf\xe9'\n")  # the first two lines decode
    with pytest.raises(ProfileError) as err:
        read_source(str(path))
    assert (err.value.kind, err.value.line) == ("syntax", None)
    assert err.value.message.startswith("cannot decode late.py: 'utf-8' codec can't decode")


def test_a_syntax_error_only_the_compiler_finds(tmp_path: Path) -> None:
    # `break` outside a loop parses; compiling the module finds it.
    err = _error(tmp_path, "def f():\n    return 1\n\n\nbreak\n", name="f")
    assert (err.kind, err.message, err.line) == ("syntax", "'break' outside loop", 5)


def test_a_parse_error_says_what_and_where(tmp_path: Path) -> None:
    err = _error(tmp_path, "x = 1\ndef f(:\n    pass\n", name="f")
    assert (err.kind, err.message, err.line) == ("syntax", "invalid syntax (line 2)", 2)


def test_the_files_folder_is_first_on_the_path(tmp_path: Path) -> None:
    # A module of the same name elsewhere on the path does not shadow the sibling.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "sibling_kl.py").write_text("WHO = 'elsewhere'\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "sibling_kl.py").write_text("WHO = 'sibling'\n")
    sys.path.insert(0, str(elsewhere))
    sys.modules.pop("sibling_kl", None)
    try:
        target = _load(
            project, "import sibling_kl\n\n\ndef f():\n    return sibling_kl.WHO\n", name="f"
        )
        assert target.call() == "sibling"
        assert sys.path[0] == str(project)
    finally:
        sys.modules.pop("sibling_kl", None)


WRAPS = """\
import functools


def deco(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


def f():
    return 3


for _ in range({n}):
    f = deco(f)
"""


def test_nineteen_wrappers_are_seen_through_twenty_are_not(tmp_path: Path) -> None:
    target = _load(tmp_path, WRAPS.format(n=19), name="f")
    assert target.code.co_name == "f" and target.code.co_firstlineno == 12
    err = _error(tmp_path, WRAPS.format(n=20), name="f")
    assert (err.kind, err.line) == ("unsupported", 12)


def test_an_object_whose_code_is_not_code_is_unsupported(tmp_path: Path) -> None:
    err = _error(
        tmp_path,
        """\
        class Fake:
            __code__ = "not code"

            def __call__(self):
                return 1


        def f():
            return 1


        f = Fake()
        """,
        name="f",
    )
    assert (err.kind, err.line) == ("unsupported", 8)


def test_an_instance_not_made_by_an_assignment_has_no_line(tmp_path: Path) -> None:
    target = _load(tmp_path, METHODS + "for k in [K(4)]:\n    pass\n", name="K.m")
    assert target.call() == 4
    assert target.inputs is not None
    assert target.inputs.get("self") == {
        "class": "K",
        "how": "module instance k",
        "name": "k",
        "made_at": None,
    }


def test_a_class_rebound_to_its_instance(tmp_path: Path) -> None:
    target = _load(tmp_path, METHODS + "K = K(8)\n", name="K.m")
    assert target.call() == 8
    assert target.inputs is not None and target.inputs.get("self") is None


NESTED = """\
class A:
    class B:
        def __init__(self):
            self.v = 10

        @staticmethod
        def s(a):
            return a

        def m(self, a):
            return self.v + a


"""


def test_methods_of_a_nested_class(tmp_path: Path) -> None:
    target = _load(tmp_path, NESTED + "b = A.B()\nb.m(5)\n", name="A.B.m")
    assert (target.args, target.call()) == ((5,), 15)
    assert target.inputs is not None and target.inputs.get("self") is not None
    assert target.inputs.get("self")["how"] == "captured"
    target = _load(tmp_path, NESTED + "A.B.s(6)\n", name="A.B.s")
    assert (target.args, target.call()) == ((6,), 6)
    assert target.inputs is not None and target.inputs.get("self") is None
    # Not called by the script: the module's instance, else one made with no arguments.
    with_factory = NESTED + "b = A.B()\n\n\ndef A_B_m_inputs():\n    return (1,)\n"
    target = _load(tmp_path, with_factory, name="A.B.m")
    assert target.call() == 11
    assert target.inputs is not None and target.inputs.get("self") is not None
    assert target.inputs.get("self")["how"] == "module instance b"
    target = _load(tmp_path, NESTED + "def A_B_m_inputs():\n    return (2,)\n", name="A.B.m")
    assert target.call() == 12
    assert target.inputs is not None and target.inputs.get("self") is not None
    assert target.inputs.get("self")["how"] == "B() with no arguments"


def test_a_captured_static_method_call_keeps_its_first_argument(tmp_path: Path) -> None:
    target = _load(tmp_path, METHODS.replace("def s():", "def s(a):") + "K.s(5)\n", name="K.s")
    assert (target.args, target.inputs_source) == ((5,), "captured")
    assert target.info.qualname == "K.s" and target.info.def_line == 9


def test_a_class_deleted_before_its_methods_call(tmp_path: Path) -> None:
    source = METHODS.replace("def m(self):", "def m(self, a):") + "k = K()\ndel K\nk.m(1)\n"
    err = _error(tmp_path, source, name="K.m")
    assert (err.kind, err.line) == ("not-found", 5)


def test_keyword_inputs_that_a_parameter_needs(tmp_path: Path) -> None:
    target = _load(
        tmp_path,
        "# kernel-lens: inputs = ((), {'a': 5})\ndef f(a):\n    return a\n",
        name="f",
    )
    assert (target.args, target.kwargs, target.call()) == ((), {"a": 5}, 5)


def test_a_directive_that_raises_points_at_its_own_line(tmp_path: Path) -> None:
    err = _error(
        tmp_path,
        "import os\n\n\n# kernel-lens: inputs = (1 / 0,)\ndef f(a):\n    return a\n",
        name="f",
    )
    assert err.line == 4
    assert err.traceback is not None
    assert f'File "{tmp_path / "user.py"}", line 4' in err.traceback


DECORATED = """\
def deco(fn):
    def wrapper(self, x):
        return fn(self) + x

    return wrapper


def plain(fn):
    def wrapper(x):
        return fn() + x

    return wrapper


@plain
def f():
    return 1


class K:
    @deco
    def m(self):
        return 2


k = K()
"""


@pytest.mark.parametrize(
    "name, line, factory", [("f", 16, "f_inputs()"), ("K.m", 22, "K_m_inputs()")]
)
def test_a_wrapper_that_wants_what_the_def_does_not_say(
    tmp_path: Path, name: str, line: int, factory: str
) -> None:
    # The def takes nothing, so nothing is captured; the wrapper the decorator returns wants `x`.
    err = _error(tmp_path, DECORATED, name=name)
    assert (err.kind, err.line) == ("inputs", line)
    assert err.message == (
        f"no inputs directive gives {name}(), which does not fit {name}(x): missing a required "
        f"argument: 'x' (add a `# kernel-lens: inputs = (…)` comment above the def, or a "
        f"{factory} function returning them)"
    )


@pytest.mark.parametrize("fits", [True, False])
def test_a_factory_that_is_no_function(tmp_path: Path, fits: bool) -> None:
    source = f"""\
        import functools


        def make(n):
            return (n,) * {1 if fits else 2}


        def f(a):
            return a


        f_inputs = functools.partial(make, 3)
        """
    if fits:
        target = _load(tmp_path, source, name="f")
        assert (target.args, target.inputs_source) == ((3,), "f_inputs()")
        assert target.inputs is not None and target.inputs["line"] is None
    else:
        err = _error(tmp_path, source, name="f")
        assert (err.kind, err.line) == ("inputs", 8)  # no def of its own: the function's


def test_a_lambda_factory(tmp_path: Path) -> None:
    target = _load(tmp_path, "def f(a):\n    return a\n\n\nf_inputs = lambda: (9,)\n", name="f")
    assert (target.args, target.inputs_source) == ((9,), "f_inputs()")
    assert target.inputs is not None and target.inputs["line"] == 5


def test_a_function_whose_signature_cannot_be_read(tmp_path: Path) -> None:
    # A decorator left a broken `__signature__`: the inputs are passed as given, named by place.
    target = _load(
        tmp_path,
        "# kernel-lens: inputs = (4,)\ndef f(a):\n    return a * 2\n\n\nf.__signature__ = 'junk'\n",
        name="f",
    )
    assert target.call() == 8
    assert _args(target) == [("arg0", "int", "4")]
