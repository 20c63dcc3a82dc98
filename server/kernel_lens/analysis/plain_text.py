"""Lens, hover and inlay-hint text for editors other than VS Code (Neovim, Helix, Emacs, Zed).

VS Code draws ``$(icon)`` markup in a lens title as an icon and follows ``command:`` links in a
hover; other editors show both as raw text. These pure functions turn the server's titles and
Markdown into what any client can show, and give each profiled line its inlay-hint text.
"""

from __future__ import annotations

import re
from typing import Any

from kernel_lens.analysis.compare import line_delta
from kernel_lens.analysis.lens_text import line_lens_title, line_shares, share_text

__all__ = ["command_links", "inlay_labels", "plain_markdown", "plain_title"]

#: A codicon in a VS Code label: ``$(name)``, ``$(name~spin)``.
_ICON = re.compile(r"\$\([a-z0-9-]+(?:~[a-z]+)?\)")
#: The icons whose meaning the text needs, as a character any editor shows.
_ICON_TEXT = {"$(warning)": "⚠"}
#: A command link the server made (``hover._command_link``): its label is Markdown-escaped
#: (no unescaped ``]``), its arguments percent-encoded (no ``)``).
_COMMAND_LINK = re.compile(r"\[((?:\\.|[^\]\\])*)\]\(command:([^)?\s]*)(?:\?[^)\s]*)?\)")


def plain_title(title: str) -> str:
    """``title`` without VS Code's ``$(icon)`` markup (``$(warning)`` becomes ``⚠``), spaces
    collapsed: ``$(watch) 0.19 ms ±0.3% $(warning) busy`` → ``0.19 ms ±0.3% ⚠ busy``."""
    text = _ICON.sub(lambda m: _ICON_TEXT.get(m.group(), ""), title)
    return re.sub(r"\s{2,}", " ", text).strip()


def command_links(markdown: str) -> list[tuple[str, str]]:
    """The ``(label, command)`` of each ``command:`` link in ``markdown``, in order."""
    return [(m.group(1), m.group(2)) for m in _COMMAND_LINK.finditer(markdown)]


def plain_markdown(markdown: str) -> str:
    """``markdown`` for a client that follows no ``command:`` link: each such link becomes its
    label (still escaped) and a last line says where those actions are (the code actions on the
    function); ``$(icon)`` markup goes as in :func:`plain_title`."""
    found = False

    def label(m: re.Match[str]) -> str:
        nonlocal found
        found = True
        return m.group(1)

    text = _COMMAND_LINK.sub(label, markdown)
    text = _ICON.sub(lambda m: _ICON_TEXT.get(m.group(), ""), text)
    if found:
        text += "\n\n*Kernel Lens's actions are in the code actions of the function's lines.*"
    return text


def inlay_labels(result: dict[str, Any]) -> dict[int, str]:
    """Each measured line's hint (1-based line as measured → text), as its lens reads without
    the icons: the kernels or ops, their time, the line's share, what changed since the
    reference run — ``vectorized_elementwise_kernel 188 µs`` on CUDA,
    ``aten::pow 38% of 44.4 µs`` on the CPU."""
    cuda = result.get("device_kind") == "cuda"
    timing = result.get("timing") or {}
    median_ms = timing.get("median_ms")
    shares = line_shares(result) if isinstance(median_ms, int | float) and median_ms > 0 else {}
    labels: dict[int, str] = {}
    for line in result.get("lines") or []:
        no = int(line["line"])
        share = shares.get(no)
        title = line_lens_title(
            line,
            cuda=cuda,
            share=share_text(share, float(median_ms)) if share is not None and median_ms else None,
            memory_first=not (result.get("memory") or {}).get("auto"),
        )
        delta = line_delta(result, no)
        if delta:
            title = f"{title} · {delta}" if title else delta
        if title:
            labels[no] = plain_title(title)
    return labels
