"""Perfetto protobuf traces (``.pftrace``, what torch's CUPTI-monitor profiler backend writes
for ``export_chrome_trace("….pftrace")``) into `TraceColumns`, with a small protobuf reader.

Only the fields the summary and the timeline read are decoded; every other field is skipped by
its wire type. Field numbers from Perfetto's protos (``protos/perfetto/trace/trace.proto``,
``trace_packet.proto``, ``track_event/track_event.proto``, ``track_descriptor.proto``,
``process_descriptor.proto``, ``thread_descriptor.proto``, ``interned_data.proto``,
``debug_annotation.proto``):

- ``Trace.packet = 1``;
- ``TracePacket``: ``timestamp = 8``, ``trusted_packet_sequence_id = 10``, ``track_event =
  11``, ``interned_data = 12``, ``sequence_flags = 13`` (``SEQ_INCREMENTAL_STATE_CLEARED =
  1``), ``track_descriptor = 60``;
- ``TrackEvent``: ``category_iids = 3``, ``debug_annotations = 4``, ``type = 9``
  (``TYPE_SLICE_BEGIN = 1``, ``TYPE_SLICE_END = 2``, ``TYPE_INSTANT = 3``), ``name_iid =
  10``, ``track_uuid = 11``, ``categories = 22``, ``name = 23``;
- ``TrackDescriptor``: ``uuid = 1``, ``name = 2``, ``process = 3``, ``thread = 4``,
  ``parent_uuid = 5``; ``ProcessDescriptor.pid = 1``; ``ThreadDescriptor``: ``pid = 1``,
  ``tid = 2``;
- ``InternedData``: ``event_categories = 1``, ``event_names = 2``,
  ``debug_annotation_names = 3`` (each ``iid = 1``, ``name = 2``);
- ``DebugAnnotation``: ``name_iid = 1``, ``bool_value = 2``, ``uint_value = 3``,
  ``int_value = 4``, ``double_value = 5``, ``string_value = 6``, ``name = 10``.

A slice is a ``TYPE_SLICE_BEGIN`` and the next ``TYPE_SLICE_END`` on its track (a stack per
track); it becomes a complete event (``ph`` "X") with the begin's name, first category and debug
annotations as ``args`` (so ``External id``, ``correlation``, ``stream``, ``device`` and
``bytes`` read as in a Chrome trace), its timestamps in µs (Perfetto's are ns), its track's
process as ``pid`` and its thread (or, for a track without one, its name) as ``tid``. Interned
names are kept per packet sequence. Then `columns_from_trace` applies the Chrome trace's rules.
"""

from __future__ import annotations

import os
import struct
import zlib
from typing import Any

from kernel_lens.analysis.regular_files import open_regular
from kernel_lens.analysis.trace_columns import (
    TraceColumns,
    TraceError,
    columns_from_trace,
    max_trace_bytes,
)

__all__ = ["is_pftrace", "read_pftrace", "trace_from_pftrace"]

_SUFFIXES = (".pftrace", ".perfetto-trace", ".pftrace.gz", ".perfetto-trace.gz", ".pb", ".pb.gz")


def _first_bytes(path: str, n: int = 64) -> bytes | None:
    """The first ``n`` bytes of the file's content (inflated when it is gzip), or ``None``."""
    try:
        with open_regular(path) as f:
            head = f.read(4096)
    except OSError:
        return None
    if head[:2] == b"\x1f\x8b":
        try:
            return zlib.decompressobj(zlib.MAX_WBITS | 16).decompress(head, n)
        except zlib.error:
            return None
    return head[:n]


def is_pftrace(path: str) -> bool:
    """Whether ``path`` holds a Perfetto protobuf trace: a file whose content starts as JSON
    (``{`` or ``[``) never does, whatever its name (a JSON trace named ``.pftrace`` is read as
    JSON, issue 39 item 11); otherwise its suffix says."""
    head = _first_bytes(path)
    if head:
        text = head.lstrip(b" \t\r\n").removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n")
        if text[:1] in (b"{", b"["):
            return False
    return path.lower().endswith(_SUFFIXES)


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if i >= len(buf):
            raise TraceError("truncated protobuf varint")
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, i
        shift += 7
        if shift > 63:
            raise TraceError("protobuf varint too long")


