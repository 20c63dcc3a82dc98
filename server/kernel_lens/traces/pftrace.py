"""Perfetto protobuf traces (``.pftrace``) into `TraceColumns`: a small protobuf reader.

Written here once the rest works.
"""

from __future__ import annotations

__all__ = ["is_pftrace", "read_pftrace"]


def is_pftrace(path: str) -> bool:
    return path.endswith((".pftrace", ".perfetto-trace", ".pftrace.gz"))


def read_pftrace(path: str):  # type: ignore[no-untyped-def]
    raise NotImplementedError
