"""How a light whole-run profile is shown (analysis/light_text.py): labelled light, a kernel's
name kept inert in a lens and a hover, and a failure's actions fitting its cause."""

from __future__ import annotations

from kernel_lens.analysis.light_lines import LIGHT_LABEL
from kernel_lens.analysis.light_text import (
    light_error_row,
    light_file_lenses,
    light_hover,
    light_line_title,
    light_summary_title,
)
from kernel_lens.wire.lsp import CMD_PROFILE, CMD_PROFILE_SCRIPT_WINDOW

URI = "file:///w/train.py"
ROW = {
    "line": 3,
    "source": "y = x @ w",
    "kernel_us": 1500.0,
    "launches": 30,
    "kernels": [
        {"name": "ampere_sgemm_128x64_nn", "us": 1200.0, "count": 30},
        {"name": "evil_$(zap)_[link](command:x)`", "us": 300.0, "count": 30},
    ],
}
RESULT = {
    "mode": "light",
    "path": "/w/train.py",
    "device": "NVIDIA H200",
    "files": {"/w/train.py": [ROW]},
    "total_kernel_us": 6000.0,
    "other_us": 4500.0,
    "launches": 60,
    "label": LIGHT_LABEL,
    "wall_s": 3.25,
}


def test_the_titles_say_light_the_time_its_share_and_the_kernels() -> None:
    assert light_summary_title(RESULT) == (
        "$(pulse) light · whole run 3.2 s · 6 ms of kernels on 1 line · NVIDIA H200"
    )
    assert light_line_title(ROW, 6000.0) == (
        "$(pulse) light · 1.5 ms (25%) · 30 launches · ampere_sgemm_128x64_nn +1"
    )


def test_a_kernels_name_draws_no_icon_and_forms_no_link() -> None:
    row = {**ROW, "kernels": list(reversed(ROW["kernels"]))}
    title = light_line_title(row, 6000.0)
    assert "$(zap)" not in title and "$\u200b(zap)" in title
    hover = light_hover(RESULT, ROW, run_uri=URI)
    # the name is a code span, where no link forms
    assert "| `` evil_$(zap)_[link](command:x)` `` |" in hover
    assert hover.count("](command:k") == 2  # the two links the server made
    assert "(command:kernelLens.profile?" in hover
    assert f"](command:{CMD_PROFILE_SCRIPT_WINDOW}?" in hover
    assert "no ATen op names" in hover


def test_lines_whose_text_changed_lose_their_lens() -> None:
    kept = light_file_lenses(RESULT, [ROW], ["", "", "y = x @ w"], run_uri=URI, head=None)
    assert [x.line0 for x in kept] == [2]
    gone = light_file_lenses(RESULT, [ROW], ["", "", "y = x @ w2"], run_uri=URI, head=None)
    assert gone == []


def test_a_failures_actions_fit_its_cause() -> None:
    no_gpu = {
        "kind": "unsupported",
        "message": "the light profile records CUDA kernels: no CUDA GPU",
    }
    head, again = light_error_row(URI, "train.py", no_gpu)
    assert head.title.startswith("$(warning) Light profile: needs a CUDA GPU")
    actions = head.arguments[0]["actions"]  # type: ignore[index]
    assert actions[0] == {
        "label": "Profile Script Instead",
        "command": CMD_PROFILE,
        "arguments": [{"uri": URI, "script": True}],
    }
    assert "Run on a GPU Machine…" in [a["label"] for a in actions]
    assert again.title == "$(pulse) Light"
    starved = {
        "kind": "unsupported",
        "message": "the light profile recorded no GPU kernels on a CUDA run: "
        "NVTX_INJECTION64_PATH=/x/libcupti.so loads another CUPTI client into this process",
    }
    head, _ = light_error_row(URI, "train.py", starved)
    assert head.title.startswith("$(warning) Light profile failed: unsupported — the light")
    labels = [a["label"] for a in head.arguments[0]["actions"]]  # type: ignore[index]
    assert labels == ["Show Output"], labels