def fields(buf: bytes) -> list[tuple[int, int, Any]]:
    """The ``(field number, wire type, value)`` of a protobuf message: varints as ints,
    length-delimited fields as ``bytes``, fixed64/fixed32 as their raw ints.

    Raises:
        TraceError: not a well-formed message.
    """
    out: list[tuple[int, int, Any]] = []
    i, n = 0, len(buf)
    while i < n:
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 2:
            length, i = _varint(buf, i)
            if i + length > n:
                raise TraceError("truncated protobuf field")
            value, i = buf[i : i + length], i + length
        elif wire == 1:
            if i + 8 > n:
                raise TraceError("truncated protobuf field")
            value, i = struct.unpack_from("<Q", buf, i)[0], i + 8
        elif wire == 5:
            if i + 4 > n:
                raise TraceError("truncated protobuf field")
            value, i = struct.unpack_from("<I", buf, i)[0], i + 4
        else:
            raise TraceError(f"protobuf wire type {wire} is not supported")
        if number == 0:
            raise TraceError("protobuf field number 0")
        out.append((number, wire, value))
    return out


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _text(value: Any) -> str:
    return bytes(value).decode("utf-8", "replace")


def _annotation(buf: bytes, names: dict[int, str]) -> tuple[str | None, Any]:
    name: str | None = None
    value: Any = None
    for number, wire, v in fields(buf):
        if number == 10 and wire == 2:
            name = _text(v)
        elif number == 1 and wire == 0:
            name = names.get(v)
        elif number == 2 and wire == 0:
            value = bool(v)
        elif number == 3 and wire == 0:
            value = v
        elif number == 4 and wire == 0:
            value = _signed(v)
        elif number == 5 and wire == 1:
            value = struct.unpack("<d", struct.pack("<Q", v))[0]
        elif number == 6 and wire == 2:
            value = _text(v)
    return name, value


_Interned = tuple[dict[int, str], dict[int, str], dict[int, str]]


def _intern(tables: _Interned, buf: bytes) -> None:
    """An ``InternedData``'s categories, event names and annotation names into ``tables``."""
    for kind, _, entry in fields(buf):
        if kind in (1, 2, 3):
            iid, label = 0, ""
            for f, _, x in fields(entry):
                if f == 1:
                    iid = x
                elif f == 2:
                    label = _text(x)
            tables[kind - 1][iid] = label


def _track(buf: bytes) -> dict[str, Any]:
    """A ``TrackDescriptor``: its ``uuid``, ``name``, ``parent`` and ``pid``/``tid``."""
    track: dict[str, Any] = {}
    for f, fw, x in fields(buf):
        if f == 1 and fw == 0:
            track["uuid"] = x
        elif f == 2 and fw == 2:
            track["name"] = _text(x)
        elif f == 5 and fw == 0:
            track["parent"] = x
        elif f in (3, 4) and fw == 2:
            for g, _, y in fields(x):
                if g == 1:
                    track["pid"] = _signed(y)
                elif g == 2 and f == 4:
                    track["tid"] = _signed(y)
    return track


def _packet(
    packet: bytes, interned: dict[int, _Interned], tracks: dict[int, dict[str, Any]]
) -> tuple[int | None, int, bytes | None]:
    """A ``TracePacket``'s timestamp, sequence and track event; its interned strings and track
    descriptor are kept in ``interned`` and ``tracks``."""
    timestamp: int | None = None
    sequence = 0
    event: bytes | None = None
    for n, w, v in fields(packet):
        if n == 8 and w == 0:
            timestamp = v
        elif n == 10 and w == 0:
            sequence = v
        elif n == 13 and w == 0 and v & 1:
            interned[sequence] = ({}, {}, {})
        elif n == 11 and w == 2:
            event = v
        elif n == 12 and w == 2:
            _intern(interned.setdefault(sequence, ({}, {}, {})), v)
        elif n == 60 and w == 2:
            track = _track(v)
            if "uuid" in track:
                tracks[track["uuid"]] = track
    return timestamp, sequence, event


