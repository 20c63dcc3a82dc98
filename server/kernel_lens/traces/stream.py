"""A Chrome trace's events decoded chunk by chunk from the file, never the whole text in memory.

The text is either a private, copy-on-write memory map of the file (plain JSON) or a gzip stream
inflated block by block (``zlib.decompressobj``). The ``traceEvents`` array is cut into chunks of
about ``chunk_bytes`` at the ``}`` that ends an event and the ``,`` ``{`` that start the next;
each chunk is decoded by msgspec in place (the byte before its first event and the byte after its
last are set to ``[`` and ``]`` for the decode, then put back).

Why a cut is always right: chunks are decoded in file order from the array's first event, so a
chunk's text starts where an event starts. If its end were not between two events of the array
(inside a string, or between two objects of an array nested in an event's ``args``), the JSON
of the chunk would end inside a string or with a bracket open, and msgspec refuses it; then an
earlier ``}`` is tried. A decode that succeeds proves the cut. The memory-mapped file is cut
into ``workers`` byte ranges at such candidates; the range before a worker's decodes up to
exactly the worker's first byte, which proves the worker's start the same way (a range that
fails makes the whole reading fall back to one process).

Decoded pages of the map are given back (``madvise(MADV_DONTNEED)``) as the reading goes, so the
resident memory holds a chunk of text, not the file. An unusual layout (no top-level
``traceEvents`` array) raises `UnusualTraceError`: the caller reads the file the old way.
"""

from __future__ import annotations

import mmap
import re
import zlib
from collections.abc import Callable, Iterator
from typing import Any

from kernel_lens.analysis.regular_files import open_regular
from kernel_lens.analysis.trace_columns import max_trace_bytes

__all__ = [
    "CHUNK_BYTES",
    "MappedText",
    "StreamedText",
    "UnusualTraceError",
    "decode_range",
    "find_events",
    "gzip_blocks",
    "range_starts",
]

#: Bytes of JSON decoded at a time (~70k events of a torch trace).
CHUNK_BYTES = 16 << 20
#: Bytes read (or inflated) from a gzip file at a time.
_BLOCK = 4 << 20
#: A header longer than this without the ``traceEvents`` key: not a layout read here.
_MAX_HEAD = 64 << 20
#: Cuts tried for one chunk before giving up on the layout.
_MAX_TRIES = 64

_KEY = re.compile(rb'"traceEvents"[ \t\r\n]*:[ \t\r\n]*\[')
_NEXT = re.compile(rb"[ \t\r\n]*,[ \t\r\n]*\{")
_BOUNDARY = re.compile(rb"\}[ \t\r\n]*,[ \t\r\n]*\{")
_WS = b" \t\r\n"
#: A top-level array of events (a byte-order mark allowed before it).
_ARRAY = re.compile(rb"(?:\xef\xbb\xbf)?[ \t\r\n]*(\[)[ \t\r\n]*\{")


class UnusualTraceError(Exception):
    """The text is not laid out as this reader expects (the caller reads it the old way)."""


class ChunkError(Exception):
    """An event of a chunk the typed records cannot hold (the caller uses the json parser)."""


def gzip_blocks(path: str, block: int = _BLOCK) -> Iterator[bytes]:
    """The inflated text of a gzip file, ``block`` compressed bytes at a time (all members).

    Raises:
        OSError: the file cannot be read. zlib.error: broken gzip.
        EOFError: the stream ends early.
    """
    with open_regular(path) as f:
        inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
        fed = False
        while True:
            data = f.read(block)
            if not data:
                break
            while data:
                fed = True
                # At most CHUNK_BYTES out per call: 4 MiB of a bomb would otherwise inflate to
                # gigabytes in one call, before any bound is checked (issue 39 item 6).
                out = inflater.decompress(data, CHUNK_BYTES)
                if out:
                    yield out
                if inflater.eof:  # a member ended: more may follow
                    data = inflater.unused_data
                    inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
                    fed = False
                    if not data.strip(b"\x00"):
                        data = b""
                else:
                    data = inflater.unconsumed_tail
        if fed and not inflater.eof:
            raise EOFError("compressed file ended before the end-of-stream marker was reached")


def _decode(decoder: Any, buf: Any, lo: int, hi: int) -> list[Any]:
    """Decode ``buf[lo:hi + 1]`` with ``[`` at ``lo`` and ``]`` at ``hi`` (put back after)."""
    before, after = buf[lo], buf[hi]
    buf[lo], buf[hi] = 0x5B, 0x5D
    try:
        with memoryview(buf)[lo : hi + 1] as view:
            return decoder.decode(view)  # type: ignore[no-any-return]
    finally:
        buf[lo], buf[hi] = before, after


