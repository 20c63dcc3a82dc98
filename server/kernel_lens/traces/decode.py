"""msgspec's typed records of a Chrome trace: only the fields the summary and timeline read.

Imported only when msgspec is installed (`kernel_lens.traces.read.read_columns` falls back
without it).
Every other field (CPU ops' ``Input Dims`` and ``Concrete Inputs``, kernels' grid and registers,
flow events' ids, …) is skipped by the decoder, never made into Python objects.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import msgspec

__all__ = [
    "DECODER",
    "EVENTS_DECODER",
    "EXACT_EVENTS_DECODER",
    "LAZY_DECODER",
    "UNSET",
    "DecodeError",
]

UNSET = msgspec.UNSET
DecodeError = msgspec.DecodeError


class Args(msgspec.Struct, gc=False):
    """The ``args`` an event's columns come from."""

    external_id: float | None = msgspec.field(default=None, name="External id")
    #: the 2021 schema's spelling (runtime calls and device events of PyTorch 1.8 and 1.9)
    external_id_2021: float | None = msgspec.field(default=None, name="external id")
    correlation: float | None = None
    stream: int | str | None | msgspec.UnsetType = msgspec.UNSET
    device: int | str | None | msgspec.UnsetType = msgspec.UNSET
    bytes: float | None = None


class Event(msgspec.Struct, gc=False):
    """One event of ``traceEvents``."""

    ph: str | None = None
    cat: str | None = ""
    name: str | None = ""
    ts: float | None = None
    dur: float | None = None
    pid: int | str | None = None
    tid: int | str | None = None
    args: Args | None = None


class Trace(msgspec.Struct, gc=False):
    """The trace object."""

    traceEvents: list[Event]  # noqa: N815 (the file's key)
    deviceProperties: Any = None  # noqa: N815
    computeProperties: Any = None  # noqa: N815 (mid-2021's name for deviceProperties)


DECODER: msgspec.json.Decoder[Trace] = msgspec.json.Decoder(Trace)


class LazyTrace(msgspec.Struct, gc=False):
    """The trace object with its events left as raw JSON (views of the text, decoded later)."""

    traceEvents: list[msgspec.Raw]  # noqa: N815
    deviceProperties: Any = None  # noqa: N815
    computeProperties: Any = None  # noqa: N815


#: The trace with its events as raw JSON, so they can be decoded a chunk at a time.
LAZY_DECODER: msgspec.json.Decoder[LazyTrace] = msgspec.json.Decoder(LazyTrace)
#: A JSON array of events.
EVENTS_DECODER: msgspec.json.Decoder[list[Event]] = msgspec.json.Decoder(list[Event])


class ExactEvent(Event, gc=False):
    """An event whose ``ts`` keeps every digit of the file (epoch-scale microseconds with
    nanosecond fractions are past a float's precision): the base is subtracted before the
    conversion to float (`kernel_lens.traces.read`)."""

    ts: Decimal | None = None  # type: ignore[assignment]


#: A JSON array of events with exact ``ts``.
EXACT_EVENTS_DECODER: msgspec.json.Decoder[list[ExactEvent]] = msgspec.json.Decoder(
    list[ExactEvent]
)
