"""The agent's light job (agent/stages/light_run.py): Proton's lines in the wire's shape, each
with the text its line had when it ran (the buffer for the script, the disk for the others), and
the child's own error passed on as it is."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernel_lens.agent.stages.light_run import light_rows, run_light
from kernel_lens.wire.errors import ProfileError
from kernel_lens.wire.jobs import LightRequest


def test_rows_sorted_with_their_lines_text(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text("saved line 1\nsaved line 2\n")
    model = tmp_path / "model.py"
    model.write_text("import torch\n    return x * 2\n")
    kernel = {"name": "k", "us": 1.5, "count": 2}
    files = {
        str(script): {
            "2": {"kernel_us": 1.5, "launches": 2, "kernels": [kernel]},
            "1": {"kernel_us": 3.0, "launches": 1, "kernels": []},
        },
        str(model): {"2": {"kernel_us": 4.0, "launches": 8, "kernels": [kernel]}},
    }
    rows = light_rows(files, str(script), "buffer line 1\n  buffer line 2\n")
    assert [(r["line"], r["source"]) for r in rows[str(script)]] == [
        (1, "buffer line 1"),
        (2, "buffer line 2"),
    ]
    assert rows[str(model)] == [
        {"line": 2, "source": "return x * 2", "kernel_us": 4.0, "launches": 8,
         "kernels": [{"name": "k", "us": 1.5, "count": 2}]},
    ]  # fmt: skip


def test_the_childs_error_is_the_jobs(tmp_path: Path) -> None:
    """Without CUDA (this machine) the child says so, and the job raises it as it is."""
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is here")
    script = tmp_path / "s.py"
    script.write_text("print('never run')\n")
    with pytest.raises(ProfileError) as err:
        run_light(LightRequest(path=str(script), timeout=120), "print('the buffer')\n")
    assert err.value.kind == "unsupported" and "no CUDA GPU" in err.value.message