def _validation_error() -> type[Exception]:
    import msgspec

    return msgspec.ValidationError


def _cut(decoder: Any, buf: Any, lo: int, limit: int) -> tuple[list[Any], int] | None:
    """The events of the chunk from ``lo`` (the byte before its first ``{``) cut at the last
    provable boundary before ``limit``, and where the next chunk's spare byte is; None when no
    boundary before ``limit`` decodes."""
    import msgspec

    invalid = _validation_error()
    at = limit
    for _ in range(_MAX_TRIES):
        c = buf.rfind(b"}", lo + 1, at)
        if c < 0:
            return None
        m = _NEXT.match(buf, c + 1)
        if m is None:
            at = c
            continue
        try:
            events = _decode(decoder, buf, lo, c + 1)
        except invalid as exc:
            raise ChunkError(str(exc)) from None
        except msgspec.DecodeError:
            at = c
            continue
        return events, m.end() - 2
    raise UnusualTraceError("no event boundary found")


def _last(decoder: Any, buf: Any, lo: int, end: int) -> tuple[list[Any], int]:
    """The last chunk: events from ``lo`` up to the ``]`` closing the array (before ``end``);
    returns them and the index of that ``]``."""
    import msgspec

    invalid = _validation_error()
    at = end
    for _ in range(_MAX_TRIES):
        k = buf.rfind(b"]", lo + 1, at)
        if k < 0:
            break
        j = k - 1
        while j > lo and buf[j] in _WS:
            j -= 1
        if j == lo:  # no event in this chunk: "[ ]"
            return [], k
        if buf[j] != 0x7D:  # }
            at = k
            continue
        try:
            return _decode(decoder, buf, lo, k), k
        except invalid as exc:
            raise ChunkError(str(exc)) from None
        except msgspec.DecodeError:
            at = k
    raise UnusualTraceError("the traceEvents array does not end where expected")


def _array_start(buf: Any, limit: int) -> int:
    """Where a top-level array starts (the Chrome trace format's "JSON Array Format": the
    events alone, no object around them), or -1."""
    m = _ARRAY.match(buf, 0, limit)
    return m.start(1) if m is not None else -1


def _head(buf: Any, limit: int) -> tuple[bytes, int]:
    """The text before the top-level ``"traceEvents"`` key and the index of its ``[`` (for a
    top-level array: no head, and the array's ``[``)."""
    import msgspec

    at = _array_start(buf, limit)
    if at >= 0:
        return b"", at
    m = _KEY.search(buf, 0, limit)
    if m is None:
        raise UnusualTraceError("no traceEvents key near the start")
    head = bytes(buf[: m.start()])
    probe = head.rstrip()
    if probe.endswith(b","):
        probe = probe[:-1]
    try:
        if not isinstance(msgspec.json.decode(probe + b"}"), dict):
            raise UnusualTraceError("traceEvents is not a key of the top-level object")
    except msgspec.DecodeError:
        raise UnusualTraceError("traceEvents is not a key of the top-level object") from None
    return head, m.end() - 1


def metadata(head: bytes, tail: bytes) -> dict[str, Any]:
    """The trace object less its events: the head, an empty array, and the tail.

    Raises:
        UnusualTraceError: it is not a JSON object.
    """
    import msgspec

    if not head:  # a top-level array: nothing around the events
        if tail.strip(_WS):
            raise UnusualTraceError("text after the top-level array")
        return {}
    try:
        doc = msgspec.json.decode(head + b'"traceEvents": []' + tail)
    except msgspec.DecodeError:
        raise UnusualTraceError("the text around traceEvents is not a JSON object") from None
    if not isinstance(doc, dict):
        raise UnusualTraceError("the trace is not a JSON object")
    return doc


class MappedText:
    """A plain JSON file mapped privately (copy-on-write): indexable, writable, never written
    back."""

    def __init__(self, path: str) -> None:
        with open_regular(path) as f:
            self.size = f.seek(0, 2)
            if self.size > max_trace_bytes():
                raise UnusualTraceError("past the bound on a trace (the whole-text path says so)")
            self.map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY) if self.size else None

    def release(self, lo: int, hi: int) -> None:
        """Give back the resident pages of ``[lo, hi)`` (they read back from the file)."""
        if self.map is None or not hasattr(mmap, "MADV_DONTNEED"):
            return
        start = lo - lo % mmap.PAGESIZE
        if hi > start:
            try:
                self.map.madvise(mmap.MADV_DONTNEED, start, hi - start)
            except (OSError, ValueError):
                pass

    def close(self) -> None:
        if self.map is not None:
            self.map.close()


