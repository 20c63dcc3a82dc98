"""`kernel_lens.analysis.regular_files`: only regular files open, never waiting on a FIFO, and a
read is bounded (issue 45 item 4)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from kernel_lens.analysis.regular_files import (
    NotRegularFileError,
    check_regular,
    open_regular,
    read_regular,
)


def test_a_regular_file_and_a_link_to_one_open(tmp_path: Path) -> None:
    f = tmp_path / "t.json"
    f.write_bytes(b"{}")
    link = tmp_path / "link.json"
    link.symlink_to(f)
    for p in (f, link):
        assert check_regular(p).st_size == 2
        with open_regular(p) as fh:
            assert fh.read() == b"{}"
        assert read_regular(p, 2) == b"{}"


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "directory", "dev-null"])
def test_anything_else_is_refused_at_once(tmp_path: Path, kind: str) -> None:
    p = tmp_path / "x.pt.trace.json"
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "directory":
        p.mkdir()
    else:
        p.symlink_to("/dev/zero" if kind == "dev-zero" else "/dev/null")
    start = time.monotonic()
    with pytest.raises(NotRegularFileError) as caught:
        check_regular(p)
    assert "not a regular file" in str(caught.value)
    if kind != "directory":  # (a directory's open is EISDIR on some systems: an OSError too)
        with pytest.raises(NotRegularFileError):
            open_regular(p)
        with pytest.raises(NotRegularFileError):
            read_regular(p, 10)
    # a FIFO's open would block for ever; 10 s leaves room for a starved run (`make test` runs
    # tests/unit at idle priority beside the editor tests)
    assert time.monotonic() - start < 10.0
    assert isinstance(caught.value, OSError)


def test_a_read_past_its_bound_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "big"
    p.write_bytes(b"x" * 11)
    with pytest.raises(NotRegularFileError, match="larger than 10 bytes"):
        read_regular(p, 10)
    assert read_regular(p, 11) == b"x" * 11


def test_a_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        open_regular(tmp_path / "gone")
