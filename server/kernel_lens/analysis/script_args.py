"""How a script reads its command line, read from its text: which reader (argparse, click, fire,
typer, hydra, absl, optparse/getopt, nanoGPT's ``configurator.py`` or plain ``sys.argv``), which
reader a ``SystemExit`` came from, and the arguments that would put it on the CPU.

A script whose options are not argparse's still takes arguments: nanoGPT's ``train.py`` runs
``exec(open('configurator.py').read())``, which reads ``--device=cpu --compile=False`` from
``sys.argv`` by hand; ``fire.Fire(main)`` reads ``--device=cpu``; a hydra app reads
``device=cpu``. The editor offers *Arguments…* for each of them, and after a failure on a device
the script was not given, the arguments that name the CPU in the script's own form.

Pure: text in, words out.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable, Sequence

__all__ = [
    "argv_reader",
    "cpu_arguments",
    "exit_reader",
    "reader_form",
]

#: Imports that mean "this script reads its command line", by top-level module.
_IMPORTED = {
    "argparse": "argparse",
    "click": "click",
    "fire": "fire",
    "typer": "typer",
    "hydra": "hydra",
    "absl": "absl",
    "optparse": "optparse",
    "getopt": "getopt",
    "jsonargparse": "jsonargparse",
    "simple_parsing": "simple_parsing",
    "tyro": "tyro",
}
#: Where a ``SystemExit`` came from, by a frame's file: its reader.
_EXIT_FILES = (
    (re.compile(r"(^|/)argparse\.py$"), "argparse"),
    (re.compile(r"(^|/)optparse\.py$"), "optparse"),
    (re.compile(r"(^|/)getopt\.py$"), "getopt"),
    (re.compile(r"/click/"), "click"),
    (re.compile(r"/typer/"), "typer"),
    (re.compile(r"/fire/"), "fire"),
    (re.compile(r"/hydra/"), "hydra"),
    (re.compile(r"/absl/"), "absl"),
    (re.compile(r"/jsonargparse/"), "jsonargparse"),
    (re.compile(r"/tyro/"), "tyro"),
    (re.compile(r"(^|/)configurator\.py$"), "configurator.py"),
)
_CONFIGURATOR = re.compile(r"""exec\s*\(\s*open\s*\(\s*['"][^'"]*configurator\.py['"]""")
_SYS_ARGV = re.compile(r"\bsys\.argv\b")


def argv_reader(source: str) -> str | None:
    """The command-line reader of a script's text (``argparse``, ``click``, ``fire``,
    ``configurator.py``, ``sys.argv`` …), or ``None`` when it reads none."""
    if _CONFIGURATOR.search(source):
        return "configurator.py"
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        tree = None
    if tree is not None:
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            for name in names:
                reader = _IMPORTED.get(name.split(".")[0])
                if reader is not None:
                    return reader
    if _SYS_ARGV.search(source):
        return "sys.argv"
    return None


def exit_reader(filenames: Iterable[str]) -> str | None:
    """The reader a ``SystemExit`` came out of, from its traceback's files (innermost last):
    the script exited on its arguments. ``None``: it exited on its own."""
    found = None
    for name in filenames:
        normal = name.replace(os.sep, "/")
        for pattern, reader in _EXIT_FILES:
            if pattern.search(normal):
                found = reader
    return found


def reader_form(reader: str | None) -> str:
    """How the reader wants its options, for a prompt (``--key=value`` for configurator.py)."""
    if reader in ("configurator.py", "fire"):
        return "--key=value"
    if reader == "hydra":
        return "key=value"
    return "--option value"


def _module_assignments(source: str) -> dict[str, object]:
    """Module-level ``name = <constant>`` assignments (nanoGPT's configuration globals)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    out: dict[str, object] = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except (ValueError, SyntaxError, TypeError):
                out[node.targets[0].id] = ...
    return out


def _without(argv: Sequence[str], names: Iterable[str]) -> list[str]:
    """``argv`` with the options ``names`` removed (``--device=cuda``, ``--device cuda``,
    ``device=cuda``)."""
    names = set(names)
    out: list[str] = []
    skip = False
    for word in argv:
        if skip:
            skip = False
            continue
        key = word.lstrip("-").split("=", 1)[0].replace("-", "_")
        if key in names:
            skip = word.startswith("--") and "=" not in word
            continue
        out.append(word)
    return out


def cpu_arguments(source: str, argv: Sequence[str] = ()) -> list[str] | None:
    """``argv`` changed to run the script on the CPU, in its reader's form: nanoGPT's
    ``--device=cpu --compile=False`` (a configurator global ``compile = True`` is turned off
    too: inductor's CPU compile is minutes), argparse's/click's ``--device cpu``, hydra's
    ``device=cpu``; ``None`` when the script has no device option to set."""
    reader = argv_reader(source)
    if reader is None:
        return None
    if reader == "configurator.py":
        names = _module_assignments(source)
        if "device" not in names:
            return None
        extra = ["--device=cpu"]
        if names.get("compile") is True:
            extra.append("--compile=False")
        return [*_without(argv, ("device", "compile")), *extra]
    if reader == "hydra":
        # the options live in its YAML config; the script reads ``cfg.device``
        if re.search(r"\b\w+\.device\b", source) is None:
            return None
        return [*_without(argv, ("device",)), "device=cpu"]
    option = re.search(r"""['"](--device)['"]|\bdef\s+\w+\([^)]*\bdevice\b""", source)
    if option is None:
        return None
    if reader == "fire" or option.group(1) is None:
        return [*_without(argv, ("device",)), "--device=cpu"]
    return [*_without(argv, ("device",)), "--device", "cpu"]
