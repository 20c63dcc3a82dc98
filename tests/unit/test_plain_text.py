"""Lens and hover text for editors other than VS Code (``analysis/plain_text.py``)."""

from __future__ import annotations

import json
import re
import urllib.parse

from kernel_lens.analysis.plain_text import (
    command_links,
    inlay_labels,
    plain_markdown,
    plain_title,
)
from kernel_lens.analysis.safe_text import md_text


def test_icons_go_and_a_warning_stays_readable() -> None:
    assert plain_title("$(play) Profile") == "Profile"
    assert plain_title("$(sync~spin) Profiling…") == "Profiling…"
    assert (
        plain_title("$(watch) 0.192 ms ±0.3% $(warning) busy machine · 1 kernel")
        == "0.192 ms ±0.3% ⚠ busy machine · 1 kernel"
    )
    assert plain_title("no icons, $ and (parens) kept") == "no icons, $ and (parens) kept"


def _link(title: str, command: str, args: object) -> str:
    """As ``lsp/hover.py`` makes them."""
    encoded = urllib.parse.quote(json.dumps([args]), safe="")
    return f"[{md_text(title)}](command:{command}?{encoded})"


def test_command_links_become_their_labels() -> None:
    text = (
        "**Kernel Lens** · not profiled yet · "
        + _link("Profile a[0](b)", "kernelLens.profile", {"uri": "file:///w.py", "function": "f"})
        + " `f`"
    )
    assert command_links(text) == [("Profile a\\[0\\](b)", "kernelLens.profile")]
    plain = plain_markdown(text)
    assert "command:" not in plain
    assert re.search(r"(?<!\\)\]\(", plain) is None  # no link can form: the ] stays escaped
    assert plain.startswith("**Kernel Lens** · not profiled yet · Profile a\\[0\\](b) `f`")
    assert plain.endswith(
        "*Kernel Lens's actions are in the code actions of the function's lines.*"
    )


def test_markdown_without_links_is_unchanged() -> None:
    text = "**Kernel Lens** · `x ** 2` → `aten::pow` [not a command](https://example.com)"
    assert plain_markdown(text) == text


def test_inlay_labels_per_measured_line() -> None:
    result = {
        "device_kind": "cpu",
        "timing": {"median_ms": 0.0444},
        "lines": [
            {
                "line": 6,
                "ops": [
                    {
                        "name": "aten::mul",
                        "cpu_us": 30.0,
                        "device_us": 0.0,
                        "calls": 1,
                        "kernels": [],
                        "dispatch": [],
                    }
                ],
            },  # fmt: skip
            {
                "line": 7,
                "ops": [
                    {
                        "name": "aten::relu",
                        "cpu_us": 10.0,
                        "device_us": 0.0,
                        "calls": 1,
                        "kernels": [],
                        "dispatch": [],
                    }
                ],
            },  # fmt: skip
            {"line": 8, "ops": []},
        ],
    }
    labels = inlay_labels(result)
    assert sorted(labels) == [6, 7]
    assert labels[6].startswith("75% of 44.4 µs") and "aten::mul" in labels[6]
    assert labels[7].startswith("25% of 44.4 µs") and "aten::relu" in labels[7]
    assert all("$(" not in label for label in labels.values())
