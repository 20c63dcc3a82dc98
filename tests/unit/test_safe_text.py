"""`kernel_lens.analysis.safe_text` on hostile strings (issue 45 items 3, 6, 8): no Markdown link,
image or HTML forms in a hover, no link in a notification, no escape sequence reaches a
terminal; and the hover and error Markdown built from a crafted stored run show it as text."""

from __future__ import annotations

import re
from typing import Any

import pytest

from kernel_lens.analysis.error_actions import error_markdown
from kernel_lens.analysis.lens_text import hover_markdown
from kernel_lens.analysis.safe_text import link_safe, md_code, md_fence, md_text, terminal_safe

HOSTILE = [
    "[x](command:workbench.action.terminal.new?%5B%5D)",
    "![i](http://evil.example/p.png)",
    "<img src=x onerror=alert(1)>",
    "a`b``c [l](command:x)",
    "`[l](command:x)`",
    "line\n\n[x](command:y)\r\n# heading",
    "<https://evil.example>",
    "https://evil.example www.evil.example",
    "*bold* _em_ &amp; &#91;",
    "\u202egnp.exe",
]

#: A Markdown link or image, or an HTML tag, as a renderer would find it: an unescaped ``[``
#: … ``](``, an unescaped ``<`` followed by a letter or ``/``, a bare URL.
_LINK = re.compile(r"(?<!\\)\[[^\]]*(?<!\\)\]\(")
_HTML = re.compile(r"(?<!\\)<[a-zA-Z/!]")
_AUTOLINK = re.compile(r"https?://|www\.")


def _outside_code(markdown: str) -> str:
    """``markdown`` with its code spans (any fence length) removed."""
    out, i = [], 0
    while i < len(markdown):
        if markdown[i] == "`" and (i == 0 or markdown[i - 1] != "\\"):
            j = i
            while j < len(markdown) and markdown[j] == "`":
                j += 1
            fence = markdown[i:j]
            end = markdown.find(fence, j)
            while end != -1 and (markdown[end + len(fence) : end + len(fence) + 1] == "`"):
                end = markdown.find(fence, end + len(fence) + 1)
            if end == -1:
                out.append(markdown[i:])
                break
            i = end + len(fence)
            continue
        out.append(markdown[i])
        i += 1
    return "".join(out)


def _assert_inert(markdown: str) -> None:
    text = _outside_code(markdown)
    assert not _LINK.search(text), markdown
    assert not _HTML.search(text), markdown
    assert not _AUTOLINK.search(text), markdown
    assert "\u202e" not in markdown


@pytest.mark.parametrize("value", HOSTILE)
def test_md_text_forms_nothing(value: str) -> None:
    out = md_text(value)
    _assert_inert(out)
    assert "\n" not in out and "\r" not in out
    # the text itself is kept: removing the escapes gives it back (on one line)
    plain = re.sub(r"\\(.)", r"\1", out)
    assert plain == re.sub(r"[\r\n]+", " ", value).replace("\u202e", "<U+202E>")


@pytest.mark.parametrize("value", HOSTILE)
def test_md_code_is_one_span_on_one_line(value: str) -> None:
    out = md_code(value)
    assert "\n" not in out and "\r" not in out
    assert _outside_code(out) == ""  # nothing outside the one span
    fence = re.match(r"`+", out)
    assert fence is not None
    inner = out[len(fence.group()) : -len(fence.group())]
    assert fence.group() not in inner  # no backtick run inside can close it


def test_md_fence_cannot_be_closed_from_inside() -> None:
    lines = ["ok", "```", "[x](command:y)", "````more"]
    fenced = md_fence(lines)
    fence = fenced[0].removesuffix("text")
    assert len(fence) == 5 and fenced[-1] == fence
    assert all(not x.startswith(fence) for x in fenced[1:-1])


@pytest.mark.parametrize("value", HOSTILE)
def test_link_safe_forms_no_notification_link(value: str) -> None:
    out = link_safe(value)
    # VS Code's notification link (its regex, with no escapes honoured) and Markdown's
    assert not re.search(r"\[([^\]]+)\]\(((?:https?://|command:|file:)[^)\s]+)", out)
    assert not _LINK.search(out)
    assert "\n" not in out


def test_link_safe_keeps_a_plain_name() -> None:
    assert link_safe("model.pt.trace.json.gz") == "model.pt.trace.json.gz"
    made = link_safe("[Details](command:x).pt.trace.json")
    assert made == "[Details]\u200b(command:x).pt.trace.json"  # reads the same
    assert link_safe(made) == made  # as the extension's `inert`: applying it twice is once
    assert link_safe("profile f (nothing was run)") == "profile f (nothing was run)"


@pytest.mark.parametrize(
    "value",
    [
        "\x1b]52;c;ZWNobyBwd25lZA==\x07name",  # OSC 52 clipboard write
        "\x1b]0;pwned title\x07name",  # window title
        "\x1b[2Jname",  # clear screen
        "\x1b]8;;http://evil.example\x1b\\name\x1b]8;;\x1b\\",  # OSC 8 hyperlink
        "\x9b2Jname",  # 8-bit CSI
        "\x9d0;t\x9cname",  # 8-bit OSC
        "na\x00\x07\x08\rme",
    ],
)
def test_terminal_safe_strips_escapes(value: str) -> None:
    out = terminal_safe(value)
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", out), repr(out)
    assert "name" in out
    assert "pwned" not in out and "evil" not in out


def test_terminal_safe_keeps_newlines_tabs_and_shows_bidi() -> None:
    assert terminal_safe("a\tb\nc") == "a\tb\nc"
    assert terminal_safe("x\u202ey\u2066z") == "x<U+202E>y<U+2066>z"
    assert terminal_safe("aten::mm → kernel<4, f>") == "aten::mm → kernel<4, f>"


def _hostile_result(value: str) -> dict[str, Any]:
    return {
        "function": "f",
        "device": value,
        "device_kind": "cuda",
        "profiled_runs": 3,
        "timing": {
            "median_ms": 1.0,
            "spread_pct": 1.0,
            "reps": 10,
            "method": "cuda-events",
            "warning": value,
            "policy": {"text": value, "nvml": value},
        },
        "inputs": {"source": "factory", "label": value, "args": [{"name": value}]},
        "lines": [
            {
                "line": 2,
                "source": value,
                "ops": [
                    {
                        "name": value,
                        "dispatch": [value],
                        "device_us": 1.0,
                        "cpu_us": 1.0,
                        "calls": 1,
                        "kernels": [{"name": value, "device_us": 1.0, "calls": 1}],
                    }
                ],
            }
        ],
    }


@pytest.mark.parametrize("value", HOSTILE)
def test_a_crafted_run_hovers_as_text(value: str) -> None:
    text = hover_markdown(_hostile_result(value), 2)
    assert text is not None
    _assert_inert(text)


@pytest.mark.parametrize("value", HOSTILE)
def test_a_crafted_error_hovers_as_text(value: str) -> None:
    error = {
        "kind": value,
        "message": f"boom\n```\n{value}\n```\n{value}",
        "suggested_directive": value,
        "traceback": None,
    }
    text = error_markdown(error, function="f", path=None, links=[])
    _assert_inert(text)