def _track_event(
    event: bytes, tables: _Interned
) -> tuple[int, int, str, list[str], dict[str, Any]]:
    """A ``TrackEvent``'s type, track uuid, name, categories and debug annotations."""
    cats, names, arg_names = tables
    kind, uuid, name, categories = 0, 0, "", []
    args: dict[str, Any] = {}
    for n, w, v in fields(event):
        if n == 9 and w == 0:
            kind = v
        elif n == 11 and w == 0:
            uuid = v
        elif n == 23 and w == 2:
            name = _text(v)
        elif n == 10 and w == 0:
            name = names.get(v, name)
        elif n == 22 and w == 2:
            categories.append(_text(v))
        elif n == 3 and w == 0:
            categories.append(cats.get(v, ""))
        elif n == 4 and w == 2:
            key, value = _annotation(v, arg_names)
            if key is not None:
                args[key] = value
    return kind, uuid, name, categories, args


def _owner(tracks: dict[int, dict[str, Any]], uuid: int) -> tuple[Any, Any]:
    """The ``pid`` and ``tid`` of a track's events: its process (or its nearest ancestor's),
    and its thread or else its name."""
    track = tracks.get(uuid, {})
    pid, tid, seen = track.get("pid"), track.get("tid"), 0
    parent = track.get("parent")
    while pid is None and parent is not None and seen < 64:
        up = tracks.get(parent, {})
        pid, parent, seen = up.get("pid"), up.get("parent"), seen + 1
    if tid is None:
        tid = track.get("name", uuid)
    return (pid if pid is not None else uuid), tid


def trace_from_pftrace(data: bytes) -> dict[str, Any]:
    """A Perfetto protobuf trace as a Chrome trace object (``traceEvents`` of complete events).

    Raises:
        TraceError: not a Perfetto trace.
    """
    tracks: dict[int, dict[str, Any]] = {}
    # Interned strings per packet sequence: categories, event names, annotation names.
    interned: dict[int, _Interned] = {}
    open_slices: dict[int, list[dict[str, Any]]] = {}
    slices: list[tuple[int, dict[str, Any]]] = []  # (track uuid, event)
    packets = 0
    for number, wire, packet in fields(data):
        if number != 1 or wire != 2:
            raise TraceError("not a Perfetto trace: a top-level field other than packets")
        packets += 1
        timestamp, sequence, event = _packet(packet, interned, tracks)
        if event is None or timestamp is None:
            continue
        tables = interned.get(sequence, ({}, {}, {}))
        kind, uuid, name, categories, args = _track_event(event, tables)
        stack = open_slices.setdefault(uuid, [])
        if kind == 1:  # TYPE_SLICE_BEGIN
            chrome = {"ph": "X", "cat": categories[0] if categories else "", "name": name,
                      "ts": timestamp / 1000.0, "args": args}  # fmt: skip
            stack.append(chrome)
            slices.append((uuid, chrome))
        elif kind == 2 and stack:  # TYPE_SLICE_END
            begun = stack.pop()
            begun["dur"] = timestamp / 1000.0 - begun["ts"]
    if packets == 0:
        raise TraceError("not a Perfetto trace: no packets")
    events = []
    for uuid, chrome in slices:
        if "dur" not in chrome:
            continue  # never ended: not a complete event
        chrome["pid"], chrome["tid"] = _owner(tracks, uuid)
        events.append(chrome)
    return {"traceEvents": events}


def read_pftrace(path: str) -> TraceColumns:
    """A ``.pftrace`` file (or its gzip) as columns.

    Raises:
        TraceError: the file is missing, unreadable, or not a Perfetto trace.
    """
    try:
        with open_regular(path) as f:
            size = os.fstat(f.fileno()).st_size
            if size > max_trace_bytes():
                raise TraceError(f"trace file {path} is past the bound on a trace ({size:,} bytes)")
            data = f.read(size + 1)
    except FileNotFoundError:
        raise TraceError(f"trace file not found: {path}") from None
    except OSError as exc:
        raise TraceError(f"cannot read trace file {path}: {exc.strerror or exc}") from None
    if data[:2] == b"\x1f\x8b":
        try:
            # bounded as a JSON trace's gzip is: a gzip bomb stops at the bound
            inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
            data = inflater.decompress(data, max_trace_bytes() + 1)
            if len(data) > max_trace_bytes() or inflater.unconsumed_tail:
                raise TraceError(f"trace file {path} inflates past the bound on a trace")
        except (OSError, EOFError, zlib.error) as exc:
            raise TraceError(f"trace file {path} is not valid gzip: {exc}") from None
    try:
        trace = trace_from_pftrace(data)
    except TraceError as exc:
        raise TraceError(f"{path}: {exc}") from None
    return columns_from_trace(trace)
