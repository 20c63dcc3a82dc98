"""A suggested ``# kernel-lens: inputs = …`` directive that runs: the candidates built from the
function's type hints, defaults and names (``analysis/suggest_inputs.py``) are each called
once, in the namespace the script's run left, and the first that runs is offered, saying so
(``checked: it runs``); when none does, the suggestion says it does not run yet and why, so a
user never pastes a directive believed good that fails on its first line.

Bounded: each call gets a few seconds (an interval timer in the main thread), all of them
together a small part of what is left of the job's time.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
import types
from collections.abc import Callable, Iterator
from typing import Any

from kernel_lens.agent.deadline import remaining_s
from kernel_lens.analysis.functions import FunctionInfo
from kernel_lens.analysis.suggest_inputs import Candidate, candidates, params_of

__all__ = ["checked_directive", "unchecked_directive"]

#: Seconds one candidate may run; all of them together at most CHECK_TOTAL_S.
CALL_LIMIT_S = 5.0
CHECK_TOTAL_S = 12.0


class _TooLong(BaseException):
    """Raised into a candidate's call that outlived its limit (never seen by the user)."""


def _note(candidate: Candidate) -> str:
    if not candidate.guessed:
        return ""
    if len(candidate.guessed) == 1:
        return f"a guess from the name ({candidate.guessed[0]})"
    return f"a guess from the names ({', '.join(candidate.guessed)})"


def unchecked_directive(info: FunctionInfo, text: str | None = None) -> str:
    """The first candidate, as a directive line, without running anything (the name-based
    suggestion; a guess says so). One parameter: its name after the directive."""
    from kernel_lens.analysis.suggest_inputs import Param

    params = (
        params_of(text, info)
        if text is not None
        else [
            Param(p)
            for p in _plain_params(info)  # no text: the names alone
        ]
    )
    first = candidates(params)[0]
    return first.directive(_comment(first, params, None))


def _plain_params(info: FunctionInfo) -> list[str]:
    names = [p for p in info.params if not p.startswith("*")]
    if info.is_method and names and not any(d.endswith("staticmethod") for d in info.decorators):
        names = names[1:]
    return names


def _comment(candidate: Candidate, params: list[Any], checked: str | None) -> str:
    needed = [p for p in params if not p.has_default]
    parts: list[str] = []
    if len(needed) == 1 and candidate.expr.startswith("(") and candidate.expr != "()":
        parts.append(needed[0].name)
    note = _note(candidate)
    if note:
        if parts and len(candidate.guessed) == 1:
            parts[-1] += ", a guess from the name"
        else:
            parts.append(note)
    if checked:
        parts.append(checked)
    return "; ".join(parts)


def checked_directive(
    info: FunctionInfo,
    text: str,
    path: str,
    module: types.ModuleType | None,
    *,
    resolve: Callable[[types.ModuleType, FunctionInfo, str, str], Any],
    normalize: Callable[[Any], tuple[tuple[Any, ...], dict[str, Any]]],
) -> str:
    """The first candidate that runs once in ``module`` (the namespace the script's run left),
    as a directive line saying it was checked; else the first, saying it does not run and why.

    Args:
        resolve: ``(module, info, path, text) -> callable`` (the target stage's: a method is
            bound to an instance, or the reason it cannot be is raised).
        normalize: a directive's value → ``(args, kwargs)`` (the target stage's).

    Nothing is raised: a failure to check is said in the directive's comment."""
    params = params_of(text, info)
    devices = ["cpu"]
    with contextlib.suppress(Exception):
        import torch

        if torch.cuda.is_available():
            devices = ["cuda", "cpu"]
    tried: list[Candidate] = []
    for device in devices:
        tried.extend(candidates(params, device=device))
    first = tried[0]
    if module is None:
        return first.directive(_comment(first, params, "not checked"))
    try:
        fn = resolve(module, info, path, text)
    except Exception as exc:  # noqa: BLE001 - said in the suggestion instead
        why = f"not checked: {_short(exc)}"
        return first.directive(_comment(first, params, why))
    left = remaining_s()
    total = CHECK_TOTAL_S if left is None else max(0.0, min(CHECK_TOTAL_S, 0.25 * left[0]))
    start = time.monotonic()
    failure: str | None = None
    for candidate in tried:
        spent = time.monotonic() - start
        if spent >= total:
            break
        problem = _try(candidate, fn, module, normalize, min(CALL_LIMIT_S, total - spent))
        if problem is None:
            shaped = "; the shapes are a guess" if candidate.shape is not None else ""
            return candidate.directive(_comment(candidate, params, "checked: it runs" + shaped))
        failure = failure or problem
    why = f"does not run as is ({failure}): edit it" if failure else "not checked (no time left)"
    return first.directive(_comment(first, params, why))


def _try(
    candidate: Candidate,
    fn: Callable[..., Any],
    module: types.ModuleType,
    normalize: Callable[[Any], tuple[tuple[Any, ...], dict[str, Any]]],
    limit_s: float,
) -> str | None:
    """``None`` when the candidate's inputs evaluate and the call returns; else why not."""
    try:
        with _time_limit(limit_s):
            value = eval(candidate.expr, dict(module.__dict__))  # noqa: S307 - our own text
            args, kwargs = normalize(value)
            out = fn(*args, **kwargs)
            if hasattr(out, "__await__") or hasattr(out, "__next__"):
                close = getattr(out, "close", None)
                if callable(close):
                    close()
        return None
    except _TooLong:
        return f"still running after {limit_s:.0f} s"
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the reason is the answer
        return _short(exc)


def _short(exc: BaseException) -> str:
    from kernel_lens.wire.errors import ProfileError

    said = exc.message if isinstance(exc, ProfileError) else str(exc)
    text = said.strip().splitlines()[0] if said.strip() else ""
    if isinstance(exc, ProfileError):
        return text[:87] + "…" if len(text) > 90 else text
    if len(text) > 90:
        text = text[:87] + "…"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the block after ``seconds`` (main thread only: elsewhere the job's own
    timeout is the bound)."""
    if threading.current_thread() is not threading.main_thread() or seconds <= 0:
        yield
        return

    def fire(signum: int, frame: Any) -> None:
        raise _TooLong

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
