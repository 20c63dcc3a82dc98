"""What a user chose for how their code runs, kept across close, restart and Reload Window: the
arguments of each script (``sys.argv[1:]``) and the driver each function takes its inputs from.

One place per script for its arguments: the editor's ``args:`` lens, its palette command and
the CLI read and write the same list, and every run of the script uses it — as itself, in a
Window, as the driver of a function in another file, from ``kernel-lens profile``. A function's
driver is a workspace script (whose arguments follow the script's), a launch configuration
(its own ``args``/``cwd``/``env``, read again at each run), or none (the inputs directive, a
``<name>_inputs()`` factory or the file's own run).

The store is one small JSON file: ``.kernel-lens/run-choices.json`` at the root of a workspace
folder that has a ``.kernel-lens/`` folder (the user's opt-in, as for the history), else
``run-choices.json`` in the cache folder; keys are absolute paths, so one file serves every
workspace. Standard library only; every read is bounded and a damaged file reads as empty.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kernel_lens.wire.paths import atomic_write, cache_root

__all__ = [
    "STORE_NAME",
    "DriverChoice",
    "RunChoices",
    "choices_file",
    "function_key",
    "quietly",
]

STORE_NAME = "run-choices.json"
#: The most of the store read (a few thousand scripts and drivers).
_MAX_BYTES = 4 << 20
#: The most scripts or drivers kept (the oldest dropped first).
_MAX_ENTRIES = 2000
_lock = threading.Lock()


def choices_file(path: str | None = None, roots: Iterable[str] = ()) -> str:
    """The store for ``path``: ``$KERNEL_LENS_RUN_CHOICES``; else
    ``.kernel-lens/run-choices.json`` in the innermost of ``roots`` holding it that has a
    ``.kernel-lens/`` folder, else the cache folder's."""
    named = os.environ.get("KERNEL_LENS_RUN_CHOICES")
    if named:
        return os.path.abspath(named)
    if path is not None:
        file = os.path.abspath(path)
        for root in sorted((os.path.abspath(r) for r in roots), key=len, reverse=True):
            inside = file.startswith(root.rstrip("/") + "/")
            if inside and os.path.isdir(os.path.join(root, ".kernel-lens")):
                return os.path.join(root, ".kernel-lens", STORE_NAME)
    return os.path.join(cache_root(), STORE_NAME)


@dataclass(frozen=True)
class DriverChoice:
    """Where a function's inputs come from.

    Attributes:
        kind: ``script`` (a workspace script; its arguments are the script's own, as set for
            it) or ``launch`` (a launch configuration's program, args, cwd and env).
        driver: the script that runs (absolute).
        argv: a launch configuration's ``args`` (a script's: ``[]``, its own are looked up).
        config: the launch configuration's name.
        cwd: the run's folder (``None``: the script's).
        env: environment variables for the run.
    """

    kind: str
    driver: str
    argv: tuple[str, ...] = ()
    config: str | None = None
    cwd: str | None = None
    env: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The stored form."""
        out: dict[str, Any] = {"kind": self.kind, "driver": self.driver}
        if self.kind == "launch":
            out.update(argv=list(self.argv), config=self.config, cwd=self.cwd, env=dict(self.env))
        return out

    @classmethod
    def from_json(cls, raw: Any) -> DriverChoice | None:
        """A stored choice; ``None`` for anything malformed."""
        if not isinstance(raw, dict) or not isinstance(raw.get("driver"), str):
            return None
        kind = "launch" if raw.get("kind") == "launch" else "script"
        raw_argv = raw.get("argv")
        argv: list[Any] = raw_argv if isinstance(raw_argv, list) else []
        raw_env = raw.get("env")
        env: dict[Any, Any] = raw_env if isinstance(raw_env, dict) else {}
        cwd = raw.get("cwd") if isinstance(raw.get("cwd"), str) else None
        config = raw.get("config") if isinstance(raw.get("config"), str) else None
        return cls(
            kind,
            raw["driver"],
            tuple(str(a) for a in argv),
            config,
            cwd,
            tuple(sorted((str(k), str(v)) for k, v in env.items())),
        )


def function_key(path: str, function: str) -> str:
    """The key of a function's driver: ``/abs/model.py::Block.forward``."""
    return f"{os.path.abspath(path)}::{function}"