def find_events(text: MappedText) -> tuple[bytes, int]:
    """The head of a mapped trace and the index of its ``traceEvents`` array's ``[``."""
    if text.map is None:
        raise UnusualTraceError("empty file")
    return _head(text.map, min(text.size, _MAX_HEAD))


def range_starts(text: MappedText, first: int, parts: int) -> list[int]:
    """Where ``parts`` byte ranges of the array start (each the byte before an event's ``{``,
    a candidate that the range before it proves); ``first`` is the array's ``[``."""
    assert text.map is not None
    starts = [first]
    for k in range(1, parts):
        at = first + (text.size - first) * k // parts
        m = _BOUNDARY.search(text.map, max(at, starts[-1] + 1))
        if m is None:
            break
        starts.append(m.end() - 2)
    return starts


def decode_range(
    decoder: Any,
    text: MappedText,
    lo: int,
    stop: int | None,
    on_chunk: Callable[[list[Any]], None],
    chunk_bytes: int | None = None,
) -> bytes | None:
    """Decode the events of the mapped text from ``lo`` (the byte before an event's ``{``, or
    the array's ``[``) to the range start ``stop`` (None: to the array's end), a chunk at a time.

    Returns the tail after the array (for the last range), else None.

    Raises:
        UnusualTraceError: a cut could not be proved. ChunkError: an event the typed records
            cannot hold.
    """
    buf = text.map
    assert buf is not None
    chunk_bytes = chunk_bytes or CHUNK_BYTES
    end = text.size if stop is None else stop + 1
    while True:
        if stop is not None and end - lo <= chunk_bytes * 3 // 2:
            # The range's last chunk: it must end exactly at the next range's start.
            c = stop
            while c > lo and (buf[c] in _WS or buf[c] == 0x2C):
                c -= 1
            if buf[c] != 0x7D or _NEXT.match(buf, c + 1) is None:
                raise UnusualTraceError("a range does not start at an event")
            import msgspec

            try:
                events = _decode(decoder, buf, lo, c + 1)
            except _validation_error() as exc:
                raise ChunkError(str(exc)) from None
            except msgspec.DecodeError:
                raise UnusualTraceError("a range does not start at an event") from None
            on_chunk(events)
            text.release(lo, stop)
            return None
        if stop is None and text.size - lo <= chunk_bytes * 3 // 2:
            events, k = _last(decoder, buf, lo, text.size)
            on_chunk(events)
            tail = bytes(buf[k + 1 :])
            text.release(lo, text.size)
            return tail
        got = _cut(decoder, buf, lo, lo + chunk_bytes)
        if got is None:
            # One event longer than a chunk: look further.
            got = _cut(decoder, buf, lo, end)
            if got is None:
                raise UnusualTraceError("no event boundary found")
        events, nxt = got
        on_chunk(events)
        text.release(lo, nxt)
        lo = nxt


class StreamedText:
    """A trace's text arriving in blocks (an inflating gzip stream): its events a chunk at a
    time, keeping only the text not decoded yet."""

    def __init__(self, blocks: Iterator[bytes]) -> None:
        self.blocks = blocks
        self.head = b""
        self.tail = b""

    def chunks(self, decoder: Any, chunk_bytes: int | None = None) -> Iterator[list[Any]]:
        """The decoded chunks, in file order; `head` and `tail` are set when it ends.

        Raises:
            UnusualTraceError, ChunkError: as `decode_range`.
        """
        chunk_bytes = chunk_bytes or CHUNK_BYTES
        buf = bytearray()
        blocks = iter(self.blocks)
        eof = False

        def more() -> bool:
            nonlocal eof
            for block in blocks:
                buf.extend(block)
                return True
            eof = True
            return False

        while True:
            if len(buf) >= 64 or eof:
                if _array_start(buf, len(buf)) >= 0:
                    break
            m = _KEY.search(buf)
            if m is not None:
                break
            if len(buf) > _MAX_HEAD or not more():
                raise UnusualTraceError("no traceEvents key near the start")
        self.head, lo = _head(buf, len(buf))
        del buf[:lo]  # buf[0] is the array's "["
        while True:
            while not eof and len(buf) < chunk_bytes * 3 // 2:
                more()
            if eof:
                events, k = _last(decoder, buf, 0, len(buf))
                self.tail = bytes(buf[k + 1 :])
                yield events
                return
            got = _cut(decoder, buf, 0, chunk_bytes)
            while got is None and not eof:  # an event longer than a chunk
                more()
                got = _cut(decoder, buf, 0, len(buf)) if not eof else None
            if got is None:
                continue  # at the end: the last chunk takes the rest
            events, nxt = got
            del buf[:nxt]
            yield events
