"""Record a profile and compare it: the one record-and-compare of the editor and the CLI.

:func:`record_run` puts a successful profile into its function's history (an entry made by
:func:`~kernel_lens.history.entries.make_entry`, with the file's git state) and compares it,
with :func:`kernel_lens.analysis.compare.compare_results`, against the pinned baseline or the
previous run. Blocking (files, ``git``): the language server calls it in a thread.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from kernel_lens.history.entries import git_state, make_entry
from kernel_lens.history.queries import History

__all__ = ["Recorded", "record_run"]


@dataclass(frozen=True)
class Recorded:
    """A profile put into its function's history, and its comparison with a reference run.

    Attributes:
        entry: the stored entry (with its ``id``), or the entry alone when it was not kept.
        baseline_id: the pinned baseline's id after the run was added (``None``: none pinned).
        reference: the run it was compared with (``None``: there was none to compare with).
        comparison: :func:`kernel_lens.analysis.compare.compare_results` of ``reference`` and
            ``entry``, labelled ``baseline`` or ``previous`` (``None`` without a reference).
        warnings: what the store had to report (a damaged store read in part or repaired,
            legacy lines not imported): to be shown once.
    """

    entry: dict[str, Any]
    baseline_id: str | None
    reference: dict[str, Any] | None
    comparison: dict[str, Any] | None
    warnings: tuple[str, ...] = ()


def record_run(
    path: str,
    function: str,
    result: dict[str, Any],
    *,
    text: list[str] | None,
    file_text: str | None,
    compare_with: Literal["auto", "previous", "baseline"] | None = "auto",
    keep: bool = True,
    roots: Iterable[str] | None = None,
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
        roots: the workspace folders whose root may hold ``.kernel-lens`` (by default the
            working directory).

    Raises:
        HistoryError: the history cannot be read or written.
    """
    from kernel_lens.analysis.compare import compare_results

    history = History.default(path, roots)
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
        warnings=tuple(history.notes),
    )
