#!/usr/bin/env python3
"""The numbers of issue 37 ("the house a newcomer can carry on"), measured on the tree as it is.

    python scripts/house_report.py            # the report, as text
    python scripts/house_report.py --json     # the same numbers, as JSON
    python scripts/house_report.py --most 30  # longer lists

It reads the sources as text (Python through ``ast``, TypeScript through the ``typescript``
package in node_modules) and runs nothing of the project. What it measures:

- **producers vs the wire**: each ``@dataclass`` outside ``server/kernel_lens/wire/`` against
  its best match among the TypedDicts inside it. Names compare with case and underscores
  dropped (``self_us`` and ``selfUs`` are one key); a pair is listed when the dataclass holds at
  least ``--share`` (60%) of the TypedDict's keys (inherited ones included), and three at
  least. ``to_json`` methods are counted by what they are annotated to return (a wire type, or
  a bare ``dict``/``list``).
- **lsp/ on pygls' internals**: the lines outside ``lsp/protocol.py`` that name a private
  attribute of pygls (``_send_response``, ``_converter``, …) and the handlers that take
  ``raw: Any``; the module-level ``WeakKeyDictionary`` registries.
- **rooms**: the largest modules of ``server/`` and ``extension/``.
- **long functions**: every function, method, lambda-free arrow function and constructor of
  ``server/`` (``.py``) and ``extension/`` (``.ts``, generated code left out), its length from
  its ``def``/signature line to its last line (decorators and nested functions included, the
  way a reader scrolls through it); counts over 60 and over 100 lines, the longest, and for
  Python the McCabe complexity (1 + each ``if``/loop/``except``/``case``/boolean operand/
  comprehension condition/conditional expression).
- **tests**: test modules that import from another test module, and the longest test files.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "server" / "kernel_lens"
WIRE = SERVER / "wire"
EXTENSION = ROOT / "extension"


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _py_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def _norm(name: str) -> str:
    return name.replace("_", "").lower()


# ---------------------------------------------------------------- producers vs the wire


def _base_names(node: ast.ClassDef) -> list[str]:
    names = []
    for base in node.bases:
        if isinstance(base, ast.Name):
            names.append(base.id)
        elif isinstance(base, ast.Attribute):
            names.append(base.attr)
        elif isinstance(base, ast.Subscript) and isinstance(base.value, ast.Name):
            names.append(base.value.id)
    return names


def _annotated_fields(node: ast.ClassDef) -> list[str]:
    out = []
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            if "ClassVar" in ast.unparse(stmt.annotation):
                continue
            out.append(stmt.target.id)
    return out


def _is_dataclass(node: ast.ClassDef) -> bool:
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name == "dataclass":
            return True
    return False


def wire_typeddicts() -> dict[str, tuple[str, list[str]]]:
    """Each wire TypedDict: name -> (file, keys with inherited ones)."""
    raw: dict[str, tuple[str, list[str], list[str]]] = {}
    for path in _py_files(WIRE):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                raw[node.name] = (_rel(path), _base_names(node), _annotated_fields(node))
    typed: dict[str, tuple[str, list[str]]] = {}

    def keys(name: str, seen: frozenset[str] = frozenset()) -> list[str] | None:
        if name == "TypedDict":
            return []
        if name not in raw or name in seen:
            return None
        _, bases, own = raw[name]
        out: list[str] = []
        for base in bases:
            inherited = keys(base, seen | {name})
            if inherited is None:
                return None
            out += inherited
        return out + own

    for name, (file, _, _) in raw.items():
        found = keys(name)
        if found is not None and raw[name][1]:
            typed[name] = (file, found)
    return typed


#: Fewer shared keys than this is chance (``label``/``kind`` pairs), not a mirror.
MIN_SHARED = 3


@dataclass
class Pair:
    dataclass: str
    where: str
    typeddict: str
    shared: int
    wire_keys: int
    dataclass_fields: int
    share: float
    only_in_dataclass: list[str] = field(default_factory=list)
    only_in_wire: list[str] = field(default_factory=list)


def producer_pairs(min_share: float) -> tuple[list[Pair], int]:
    """(the dataclass/TypedDict pairs at or over ``min_share``, the number of dataclasses)."""
    wire = wire_typeddicts()
    pairs: list[Pair] = []
    count = 0
    for path in _py_files(SERVER):
        if WIRE in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.ClassDef) and _is_dataclass(node)):
                continue
            count += 1
            fields = _annotated_fields(node)
            mine = {_norm(f): f for f in fields}
            best: Pair | None = None
            for name, (_, keys) in wire.items():
                theirs = {_norm(k): k for k in keys}
                shared = len(mine.keys() & theirs.keys())
                share = shared / len(theirs)
                if shared < MIN_SHARED or share < min_share:
                    continue
                candidate = Pair(
                    dataclass=node.name,
                    where=f"{_rel(path)}:{node.lineno}",
                    typeddict=name,
                    shared=shared,
                    wire_keys=len(theirs),
                    dataclass_fields=len(mine),
                    share=round(share, 3),
                    only_in_dataclass=sorted(mine[k] for k in mine.keys() - theirs.keys()),
                    only_in_wire=sorted(theirs[k] for k in theirs.keys() - mine.keys()),
                )
                if best is None or (candidate.share, candidate.shared) > (best.share, best.shared):
                    best = candidate
            if best is not None:
                pairs.append(best)
    pairs.sort(key=lambda p: (-p.share, -p.shared, p.where))
    return pairs, count


def to_json_returns() -> Counter[str]:
    """``to_json`` methods outside wire/ by what they are annotated to return."""
    wire = set(wire_typeddicts())
    kinds: Counter[str] = Counter()
    for path in _py_files(SERVER):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "to_json":
                ret = ast.unparse(node.returns) if node.returns else "(none)"
                # ``wire.NcuKernel`` (the module imported, beside a dataclass of the same name)
                head = re.split(r"[\[| ]", ret)[0].rsplit(".", 1)[-1]
                # ``list[LineMapEntry]``: a list of a wire type is the wire's too
                inner = re.match(r"(?:list|Sequence)\[([\w.]+)\]$", ret)
                if inner is not None and inner.group(1).rsplit(".", 1)[-1] in wire:
                    head = inner.group(1).rsplit(".", 1)[-1]
                kinds["a wire type" if head in wire else f"untyped ({head})"] += 1
    return kinds


# ---------------------------------------------------------------- lsp/ and pygls


#: Names too common to tell pygls' attribute from one of our own (``self._server`` of a feature).
_GENERIC = {
    "_server", "_shutdown", "_stop_event", "_thread_pool", "_max_workers", "_features", "_docs",
}  # fmt: skip


def _pygls_private_names() -> set[str]:
    """The private attributes pygls defines (``def _x`` or ``self._x =``), read from the
    installed package, so the list follows the pygls in use."""
    try:
        import pygls
    except ImportError:
        return {"_send_response", "_send_data", "_converter", "_handle_request", "_workspace"}
    names: set[str] = set()
    for path in Path(pygls.__file__).parent.rglob("*.py"):
        names |= set(re.findall(r"(?:def |self\.)(_[a-z][a-z_]*)\b", path.read_text()))
    return names - _GENERIC


def pygls_internals() -> dict[str, Any]:
    private: list[str] = []
    raw_any: list[str] = []
    registries: list[str] = []
    names = _pygls_private_names()
    pattern = re.compile(r"\.(" + "|".join(sorted(names)) + r")\b")
    for path in _py_files(SERVER / "lsp"):
        text = path.read_text()
        for number, line in enumerate(text.splitlines(), 1):
            if pattern.search(line) and path.name != "protocol.py":
                private.append(f"{_rel(path)}:{number}: {line.strip()[:90]}")
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for arg in node.args.args:
                    if arg.arg == "raw" and arg.annotation and ast.unparse(arg.annotation) == "Any":
                        raw_any.append(f"{_rel(path)}:{node.lineno} {node.name}")
        for stmt in tree.body:
            value = stmt.value if isinstance(stmt, ast.Assign | ast.AnnAssign) else None
            if value is not None and "WeakKeyDictionary" in ast.unparse(value):
                registries.append(f"{_rel(path)}:{stmt.lineno}")
    return {"private_uses": private, "raw_any_handlers": raw_any, "weak_registries": registries}


# ---------------------------------------------------------------- long functions


@dataclass
class Function:
    name: str
    where: str
    lines: int
    complexity: int | None = None


_BRANCHES = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.ExceptHandler,
    ast.IfExp,
    ast.Assert,
    ast.match_case,
)


def _complexity(node: ast.AST) -> int:
    """McCabe's number of one function, its nested functions left out."""
    total = 1
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        if isinstance(child, _BRANCHES):
            total += 1
        elif isinstance(child, ast.BoolOp):
            total += len(child.values) - 1
        elif isinstance(child, ast.comprehension):
            total += 1 + len(child.ifs)
        stack.extend(ast.iter_child_nodes(child))
    return total


