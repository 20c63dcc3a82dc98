"""User files are read as Python reads them (PEP 263 coding lines, a UTF-8 BOM) by every stage
that reads one, and a file that cannot be read or decoded is a clear error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kernel_lens.agent.engine import Engine
from kernel_lens.agent.stages import ncu as ncu_stage
from kernel_lens.agent.usercode import read_source
from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.jobs import NcuRequest
from kernel_lens.wire.results import NcuResult

LATIN1 = "# -*- coding: latin-1 -*-\nLABEL = 'café'\n\n\ndef f():\n    return LABEL\n"


def test_a_coding_line_is_honoured(tmp_path: Path) -> None:
    path = tmp_path / "latin.py"
    path.write_bytes(LATIN1.encode("latin-1"))
    assert read_source(str(path)) == LATIN1


def test_a_bom_is_dropped_and_newlines_are_universal(tmp_path: Path) -> None:
    path = tmp_path / "bom.py"
    path.write_bytes(b"\xef\xbb\xbfx = 'd\xc3\xa9j\xc3\xa0'\r\ny = 2\r\n")
    assert read_source(str(path)) == "x = 'déjà'\ny = 2\n"


def test_undecodable_text_is_a_syntax_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.py"
    path.write_bytes(b"x = 'caf\xe9'\n")  # latin-1 bytes without a coding line
    with pytest.raises(ProfileError) as err:
        read_source(str(path))
    assert err.value.kind == "syntax" and "cannot decode bad.py" in err.value.message


def test_an_unknown_coding_is_a_syntax_error(tmp_path: Path) -> None:
    path = tmp_path / "odd.py"
    path.write_bytes(b"# -*- coding: no-such-codec -*-\nx = 1\n")
    with pytest.raises(ProfileError) as err:
        read_source(str(path))
    assert err.value.kind == "syntax"


def test_a_missing_file_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(ProfileError) as err:
        read_source(str(tmp_path / "nope.py"))
    assert err.value.kind == "not-found" and "cannot read" in err.value.message


def test_the_ncu_method_reads_the_file_with_its_coding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "latin.py"
    path.write_bytes(LATIN1.encode("latin-1"))
    seen: dict[str, Any] = {}

    def fake_run_ncu(path: str, text: str, function: str, **kwargs: Any) -> NcuResult:
        seen.update(path=path, text=text, function=function, **kwargs)
        return {
            "report_path": kwargs["report_dir"] + "/r.ncu-rep",
            "set": "basic",
            "reader": "csv",
            "kernels": [],
            "ncu_log": "",
        }

    monkeypatch.setattr(ncu_stage, "run_ncu", fake_run_ncu)
    monkeypatch.setenv("KERNEL_LENS_CACHE", str(tmp_path / "cache"))
    result = Engine().ncu(NcuRequest(path=str(path), function="f", timeout=5))
    assert seen["text"] == LATIN1 and seen["path"] == str(path)
    assert seen["report_dir"] == str(tmp_path / "cache" / "ncu") and seen["timeout"] == 5
    assert result["report_path"] == str(tmp_path / "cache" / "ncu" / "r.ncu-rep")
