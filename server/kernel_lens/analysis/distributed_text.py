"""A distributed profile in words: the lens texts, the hover's table of ranks, the CLI's lines
(:mod:`kernel_lens.analysis.distributed` makes the numbers)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kernel_lens.analysis.report_text import format_us
from kernel_lens.analysis.safe_text import md_text

__all__ = [
    "comm_text",
    "distributed_line_text",
    "distributed_lines",
    "distributed_summary",
    "line_ranks_text",
    "ranks_hover",
]


def comm_text(comm: Mapping[str, Any]) -> str:
    """``all_reduce 1.2 ms · overlapped 80% with compute`` (rank 0's collective, per call)."""
    text = f"{comm['name']} {format_us(float(comm.get('us') or 0.0))}"
    overlap = comm.get("overlap_pct")
    if overlap is not None:
        text += f" · overlapped {overlap:.0f}% with compute"
    return text


def line_ranks_text(line: Mapping[str, Any]) -> str | None:
    """``rank 0 · slowest rank 1 (+12%) · skew 20.1 ms`` for a line of a distributed profile,
    or ``None`` (not one, or nothing ran on it)."""
    ranks = line.get("ranks")
    if not isinstance(ranks, Mapping) or not ranks.get("slowest_us"):
        return None
    text = "rank 0"
    slowest = int(ranks.get("slowest_rank") or 0)
    us = ranks.get("us") or []
    if slowest != 0 and us and float(us[0]) > 0:
        extra = 100.0 * (float(ranks["slowest_us"]) - float(us[0])) / float(us[0])
        text += f" · slowest rank {slowest} (+{extra:.0f}%)"
    elif slowest != 0:
        text += f" · slowest rank {slowest}"
    skews = [float(c.get("max_skew_us") or 0.0) for c in line.get("comm") or []]
    if skews and max(skews) > 0:
        text += f" · skew {format_us(max(skews))}"
    return text


def distributed_line_text(line: Mapping[str, Any]) -> str | None:
    """What a line of a distributed profile adds to its lens: its collectives
    (``all_reduce 1.2 ms · overlapped 80% with compute``), rank 0 against the slowest rank and
    the skew; ``None`` for a line of a single-process profile."""
    parts = [comm_text(c) for c in line.get("comm") or []]
    ranks = line_ranks_text(line)
    if ranks:
        parts.append(ranks)
    return "  |  ".join(parts) or None


def distributed_summary(result: Mapping[str, Any]) -> str | None:
    """``2 ranks · CPU (gloo) · straggler rank 1 · skew ≤ 20.1 ms``, or ``None``."""
    dist = result.get("distributed")
    if not isinstance(dist, Mapping):
        return None
    parts = [str(dist.get("label") or f"{dist.get('nproc')} ranks")]
    if dist.get("straggler") is not None:
        parts.append(f"straggler rank {dist['straggler']}")
    if dist.get("max_skew_us"):
        parts.append(f"skew ≤ {format_us(float(dist['max_skew_us']))}")
    return " · ".join(parts)


def _pct(value: Any) -> str:
    return "–" if value is None else f"{float(value):.0f}%"


def ranks_hover(result: Mapping[str, Any], line_no: int) -> str | None:
    """Markdown: every rank's time on ``line_no``, its collectives, and the rank's numbers."""
    dist = result.get("distributed")
    line = next((x for x in result.get("lines") or [] if x.get("line") == line_no), None)
    if not isinstance(dist, Mapping) or line is None or not line.get("ranks"):
        return None
    per = {int(p["rank"]): p for p in dist.get("per_rank") or []}
    comm = line.get("comm") or []
    head = "| rank | line | " + " | ".join(md_text(c["name"]) for c in comm)
    head += " | " if comm else ""
    head += "overlap | idle | wait |"
    rows = [head, "|" + "---|" * (5 + len(comm))]
    for r, us in enumerate(line["ranks"].get("us") or []):
        cells = [f"{r}" + (" (slowest)" if r == line["ranks"].get("slowest_rank") else ""),
                 format_us(float(us))]  # fmt: skip
        cells += [format_us(float((c.get("rank_us") or [0.0] * (r + 1))[r])) for c in comm]
        p = per.get(r, {})
        cells += [_pct(p.get("overlap_pct")), _pct(p.get("idle_pct")),
                  format_us(float(p.get("wait_us") or 0.0))]  # fmt: skip
        rows.append("| " + " | ".join(cells) + " |")
    title = distributed_summary(result) or ""
    return f"**{md_text(title)}**\n\n" + "\n".join(rows)


def distributed_lines(result: Mapping[str, Any]) -> list[str]:
    """The CLI's lines after the profile: per rank, the straggler, each collective's skew."""
    dist = result.get("distributed")
    if not isinstance(dist, Mapping):
        return []
    out = [f"distributed: {distributed_summary(result)}"]
    if dist.get("note"):
        out.append(f"  note: {dist['note']}")
    for p in dist.get("per_rank") or []:
        median = p.get("median_ms")
        out.append(
            f"  rank {p['rank']}: "
            + (f"{median:.3f} ms median · " if median is not None else "")
            + f"comm {format_us(float(p.get('comm_us') or 0.0))} · "
            f"overlap {_pct(p.get('overlap_pct'))} · idle {_pct(p.get('idle_pct'))} · "
            f"waited {format_us(float(p.get('wait_us') or 0.0))} in collectives"
            + ("  ← straggler" if p["rank"] == dist.get("straggler") else "")
        )
    for line in result.get("lines") or []:
        for c in line.get("comm") or []:
            out.append(
                f"  line {line['line']}: {comm_text(c)} · skew {format_us(c['max_skew_us'])}"
            )
    return out
