"""Draws media/icon.png (128×128): a lens over a kernel timeline. Pure Python (zlib + struct).

Run: python scripts/draw_icon.py [OUT.png] [SIZE]. Shapes are computed at 4× and averaged down,
so edges are anti-aliased without an imaging library.
"""

from __future__ import annotations

import math
import struct
import sys
import zlib
from pathlib import Path

SS = 4  # supersampling factor

Color = tuple[int, int, int, int]


def _rounded_rect(x: float, y: float, size: float, radius: float) -> bool:
    cx = min(max(x, radius), size - radius)
    cy = min(max(y, radius), size - radius)
    return (x - cx) ** 2 + (y - cy) ** 2 <= radius**2


def _segment_distance(px: float, py: float, ax: float, ay: float, bx: float, by: float) -> float:
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)))
    return math.hypot(px - (ax + t * dx), py - (ay + t * dy))


def _pixel(x: float, y: float) -> Color:
    """The colour at (x, y) in a 128-unit square."""
    if not _rounded_rect(x, y, 128, 26):
        return (0, 0, 0, 0)
    # Background: a vertical gradient of deep blue.
    t = y / 128
    color: Color = (int(14 + 10 * t), int(42 + 18 * t), int(76 + 30 * t), 255)
    lens_cx, lens_cy, lens_r = 56.0, 54.0, 33.0
    d = math.hypot(x - lens_cx, y - lens_cy)
    inside = d < lens_r - 4
    if inside:
        color = (20, 70, 110, 255)
        # Kernel bars on a timeline, as the report draws them.
        bars = [
            (31, 66, 10, (78, 201, 176)),
            (44, 56, 10, (78, 201, 176)),
            (57, 40, 10, (255, 176, 59)),
            (70, 50, 10, (78, 201, 176)),
        ]
        for bx, top, width, rgb in bars:
            if bx <= x <= bx + width and top <= y <= 76:
                color = (*rgb, 255)
    if lens_r - 4 <= d <= lens_r + 4:
        color = (236, 241, 247, 255)  # the lens's rim
    if _segment_distance(x, y, 80, 78, 104, 102) <= 7:
        color = (236, 241, 247, 255)  # the handle
    return color


def render(size: int) -> bytes:
    """RGBA rows of the icon at ``size``×``size``, PNG-filtered (filter byte 0 per row)."""
    scale = 128 / size
    rows = bytearray()
    for j in range(size):
        rows.append(0)
        for i in range(size):
            acc = [0, 0, 0, 0]
            for sj in range(SS):
                for si in range(SS):
                    r, g, b, a = _pixel(
                        (i + (si + 0.5) / SS) * scale, (j + (sj + 0.5) / SS) * scale
                    )
                    acc[0] += r * a
                    acc[1] += g * a
                    acc[2] += b * a
                    acc[3] += a
            alpha = acc[3] / (SS * SS)
            if acc[3]:
                rows.extend(int(c / acc[3]) for c in acc[:3])
            else:
                rows.extend((0, 0, 0))
            rows.append(int(alpha))
    return bytes(rows)


def png(size: int) -> bytes:
    """A PNG file of the icon."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(render(size), 9))
        + chunk(b"IEND", b"")
    )


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "media/icon.png")
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 128
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(png(size))
    print(f"{out}: {size}×{size}")