class RunChoices:
    """The store (see the module's docstring). Each method reads the file again, so the
    editor and the CLI see each other's changes; writes are atomic.

    Args:
        file: the JSON file (:func:`choices_file`).
    """

    def __init__(self, file: str) -> None:
        self.file = file

    @classmethod
    def for_path(cls, path: str | None, roots: Iterable[str] = ()) -> RunChoices:
        """The store that holds ``path``'s choices."""
        return cls(choices_file(path, roots))

    def _read(self) -> dict[str, Any]:
        try:
            with open(self.file, "rb") as fh:
                raw = fh.read(_MAX_BYTES + 1)
        except OSError:
            return {}
        if len(raw) > _MAX_BYTES:
            return {}
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _update(self, section: str, key: str, value: Any) -> None:
        with _lock:
            data = self._read()
            entries = data.get(section)
            entries = dict(entries) if isinstance(entries, dict) else {}
            entries.pop(key, None)  # re-inserted last: the newest is kept when trimming
            if value is not None:
                entries[key] = value
            while len(entries) > _MAX_ENTRIES:
                entries.pop(next(iter(entries)))
            data[section] = entries
            data["version"] = 1
            os.makedirs(os.path.dirname(self.file) or ".", exist_ok=True)
            atomic_write(self.file, json.dumps(data, indent=1, sort_keys=False))

    def script_args(self, script: str) -> list[str] | None:
        """The arguments set for ``script`` (``None``: never set; ``[]``: set to none)."""
        entries = self._read().get("scripts")
        value = entries.get(os.path.abspath(script)) if isinstance(entries, dict) else None
        if not isinstance(value, list):
            return None
        return [str(a) for a in value]

    def set_script_args(self, script: str, argv: list[str] | None) -> None:
        """Set (``None``: forget) the arguments of ``script``.

        Raises:
            OSError: the store cannot be written.
        """
        value = None if argv is None else [str(a) for a in argv]
        self._update("scripts", os.path.abspath(script), value)

    def driver(self, path: str, function: str) -> DriverChoice | None:
        """The driver chosen for ``function`` of ``path``, if any."""
        entries = self._read().get("drivers")
        raw = entries.get(function_key(path, function)) if isinstance(entries, dict) else None
        return DriverChoice.from_json(raw)

    def drivers_of(self, path: str) -> dict[str, DriverChoice]:
        """Every function of ``path`` that has a driver, by qualified name."""
        entries = self._read().get("drivers")
        prefix = f"{os.path.abspath(path)}::"
        out: dict[str, DriverChoice] = {}
        for key, raw in entries.items() if isinstance(entries, dict) else []:
            if isinstance(key, str) and key.startswith(prefix):
                choice = DriverChoice.from_json(raw)
                if choice is not None:
                    out[key[len(prefix) :]] = choice
        return out

    def set_driver(self, path: str, function: str, choice: DriverChoice | None) -> None:
        """Choose (``None``: clear) the driver of ``function`` of ``path``.

        Raises:
            OSError: the store cannot be written.
        """
        value = None if choice is None else choice.to_json()
        self._update("drivers", function_key(path, function), value)


def quietly(action: Any, *args: Any) -> str | None:
    """Run a store write; the reason it failed (``None``: it did not)."""
    from kernel_lens.wire.paths import write_failure

    try:
        action(*args)
    except OSError as exc:
        return write_failure(exc)
    return None


def _containing(path: str, roots: Iterable[str]) -> list[str]:
    """The roots holding ``path``, innermost first; its folder when none does."""
    file = os.path.abspath(path)
    held = [
        os.path.abspath(r)
        for r in roots
        if r and file.startswith(os.path.abspath(r).rstrip("/") + "/")
    ]
    return sorted(held, key=len, reverse=True) or [os.path.dirname(file)]


def _launch_configs(path: str, roots: Iterable[str]) -> list[Any]:
    from kernel_lens.analysis.drivers import launch_configs

    out: list[Any] = []
    for root in _containing(path, roots):
        out.extend(launch_configs(root))
    return out


def script_arguments(path: str, roots: Iterable[str] = ()) -> tuple[list[str], str | None]:
    """The arguments every run of the script ``path`` gets, and where they come from: the ones
    set for it (``"set"``), else the ``args`` of the first launch configuration whose program it
    is (``"launch configuration “Train”"``), else none (``([], None)``)."""
    roots = list(roots)
    stored = RunChoices.for_path(path, roots).script_args(path)
    if stored is not None:
        return stored, "set"
    file = os.path.abspath(path)
    for config in _launch_configs(path, roots):
        if os.path.abspath(config.program) == file:
            return [str(a) for a in config.args], f"launch configuration “{config.name}”"
    return [], None


def driver_fields(path: str, function: str, roots: Iterable[str] = ()) -> dict[str, Any]:
    """The job fields (``driver``, ``argv``, ``cwd``, ``env``) of the driver chosen for
    ``function`` of ``path``: a script with its arguments as set now, a launch configuration
    as ``launch.json`` says now (as chosen, when it is gone); ``{}`` without one."""
    roots = list(roots)
    choice = RunChoices.for_path(path, roots).driver(path, function)
    if choice is None:
        return {}
    if choice.kind == "launch":
        for config in _launch_configs(choice.driver, roots):
            if config.name == choice.config and config.program == choice.driver:
                return {
                    "driver": config.program,
                    "argv": [str(a) for a in config.args],
                    "cwd": config.cwd,
                    "env": {str(k): str(v) for k, v in config.env.items()},
                }
        return {
            "driver": choice.driver,
            "argv": list(choice.argv),
            "cwd": choice.cwd,
            "env": dict(choice.env),
        }
    argv, _ = script_arguments(choice.driver, roots)
    return {"driver": choice.driver, "argv": argv, "cwd": None, "env": {}}


def driver_label(fields: dict[str, Any], choice: DriverChoice | None = None) -> str:
    """``bench_synth.py --device=cpu`` (a launch configuration's: ``“CPU” (bench.py …)``)."""
    from shlex import quote

    name = os.path.basename(str(fields.get("driver") or ""))
    words = " ".join(quote(str(a)) for a in fields.get("argv") or [])
    shown = f"{name} {words}".strip()
    if choice is not None and choice.kind == "launch" and choice.config:
        return f"“{choice.config}” ({shown})"
    return shown
