"""Odd and hostile Chrome trace files (issue 26 item 5), written on demand into a folder: the
CLI and the editor's trace view must accept and refuse the same ones, and refuse the hostile
ones (a gzip bomb, a 10**6-deep JSON) with a clear ``trace`` error, never a crash."""

from __future__ import annotations

import gzip
import json
import os
import zlib
from pathlib import Path
from typing import Any

KERNEL = {"ph": "X", "cat": "kernel", "name": "k", "ts": 1.0, "dur": 2.0, "pid": 0, "tid": 7,
          "args": {"stream": 7, "correlation": 1}}  # fmt: skip
OP = {"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 0.5, "dur": 3.0, "pid": 1, "tid": 1,
      "args": {"External id": 3}}  # fmt: skip


def _events(*events: Any) -> str:
    return json.dumps({"traceEvents": list(events)})


#: name → file text (str) or bytes; whether a reader should accept it is decided by comparing
#: the two paths, except for the hostile ones (``HOSTILE``), which must be refused.
ODD: dict[str, str | bytes] = {
    "ok.json": _events(KERNEL, OP),
    "missing_ts.json": _events(KERNEL, {"ph": "X", "name": "a", "dur": 1}),
    "missing_dur.json": _events(KERNEL, {"ph": "X", "name": "a", "ts": 1}),
    "string_ts.json": _events(KERNEL, {**OP, "ts": "12"}),
    "string_dur.json": _events(KERNEL, {**OP, "dur": "3"}),
    "negative_dur.json": _events(KERNEL, {**OP, "dur": -3}),
    "nan_and_infinity.json": '{"traceEvents": [{"ph": "X", "name": "a", "ts": NaN, "dur": 1},'
    ' {"ph": "X", "name": "b", "ts": 1, "dur": Infinity}]}',
    "events_not_objects.json": _events(1, "x", None, [1], KERNEL),
    "no_events.json": _events(),
    "events_not_a_list.json": json.dumps({"traceEvents": {"a": 1}}),
    "a_bare_list.json": json.dumps([KERNEL, OP]),
    "args_not_an_object.json": _events({**KERNEL, "args": [1, 2]}, {**OP, "args": "x"}),
    "ids_as_objects.json": _events({**KERNEL, "pid": {"a": 1}, "tid": [1, 2]}),
    "huge_numbers.json": _events({**KERNEL, "ts": 1e300, "dur": 1e300}, OP),
    "names_not_strings.json": _events({**KERNEL, "name": 5, "cat": None}, {**OP, "name": None}),
    "no_phase.json": _events({k: v for k, v in KERNEL.items() if k != "ph"}),
    "booleans.json": _events({**KERNEL, "ts": True, "dur": False}),
    "odd_args.json": _events(
        {
            **KERNEL,
            "args": {
                "stream": {"x": 1},
                "device": [1],
                "correlation": "a",
                "External id": "b",
                "bytes": "c",
            },
        }
    ),  # fmt: skip
    "big_ints.json": '{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1,'
    ' "pid": 1000000000000000000000000000, "tid": -99999999999999999999999999}]}',
    "no_category.json": '{"traceEvents": [], "traceEvents": [{"ph": "X", "name": "a", "ts": 1,'
    ' "dur": 1}]}',
    "empty.json": "",
    "bom.json": "\ufeff" + _events(KERNEL),
    "latin1.json": b'{"traceEvents": [{"ph": "X", "name": "\xe9", "ts": 1, "dur": 1}]}',
    "trailing_garbage.json": _events(KERNEL) + " garbage",
    "zero_dur.json": _events({**KERNEL, "dur": 0}),
    "device_properties_odd.json": json.dumps({"traceEvents": [KERNEL], "deviceProperties": "x"}),
    "truncated.json.gz": gzip.compress(_events(KERNEL).encode())[:-10],
    "deep.json": '{"traceEvents": [' + "[" * 10**6 + "]" * 10**6 + "]}",
    "deep_args.json": '{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1, "args": '
    + '{"a": ' * 100_000
    + "1"
    + "}" * 100_000
    + "}]}",
}

#: Must be refused, with a ``trace`` error (the bomb is written by :func:`gzip_bomb`).
HOSTILE = ("deep.json", "deep_args.json", "bomb.json.gz")


def gzip_bomb(path: Path, inflated: int) -> Path:
    """A ``.json.gz`` of a few hundred KB that inflates to ``inflated`` bytes of valid JSON
    (written a chunk at a time: the bomb is never held in memory here)."""
    step = 1 << 20
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip framing
    with open(path, "wb") as f:
        f.write(packer.compress(b'{"traceEvents": [], "pad": "'))
        left = inflated
        zeros = b"0" * step
        while left > 0:
            f.write(packer.compress(zeros[: min(step, left)]))
            left -= step
        f.write(packer.compress(b'"}'))
        f.write(packer.flush())
    return path


def write_odd_traces(folder: Path, bomb_bytes: int = 300 * 2**20) -> list[Path]:
    """Write every odd file (and the bomb) into ``folder``; their paths, sorted."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, text in ODD.items():
        path = folder / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        paths.append(path)
    paths.append(gzip_bomb(folder / "bomb.json.gz", bomb_bytes))
    return sorted(paths)


def special_files(folder: Path) -> dict[str, Path]:
    """A FIFO, a link to /dev/zero and a directory, each named like a trace."""
    fifo = folder / "x.pt.trace.json"
    os.mkfifo(fifo)
    zero = folder / "zero.pt.trace.json"
    zero.symlink_to("/dev/zero")
    gz = folder / "zero.pt.trace.json.gz"
    gz.symlink_to("/dev/zero")
    directory = folder / "dir.pt.trace.json"
    directory.mkdir()
    pf = folder / "fifo.pftrace"
    os.mkfifo(pf)
    return {"fifo": fifo, "zero": zero, "zero-gz": gz, "directory": directory, "pftrace": pf}