def python_functions() -> list[Function]:
    out = []
    for path in _py_files(SERVER):
        tree = ast.parse(path.read_text())
        parents: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                parents[child] = node
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            names = [node.name]
            up = parents.get(node)
            while up is not None:
                if isinstance(up, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    names.append(up.name)
                up = parents.get(up)
            module = ".".join(path.relative_to(SERVER.parent).with_suffix("").parts)
            assert node.end_lineno is not None
            out.append(
                Function(
                    name=f"{module}.{'.'.join(reversed(names))}",
                    where=f"{_rel(path)}:{node.lineno}",
                    lines=node.end_lineno - node.lineno + 1,
                    complexity=_complexity(node),
                )
            )
    return out


_TS_WALK = r"""
const ts = require("typescript");
const fs = require("fs");
const out = [];
for (const file of JSON.parse(process.argv[1])) {
  const text = fs.readFileSync(file, "utf8");
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const line = (pos) => src.getLineAndCharacterOfPosition(pos).line + 1;
  const nameOf = (node) => {
    if (node.name && node.name.getText) return node.name.getText(src);
    if (ts.isConstructorDeclaration(node)) return "constructor";
    const p = node.parent;
    if (p && ts.isVariableDeclaration(p)) return p.name.getText(src);
    if (p && ts.isPropertyAssignment(p)) return p.name.getText(src);
    if (p && ts.isPropertyDeclaration(p)) return p.name.getText(src);
    return "(anonymous)";
  };
  const visit = (node, outer) => {
    let here = outer;
    if (ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) ||
        ts.isConstructorDeclaration(node) || ts.isFunctionExpression(node) ||
        ts.isArrowFunction(node) || ts.isGetAccessor(node) || ts.isSetAccessor(node)) {
      if (node.body) {
        const name = nameOf(node);
        const start = line(node.getStart(src));
        const end = line(node.getEnd());
        here = outer ? outer + "." + name : name;
        out.push({ name: here, file, line: start, lines: end - start + 1 });
      }
    } else if (ts.isClassDeclaration(node) && node.name) {
      here = outer ? outer + "." + node.name.text : node.name.text;
    }
    ts.forEachChild(node, (child) => visit(child, here));
  };
  visit(src, "");
}
process.stdout.write(JSON.stringify(out));
"""


def typescript_functions() -> list[Function] | str:
    """The functions of extension/ (generated/ left out), or why they could not be read."""
    files = sorted(
        str(p) for p in EXTENSION.rglob("*.ts") if "generated" not in p.relative_to(EXTENSION).parts
    )
    try:
        proc = subprocess.run(
            ["node", "-e", _TS_WALK, json.dumps(files)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"node could not run: {exc}"
    if proc.returncode != 0:
        return f"node failed: {proc.stderr.strip()[-300:]}"
    return [
        Function(
            name=f"{Path(f['file']).stem}.{f['name']}",
            where=f"{_rel(Path(f['file']))}:{f['line']}",
            lines=f["lines"],
        )
        for f in json.loads(proc.stdout)
    ]


# ---------------------------------------------------------------- rooms and tests


def largest_files(paths: list[Path], most: int) -> list[tuple[str, int]]:
    sizes = [(_rel(p), len(p.read_text().splitlines())) for p in paths]
    return sorted(sizes, key=lambda s: -s[1])[:most]


def test_cross_imports() -> dict[str, Any]:
    """Test modules that import from another ``test_*`` module, by the module imported."""
    by_source: dict[str, set[str]] = {}
    pattern = re.compile(r"^from (tests\.[\w.]*\btest_\w+) import", re.M)
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        for match in pattern.finditer(path.read_text()):
            by_source.setdefault(match.group(1), set()).add(_rel(path))
    return {
        "importers": len(set().union(*by_source.values())) if by_source else 0,
        "by_module": {k: len(v) for k, v in sorted(by_source.items(), key=lambda kv: -len(kv[1]))},
    }


# ---------------------------------------------------------------- the report


_TIMING_DEFAULT = re.compile(r"(warmup|budget)\w*[\"']?\s*[:=,]\s*[^,]*\b(25|500)(\.0)?\b", re.I)


def timing_defaults() -> list[str]:
    """Where the timing defaults (warm-up 25 ms, budget 500 ms) are written as numbers."""
    out = []
    files = [*_py_files(SERVER), *sorted(EXTENSION.rglob("*.ts")), ROOT / "package.json"]
    for path in files:
        if "generated" in path.parts:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if _TIMING_DEFAULT.search(line):
                out.append(f"{_rel(path)}:{number}: {line.strip()[:80]}")
    return out


def measure(min_share: float, most: int) -> dict[str, Any]:
    pairs, dataclasses = producer_pairs(min_share)
    py = python_functions()
    ts = typescript_functions()
    funcs: dict[str, Any] = {}
    for label, found in (("server (Python)", py), ("extension (TypeScript)", ts)):
        if isinstance(found, str):
            funcs[label] = {"error": found}
            continue
        longest = sorted(found, key=lambda f: -f.lines)
        funcs[label] = {
            "functions": len(found),
            "over_60": sum(f.lines > 60 for f in found),
            "over_100": sum(f.lines > 100 for f in found),
            "longest": [asdict(f) for f in longest[:most]],
        }
    funcs["most_complex (Python)"] = [
        asdict(f) for f in sorted(py, key=lambda f: -(f.complexity or 0))[: min(most, 10)]
    ]
    modules = [p for p in _py_files(SERVER)] + [
        p for p in EXTENSION.rglob("*.ts") if "generated" not in p.relative_to(EXTENSION).parts
    ]
    scenario_files = sorted((ROOT / "tests" / "e2e").glob("*.mjs"))
    return {
        "commit": _commit(),
        "producers": {
            "dataclasses_outside_wire": dataclasses,
            "wire_typeddicts": len(wire_typeddicts()),
            "min_share": min_share,
            "pairs": [asdict(p) for p in pairs],
            "pairs_at_least_86pct": sum(p.share >= 0.86 for p in pairs),
            "to_json_returns": dict(to_json_returns()),
            "timing_defaults": timing_defaults(),
        },
        "pygls": pygls_internals(),
        "largest_modules": largest_files(modules, most),
        "functions": funcs,
        "tests": {
            **test_cross_imports(),
            "e2e_scenario_files": largest_files(scenario_files, 5),
            "largest_test_modules": largest_files(sorted((ROOT / "tests").rglob("test_*.py")), 5),
        },
    }


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except OSError:
        return "?"


def render(report: dict[str, Any]) -> str:
    lines = [f"# house report at {report['commit']}", ""]
    prod = report["producers"]
    lines.append(
        f"## producers vs the wire: {len(prod['pairs'])} of {prod['dataclasses_outside_wire']} "
        f"dataclasses hold >= {prod['min_share']:.0%} of a wire TypedDict's keys "
        f"({prod['pairs_at_least_86pct']} at >= 86%); {prod['wire_typeddicts']} TypedDicts"
    )
    for p in prod["pairs"]:
        extra = f" +{p['only_in_dataclass']}" if p["only_in_dataclass"] else ""
        missing = f" -{p['only_in_wire']}" if p["only_in_wire"] else ""
        lines.append(
            f"  {p['share']:>5.0%}  {p['dataclass']} ~ {p['typeddict']} "
            f"({p['shared']}/{p['wire_keys']})  {p['where']}{extra}{missing}"
        )
    lines.append(f"  to_json returns: {prod['to_json_returns']}")
    lines.append(
        f"  the timing defaults (25 / 500 ms) written in {len(prod['timing_defaults'])} places:"
    )
    lines += [f"    {x}" for x in prod["timing_defaults"]]
    lines.append("")
    pg = report["pygls"]
    lines.append(
        f"## lsp/ and pygls: {len(pg['private_uses'])} lines name a private pygls attribute "
        f"outside lsp/protocol.py, {len(pg['raw_any_handlers'])} handlers take `raw: Any`, "
        f"{len(pg['weak_registries'])} module-level WeakKeyDictionary registries"
    )
    lines += [f"  {x}" for x in pg["private_uses"]]
    lines += [f"  registry at {x}" for x in pg["weak_registries"]]
    lines.append("")
    lines.append("## largest modules (lines)")
    lines += [f"  {n:>6}  {path}" for path, n in report["largest_modules"]]
    lines.append("")
    for label, data in report["functions"].items():
        if label.startswith("most_complex"):
            lines.append(f"## {label}")
            lines += [
                f"  CC {f['complexity']:>3}  {f['lines']:>4} lines  {f['name']}  {f['where']}"
                for f in data
            ]
            lines.append("")
            continue
        if "error" in data:
            lines += [f"## functions of {label}: {data['error']}", ""]
            continue
        lines.append(
            f"## functions of {label}: {data['functions']}, {data['over_60']} over 60 lines, "
            f"{data['over_100']} over 100"
        )
        for f in data["longest"]:
            cc = f" CC {f['complexity']}" if f.get("complexity") else ""
            lines.append(f"  {f['lines']:>4}{cc}  {f['name']}  {f['where']}")
        lines.append("")
    tests = report["tests"]
    lines.append(f"## tests: {tests['importers']} test modules import from another test module")
    lines += [f"  {n:>3}  {mod}" for mod, n in tests["by_module"].items()]
    lines += [f"  {n:>6}  {path}" for path, n in tests["e2e_scenario_files"]]
    lines += [f"  {n:>6}  {path}" for path, n in tests["largest_test_modules"]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--most", type=int, default=20, help="how many longest functions")
    parser.add_argument("--share", type=float, default=0.6, help="least share of wire keys")
    args = parser.parse_args(argv)
    report = measure(args.share, args.most)
    sys.stdout.write(json.dumps(report, indent=1) + "\n" if args.json else render(report))
    return 0


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
