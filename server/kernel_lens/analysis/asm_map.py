"""Map source lines to assembly lines in Triton's IRs and GPU assembly. Pure text parsing.

Each format carries debug locations differently:

* PTX: ``.file N "path"`` and ``.loc N LINE COL`` before the instructions of that line; an inlined
  helper's ``.loc`` carries the caller in its comment: ``// helpers.py:116:15 @[ k.py:26:40 ]``.
* TTIR / TTGIR (MLIR): ``loc(#locN)`` on each op, ``#locN = loc("path":LINE:COL)`` at the end,
  with named (``loc("x"(#loc3))``) and call-site (``loc(callsite(#a at #b))``) wrappers.
* LLIR: ``!dbg !N`` on instructions, ``!N = !DILocation(line: L, column: C, scope: !S)``.
* SASS from ``nvdisasm -g``: ``//## File "path", line N`` comments before instructions.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from dataclasses import dataclass, field

from kernel_lens.wire.results import LineMapEntry

__all__ = [
    "LineMap",
    "line_map",
    "llir_line_map",
    "mlir_line_map",
    "parse_ptxas_info",
    "ptx_line_map",
    "sass_line_map",
]


@dataclass
class LineMap:
    """Source line ↔ assembly lines (all 1-based).

    Attributes:
        asm_to_source: assembly line → source line, for lines that carry code.
    """

    asm_to_source: dict[int, int] = field(default_factory=dict)

    @property
    def source_to_asm(self) -> dict[int, list[int]]:
        """Source line → its assembly lines, in order."""
        out: dict[int, list[int]] = defaultdict(list)
        for asm_line, src in sorted(self.asm_to_source.items()):
            out[src].append(asm_line)
        return dict(sorted(out.items()))

    def to_json(self) -> list[LineMapEntry]:
        """``[{"source_line", "asm_lines"}]`` sorted by source line."""
        return [{"source_line": s, "asm_lines": a} for s, a in self.source_to_asm.items()]


def _same_file(path: str, wanted: str | None) -> bool:
    if wanted is None:
        return True
    if path == wanted:
        return True
    return os.path.basename(path) == os.path.basename(wanted)


_PTX_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]+)"(?:\s*,\s*"([^"]+)")?')
_PTX_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)(?P<rest>.*)$")
_PTX_INLINED = re.compile(r"@\[\s*([^\s:\]]+):(\d+):(\d+)")
_PTX_NOT_CODE = re.compile(r"^\s*($|//|\.loc\b|\.file\b|\{|\}|\$L__|[A-Za-z_$][\w$]*:\s*$)")


def ptx_line_map(ptx: str, source_file: str | None = None) -> LineMap:
    """Map the instructions of ``ptx`` to lines of ``source_file`` (basename match)."""
    files: dict[str, str] = {}
    for line in ptx.splitlines():
        m = _PTX_FILE.match(line)
        if m:
            # `.file 1 "dir", "name"` splits the path in two.
            files[m.group(1)] = os.path.join(m.group(2), m.group(3)) if m.group(3) else m.group(2)
    result = LineMap()
    current: int | None = None
    for no, line in enumerate(ptx.splitlines(), 1):
        m = _PTX_LOC.match(line)
        if m:
            file_id, src = m.group(1), int(m.group(2))
            if _same_file(files.get(file_id, ""), source_file) and src > 0:
                current = src
            else:
                inlined = _PTX_INLINED.search(m.group("rest"))
                if inlined and _same_file(inlined.group(1), source_file):
                    current = int(inlined.group(2))
                else:
                    current = None
            continue
        if current is not None and not _PTX_NOT_CODE.match(line):
            result.asm_to_source[no] = current
        if line.strip().startswith("}"):
            current = None
    return result


_MLIR_ALIAS = re.compile(r"^(#loc\d*)\s*=\s*loc\((.*)\)\s*$")
_MLIR_FILELOC = re.compile(r'^"([^"]+)":(\d+):(\d+)')
_MLIR_NAMED = re.compile(r'^"[^"]*"\((.*)\)$')
_MLIR_CALLSITE = re.compile(r"^callsite\((.*)\s+at\s+(.*)\)$")
_MLIR_USE = re.compile(r"loc\((#loc\d*|\"[^\"]+\":\d+:\d+)\)\s*$")


def mlir_line_map(text: str, source_file: str | None = None) -> LineMap:
    """Map the ops of a TTIR/TTGIR module to source lines."""
    aliases: dict[str, str] = {}
    for line in text.splitlines():
        m = _MLIR_ALIAS.match(line.strip())
        if m:
            aliases[m.group(1)] = m.group(2).strip()

    cache: dict[str, int | None] = {}

    def resolve(expr: str, depth: int = 0) -> int | None:
        expr = expr.strip()
        if depth > 20:
            return None
        if expr.startswith("#loc"):
            if expr not in cache:
                cache[expr] = None
                target = aliases.get(expr)
                cache[expr] = resolve(target, depth + 1) if target is not None else None
            return cache[expr]
        m = _MLIR_FILELOC.match(expr)
        if m:
            return int(m.group(2)) if _same_file(m.group(1), source_file) else None
        m = _MLIR_NAMED.match(expr)
        if m:
            return resolve(m.group(1), depth + 1)
        m = _MLIR_CALLSITE.match(expr)
        if m:
            # The callee is usually Triton's library; the call site is the user's line.
            return resolve(m.group(1), depth + 1) or resolve(m.group(2), depth + 1)
        return None

    result = LineMap()
    for no, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith(("#loc", "}")) or not stripped:
            continue
        m = _MLIR_USE.search(stripped)
        if m:
            src = resolve(m.group(1))
            if src is not None:
                result.asm_to_source[no] = src
    return result


_LL_DILOC = re.compile(r"^!(\d+)\s*=\s*(?:distinct\s+)?!DILocation\((.*)\)")
_LL_DISCOPE = re.compile(r"^!(\d+)\s*=\s*(?:distinct\s+)?!DI(?:Subprogram|LexicalBlock\w*)\((.*)\)")
_LL_DIFILE = re.compile(r'^!(\d+)\s*=\s*!DIFile\(filename:\s*"([^"]*)",\s*directory:\s*"([^"]*)"')
_LL_FIELD = re.compile(r"(\w+):\s*(!?\d+|\"[^\"]*\")")
_LL_DBG = re.compile(r"!dbg\s+!(\d+)")


def llir_line_map(text: str, source_file: str | None = None) -> LineMap:
    """Map the instructions of LLVM IR to source lines via ``!DILocation``."""
    files: dict[str, str] = {}
    scopes: dict[str, dict[str, str]] = {}
    locs: dict[str, dict[str, str]] = {}
    for line in text.splitlines():
        if m := _LL_DIFILE.match(line):
            files[m.group(1)] = os.path.join(m.group(3), m.group(2))
        elif m := _LL_DISCOPE.match(line):
            scopes[m.group(1)] = dict(_LL_FIELD.findall(m.group(2)))
        elif m := _LL_DILOC.match(line):
            locs[m.group(1)] = dict(_LL_FIELD.findall(m.group(2)))

    def file_of(scope: str, depth: int = 0) -> str | None:
        fields = scopes.get(scope.lstrip("!"))
        if fields is None or depth > 20:
            return None
        if "file" in fields:
            return files.get(fields["file"].lstrip("!"))
        return file_of(fields.get("scope", ""), depth + 1)

    def line_of(loc_id: str, depth: int = 0) -> int | None:
        fields = locs.get(loc_id)
        if fields is None or depth > 20:
            return None
        path = file_of(fields.get("scope", ""))
        if path is None or _same_file(path, source_file):
            return int(fields.get("line", "0")) or None
        inlined = fields.get("inlinedAt")
        return line_of(inlined.lstrip("!"), depth + 1) if inlined else None

    result = LineMap()
    for no, line in enumerate(text.splitlines(), 1):
        if line.startswith("!"):
            continue
        m = _LL_DBG.search(line)
        if m:
            src = line_of(m.group(1))
            if src is not None:
                result.asm_to_source[no] = src
    return result


_SASS_FILE = re.compile(r'//##\s*File\s+"([^"]+)",\s*line\s+(\d+)(?P<rest>.*)$')
_SASS_INSTR = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/")


def sass_line_map(text: str, source_file: str | None = None) -> LineMap:
    """Map SASS instructions (``nvdisasm -g`` output) to source lines."""
    result = LineMap()
    current: int | None = None
    for no, line in enumerate(text.splitlines(), 1):
        m = _SASS_FILE.search(line)
        if m:
            if _same_file(m.group(1), source_file):
                current = int(m.group(2))
            else:
                inlined = re.search(r'inlined at\s+"([^"]+)",\s*line\s+(\d+)', m.group("rest"))
                current = (
                    int(inlined.group(2))
                    if inlined and _same_file(inlined.group(1), source_file)
                    else None
                )
            continue
        if current is not None and _SASS_INSTR.match(line):
            result.asm_to_source[no] = current
    return result


def line_map(stage: str, text: str, source_file: str | None = None) -> LineMap:
    """The line map of one stage's text (``ptx``, ``ttir``, ``ttgir``, ``llir``, ``sass``)."""
    if stage == "ptx":
        return ptx_line_map(text, source_file)
    if stage in ("ttir", "ttgir"):
        return mlir_line_map(text, source_file)
    if stage == "llir":
        return llir_line_map(text, source_file)
    if stage == "sass":
        return sass_line_map(text, source_file)
    return LineMap()


def parse_ptxas_info(text: str) -> dict[str, int | None]:
    """Registers, spills, shared memory and stack from ``ptxas -v`` output."""

    def grab(pattern: str) -> int | None:
        m = re.search(pattern, text)
        return int(m.group(1)) if m else None

    return {
        "registers": grab(r"Used\s+(\d+)\s+registers"),
        "spill_stores": grab(r"(\d+)\s+bytes spill stores"),
        "spill_loads": grab(r"(\d+)\s+bytes spill loads"),
        "stack_bytes": grab(r"(\d+)\s+bytes stack frame"),
        "shared_bytes": grab(r"(\d+)\s+bytes smem"),
    }
