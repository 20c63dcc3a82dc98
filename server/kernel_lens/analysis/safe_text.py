"""Every string that came from a file or a stored run is data (issue 45 items 3, 6, 8, 10).

One helper per place a string is shown:

- `md_text`: plain text in Markdown (a hover): every character that can start a link, an
  image, HTML or a code span is backslash-escaped, so none can be formed (nor an autolink:
  ``http\\://``), and line breaks become spaces (no new block);
- `md_code`: a code span whose content can never end the span early (a fence longer than any
  backtick run inside) nor break the paragraph (line breaks become spaces);
- `link_safe`: text for a notification, a progress title or message (``window/showMessage``,
  ``$/progress``), which VS Code scans for ``[text](target)`` links: every ``](`` is split
  (``] (``) so no link can be formed, line breaks become spaces;
- `terminal_safe`: text for a terminal (the CLI's text output): escape sequences (CSI, OSC,
  DCS…) and C0/C1 control characters (but ``\\n`` and ``\\t``) are removed, bidi controls shown
  visibly as ``<U+202E>``.

All of them also replace bidi controls (U+202A–U+202E, U+2066–U+2069) with a visible
``<U+…>``: a right-to-left override in a device name never reverses the rest of a line.
"""

from __future__ import annotations

import re

__all__ = ["BIDI", "link_safe", "md_code", "md_fence", "md_text", "terminal_safe"]

#: The bidirectional embedding, override and isolate controls.
BIDI = frozenset(chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A)))
_BIDI_RE = re.compile("[" + "".join(sorted(BIDI)) + "]")
#: What can form a link, an image, HTML or a code span inline: ``[ ]`` (a link or an image
#: needs them), ``< >`` (HTML, autolinks), ``&`` (entities), backticks, the escape itself; and
#: a bare URL's ``://`` or ``www.`` (GFM autolinks). Parentheses, ``!``, ``_``… are left as
#: written: without ``[ ]`` they form no link.
_MD_SPECIAL = re.compile(r"([\\`\[\]<>&])|(:)(?=//)|(?<=www)(\.)", re.I)
_LINE_BREAKS = re.compile(r"[\r\n\u0085\u2028\u2029]+")
#: C0 (but tab), DEL and C1 controls: never shown raw anywhere.
_CONTROLS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
#: Terminal escape sequences: CSI (ESC [ … final, or the 8-bit CSI), OSC / DCS / SOS / PM / APC
#: strings up to their terminator (BEL, ESC \\, ST) or the end, and two-byte ESC sequences.
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
)
#: What the terminal keeps: tab and newline; every other control goes.
_TERMINAL_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _visible_bidi(text: str) -> str:
    return _BIDI_RE.sub(lambda m: f"<U+{ord(m.group()):04X}>", text)


def _one_line(text: str) -> str:
    return _CONTROLS.sub("", _LINE_BREAKS.sub(" ", _visible_bidi(text)))


def md_text(value: object) -> str:
    """``value`` as plain text inside Markdown: no link, image, HTML or formatting can form."""
    return _MD_SPECIAL.sub(lambda m: "\\" + m.group(), _one_line(str(value)))


def md_code(value: object) -> str:
    """``value`` as a Markdown code span (links and HTML are not parsed inside one)."""
    text = _one_line(str(value)).replace("\t", " ")
    runs = [len(m) for m in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def link_safe(value: object) -> str:
    """``value`` for a notification or a progress title/message: no ``[text](target)`` link
    can be formed, one line.

    A link needs ``]`` right before ``(`` (VS Code's notification links and Markdown's alike,
    and VS Code honours no backslash escape there): a zero-width space follows every ``]``, so
    the text reads as written and links nothing. The extension does the same
    (``extension/errorText.ts:inert``); both are idempotent, so the two layers agree."""
    return re.sub("\\](?!\u200b)", "]\u200b", _one_line(str(value)))


def terminal_safe(value: object) -> str:
    """``value`` for a terminal: escape sequences and control characters (but ``\\n``, ``\\t``)
    removed, bidi controls shown as ``<U+…>``."""
    text = _ESCAPES.sub("", str(value))
    return _visible_bidi(_TERMINAL_CONTROLS.sub("", text))


def md_fence(lines: list[str], info: str = "text") -> list[str]:
    """``lines`` as a fenced code block that no line of them can close early (the fence is
    longer than any backtick run inside); bidi controls shown, other controls removed."""
    body = [_CONTROLS.sub("", _visible_bidi(x.replace("\r", ""))) for x in lines]
    runs = [len(m) for x in body for m in re.findall(r"`{3,}|~{3,}", x)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return [f"{fence}{info}", *body, fence]
