"""The history of profiles: every successful run of a function, kept outside the source tree.

One JSON-lines file per function (by its file's absolute path and qualified name) in
``$KERNEL_LENS_HISTORY`` if set (e.g. ``.kernel-lens/history`` in a workspace, for a user who
opts in), else ``history/`` in Kernel Lens's cache folder (the folder
:class:`kernel_lens.wire.paths.CacheDirs` chooses: ``$KERNEL_LENS_CACHE``, else
``$XDG_CACHE_HOME/kernel-lens``). Functions of different workspaces live in different files, since
their paths differ. Each file holds the last :data:`HISTORY_SIZE` runs; a pinned baseline is named
in a small ``.baseline`` file beside it.

An entry keeps what a later comparison needs and what tells runs apart: time, the function's
text and the file's hash, the git commit and whether the file was dirty, device, versions, an
inputs description, the timing (raw samples thinned to :data:`MAX_SAMPLES` quantiles) and the
per-line ops, kernels and device time. Standard library only (the CLI and the language server
both use it; neither imports torch).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from kernel_lens.wire import paths

__all__ = [
    "HISTORY_SIZE",
    "MAX_SAMPLES",
    "History",
    "HistoryError",
    "Recorded",
    "cache_root",
    "entry_summary",
    "git_state",
    "make_entry",
    "record_run",
    "thin_samples",
]

#: Runs kept per function; the oldest goes first.
HISTORY_SIZE = 50
#: Raw timing samples kept per run (quantiles of the sorted samples beyond this).
MAX_SAMPLES = 1000
#: Seconds a ``git`` call may take before the entry goes without git state.
GIT_TIMEOUT_S = 2.0


class HistoryError(Exception):
    """A run that does not exist, or a history that cannot be read."""


def cache_root() -> Path:
    """Kernel Lens's cache folder (:func:`kernel_lens.wire.paths.cache_root`, the agent's too)."""
    return Path(paths.cache_root())


#: A folder of this name in a file's folder or any folder above it (the workspace, say) opts
#: that tree in: its history is kept in ``.kernel-lens/history`` there, beside the code.
WORKSPACE_FOLDER = ".kernel-lens"


def _history_root(path: str | None = None) -> Path:
    """``$KERNEL_LENS_HISTORY``; else ``.kernel-lens/history`` of the nearest folder above
    ``path`` that has a ``.kernel-lens/`` folder (the user's opt-in); else the cache folder."""
    own = os.environ.get("KERNEL_LENS_HISTORY")
    if own:
        return Path(os.path.abspath(own))
    if path is not None:
        folder = Path(os.path.abspath(path)).parent
        for candidate in (folder, *folder.parents):
            if (candidate / WORKSPACE_FOLDER).is_dir():
                return candidate / WORKSPACE_FOLDER / "history"
    return cache_root() / "history"


def thin_samples(samples: list[float], limit: int = MAX_SAMPLES) -> list[float]:
    """``samples`` if there are at most ``limit``, else ``limit`` evenly spaced quantiles of them
    (the distribution, and so the statistics of a comparison, is kept; the order is not)."""
    if len(samples) <= limit:
        return list(samples)
    ordered = sorted(samples)
    n = len(ordered)
    return [ordered[min(n - 1, int((i + 0.5) * n / limit))] for i in range(limit)]


def git_state(path: str) -> dict[str, Any] | None:
    """``{"commit", "dirty"}`` of the repository holding ``path`` (``dirty``: the file differs
    from the commit), or ``None`` outside a repository or without git."""
    folder = os.path.dirname(os.path.abspath(path))

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", folder, *args],
                capture_output=True,
                text=True,
                timeout=GIT_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if not commit:
        return None
    status = git("status", "--porcelain", "--", os.path.abspath(path))
    return {"commit": commit.strip(), "dirty": bool(status and status.strip())}


def _inputs_text(inputs: Any, path: str | None) -> str | None:
    from kernel_lens.analysis.lens_text import inputs_args_text, inputs_text

    where = inputs_text(inputs, path)
    if where is None:
        return inputs if isinstance(inputs, str) else None
    args = "; ".join(inputs_args_text(inputs))
    return f"{where} · {args}" if args else where


def make_entry(
    result: dict[str, Any],
    *,
    text: list[str] | None = None,
    file_text: str | None = None,
    git: dict[str, Any] | None = None,
    now: datetime.datetime | None = None,
) -> dict[str, Any]:
    """A history entry from a profile result (without ``id``; :meth:`History.add` gives it one).

    Args:
        result: the profile JSON (``function``, ``path``, ``timing``, ``lines``, ``kernels``…).
        text: the function's lines as profiled (default: the lines in ``result``).
        file_text: the whole file as profiled, for its hash.
        git: :func:`git_state` of the file, if known.
        now: the time of the run (default: now, UTC).
    """
    timing = dict(result.get("timing") or {})
    samples = timing.pop("samples_ms", None)
    keep = {
        k: timing[k]
        for k in (
            "median_ms",
            "spread_pct",
            "reps",
            "method",
            "q1_ms",
            "q3_ms",
            "min_ms",
            "max_ms",
            "warning",
            "policy",  # how it was timed, and the GPU's clocks: runs timed differently are
            "clocks",  # not compared (issue 25)
            "graph",
        )  # fmt: skip
        if k in timing
    }
    if isinstance(samples, list) and samples:
        keep["samples_ms"] = thin_samples([float(s) for s in samples])
    when = now or datetime.datetime.now(datetime.UTC)
    lines = (
        text if text is not None else [str(x.get("source", "")) for x in result.get("lines") or []]
    )
    return {
        "time": when.isoformat(timespec="seconds"),
        "path": result.get("path"),
        "function": result.get("function"),
        "first_line": result.get("first_line"),
        "text": list(lines),
        "file_hash": hashlib.sha256(file_text.encode()).hexdigest()[:16] if file_text else None,
        "git": git,
        "device": result.get("device"),
        "device_kind": result.get("device_kind"),
        "versions": result.get("versions") or {},
        "inputs": _inputs_text(result.get("inputs"), result.get("path")),
        "timing": keep,
        "lines": result.get("lines") or [],
        "kernels": result.get("kernels") or [],
        **_memory_kept(result),
        # A result restored from the history (a reopen, a restart) shows its trace while the
        # file is still in the cache, and the same share of time on lines as when it ran.
        **{k: result[k] for k in ("trace_path", "accounting") if result.get(k) is not None},
    }


def _memory_kept(result: dict[str, Any]) -> dict[str, Any]:
    """A profile with memory: each device's peak and its line (the lines keep their own
    allocations); the live-at-peak lists and the timeline are not kept."""
    memory = result.get("memory")
    if not isinstance(memory, dict):
        return {}
    devices = [
        {
            k: dev.get(k)
            for k in (
                "device",
                "label",
                "peak_bytes",
                "peak_line",
                "peak_in_backward",
                "peak_host_line",
            )
        }  # fmt: skip
        for dev in memory.get("devices") or []
    ]
    return {"memory": {"devices": devices, "source": memory.get("source")}}


def entry_summary(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry without its bulky parts (lines, kernels, samples): what a list shows."""
    timing = {k: v for k, v in (entry.get("timing") or {}).items() if k != "samples_ms"}
    return {
        "id": entry["id"],
        "time": entry.get("time"),
        "function": entry.get("function"),
        "path": entry.get("path"),
        "device": entry.get("device"),
        "device_kind": entry.get("device_kind"),
        "git": entry.get("git"),
        "file_hash": entry.get("file_hash"),
        "versions": entry.get("versions") or {},
        "inputs": entry.get("inputs"),
        "timing": timing,
        "kernel_count": sum(
            float(k.get("calls") or 1)
            for line in entry.get("lines") or []
            for op in line.get("ops") or []
            for k in op.get("kernels") or []
            if k.get("kind", "kernel") == "kernel"
        ),
        **(
            {"peak_bytes": {str(d.get("device")): d.get("peak_bytes") for d in memory["devices"]}}
            if isinstance(memory := entry.get("memory"), dict) and memory.get("devices")
            else {}
        ),
    }


def _slug(function: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", function)[:60] or "function"


@dataclass(frozen=True)
class History:
    """The history files under one folder (default: see the module docstring).

    Attributes:
        root: the folder.
        size: runs kept per function.
    """

    root: Path
    size: int = HISTORY_SIZE

    @classmethod
    def default(cls, path: str | None = None) -> History:
        """The history of ``path``'s runs: ``$KERNEL_LENS_HISTORY``, else the opted-in
        ``.kernel-lens/`` folder above the file, else the cache folder (read each time, so
        tests can change it)."""
        return cls(_history_root(path))

    def _file(self, path: str, function: str) -> Path:
        key = hashlib.sha256(f"{os.path.abspath(path)}::{function}".encode()).hexdigest()[:16]
        return self.root / f"{_slug(function)}-{key}.jsonl"

    def entries(self, path: str, function: str) -> list[dict[str, Any]]:
        """The runs of ``function`` in ``path``, oldest first (lines that do not parse are
        skipped: a file cut short by a crash loses one run, not the history)."""
        file = self._file(path, function)
        try:
            raw = file.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise HistoryError(f"cannot read {file}: {exc}") from exc
        out = []
        for line in raw.splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(entry, dict) and "id" in entry:
                out.append(entry)
        return out

    def add(self, path: str, function: str, entry: dict[str, Any]) -> dict[str, Any]:
        """Append a run (given the next id, ``"1"``, ``"2"``…) and drop the oldest beyond
        :attr:`size` (the pinned baseline stays); returns the stored entry."""
        file = self._file(path, function)
        file.parent.mkdir(parents=True, exist_ok=True)
        old = self.entries(path, function)
        number = max((int(e["id"]) for e in old if str(e["id"]).isdigit()), default=0) + 1
        stored = {"id": str(number), **{k: v for k, v in entry.items() if k != "id"}}
        line = json.dumps(stored, separators=(",", ":")) + "\n"
        if len(old) + 1 > self.size:
            # The oldest runs go, but never the pinned baseline.
            pinned = self.baseline_id(path, function)
            drop = len(old) + 1 - self.size
            kept = []
            for e in old:
                if drop > 0 and str(e["id"]) != pinned:
                    drop -= 1
                    continue
                kept.append(e)
            tmp = file.with_suffix(".tmp")
            tmp.write_text(
                "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in kept) + line,
                encoding="utf-8",
            )
            os.replace(tmp, file)
        else:
            with file.open("a", encoding="utf-8") as f:
                f.write(line)
        return stored

    def get(self, path: str, function: str, run: str) -> dict[str, Any]:
        """One run by id (``"7"``), by position from the end (``"-1"`` the latest, ``"-2"`` the
        one before), or ``"baseline"``.

        Raises:
            HistoryError: no such run.
        """
        entries = self.entries(path, function)
        if run == "baseline":
            found = self.baseline(path, function)
            if found is None:
                raise HistoryError(f"{function} has no baseline (Set as Baseline pins one)")
            return found
        if run.startswith("-") and run[1:].isdigit():
            back = int(run[1:])
            if 0 < back <= len(entries):
                return entries[-back]
        for e in entries:
            if str(e["id"]) == run:
                return e
        have = ", ".join(str(e["id"]) for e in entries[-10:]) or "none"
        raise HistoryError(f"{function} has no run {run} (latest runs: {have})")

    def _baseline_file(self, path: str, function: str) -> Path:
        return self._file(path, function).with_suffix(".baseline")

    def baseline_id(self, path: str, function: str) -> str | None:
        """The id of the pinned baseline, if any."""
        try:
            text = self._baseline_file(path, function).read_text(encoding="utf-8").strip()
        except OSError:
            return None
        return text or None

    def baseline(self, path: str, function: str) -> dict[str, Any] | None:
        """The pinned baseline run (``None``: none pinned, or it has left the history)."""
        wanted = self.baseline_id(path, function)
        if wanted is None:
            return None
        return next((e for e in self.entries(path, function) if str(e["id"]) == wanted), None)

    def set_baseline(self, path: str, function: str, run: str | None) -> dict[str, Any] | None:
        """Pin run ``run`` (an id, ``-1``…) as the baseline, or unpin with ``None``; returns the
        pinned entry.

        Raises:
            HistoryError: no such run.
        """
        file = self._baseline_file(path, function)
        if run is None:
            file.unlink(missing_ok=True)
            return None
        entry = self.get(path, function, run)
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(str(entry["id"]) + "\n", encoding="utf-8")
        return entry


@dataclass(frozen=True)
class Recorded:
    """A profile put into its function's history, and its comparison with a reference run.

    Attributes:
        entry: the stored entry (with its ``id``), or the entry alone when it was not kept.
        baseline_id: the pinned baseline's id after the run was added (``None``: none pinned).
        reference: the run it was compared with (``None``: there was none to compare with).
        comparison: :func:`kernel_lens.analysis.compare.compare_results` of ``reference`` and
            ``entry``, labelled ``baseline`` or ``previous`` (``None`` without a reference).
    """

    entry: dict[str, Any]
    baseline_id: str | None
    reference: dict[str, Any] | None
    comparison: dict[str, Any] | None


def record_run(
    path: str,
    function: str,
    result: dict[str, Any],
    *,
    text: list[str] | None,
    file_text: str | None,
    compare_with: Literal["auto", "previous", "baseline"] | None = "auto",
    keep: bool = True,
) -> Recorded:
    """Record a successful profile of ``function`` in ``path`` and compare it with a reference
    run: the one place of the editor's and the CLI's record-and-compare. Blocking (files,
    ``git``).

    Args:
        path: the profiled file (absolute).
        function: its qualified name.
        result: the profile JSON.
        text: the function's lines as profiled (see :func:`make_entry`).
        file_text: the whole file as profiled, for its hash.
        compare_with: ``auto`` (the pinned baseline, else the previous run: the editor's),
            ``previous``, ``baseline``, or ``None`` (no comparison).
        keep: add the run to the history (``False``: only compare it).

    Raises:
        OSError, HistoryError: the history cannot be read or written.
    """
    from kernel_lens.analysis.compare import compare_results

    history = History.default(path)
    reference: dict[str, Any] | None = None
    label = "previous"
    if compare_with == "auto":
        baseline = history.baseline(path, function)
        previous = next(reversed(history.entries(path, function)), None)
        reference, label = (baseline, "baseline") if baseline is not None else (previous, label)
    elif compare_with == "baseline":
        reference, label = history.baseline(path, function), "baseline"
    elif compare_with == "previous":
        reference = next(reversed(history.entries(path, function)), None)
    entry = make_entry(result, text=text, file_text=file_text, git=git_state(path))
    stored = history.add(path, function, entry) if keep else entry
    comparison = (
        None
        if reference is None
        else compare_results(reference, stored, reference=label, reference_id=str(reference["id"]))
    )
    return Recorded(
        entry=stored,
        baseline_id=history.baseline_id(path, function),
        reference=reference,
        comparison=comparison,
    )
