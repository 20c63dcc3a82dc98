"""Candidate ``# kernel-lens: inputs = …`` directives for a function nobody calls, built from
what its text says: type hints (``int``, ``float``, ``bool``, ``Tensor``, ``Optional[…]``),
defaults (a parameter with one is left to it), and the names (token ids ``idx``/``input_ids``
are integers, positions ``input_pos`` an ``arange``, sizes ``n``/``seq_len``/``BLOCK_SIZE``
ints). Tensors get one rank per candidate (1-D, 2-D, 3-D, 4-D), so the agent can run each
once and offer the first that works (``agent/stages/suggest.py``).

Pure: text in, strings out; nothing here runs user code.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from kernel_lens.analysis.functions import FunctionInfo

__all__ = ["Candidate", "Param", "candidates", "params_of"]

#: Parameter names that hold token ids (integers, never floats) and positions.
TOKEN_NAMES = frozenset(
    {"idx", "ids", "tokens", "token_ids", "input_ids", "targets", "labels", "target_ids"}
)
POSITION_NAMES = frozenset({"input_pos", "pos", "positions", "position_ids"})
#: Names that hold a size or a count: an int, not a tensor.
_INT_NAMES = frozenset(
    {
        "n", "m", "k", "size", "numel", "length", "seq_len", "seqlen", "dim", "d", "batch",
        "batch_size", "bs", "steps", "iters", "n_iters", "repeats", "reps", "heads", "n_head",
        "num_heads", "hidden", "hidden_size", "width", "height", "channels",
    }
)  # fmt: skip
#: The tensor shapes tried, one rank per candidate.
SHAPES: tuple[tuple[int, ...], ...] = ((1024,), (64, 64), (4, 64, 64), (2, 4, 64, 64))


@dataclass(frozen=True)
class Param:
    """One parameter of the def: its name, its annotation's source text, whether it has a
    default, and whether it is keyword-only."""

    name: str
    annotation: str | None = None
    has_default: bool = False
    keyword_only: bool = False


@dataclass(frozen=True)
class Candidate:
    """A directive to try: its expression (``inputs = <expr>``), the parameters whose value
    was chosen from their name alone (a guess, said so), and the tensors' shape."""

    expr: str
    guessed: tuple[str, ...] = ()
    shape: tuple[int, ...] | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    def directive(self, comment: str = "") -> str:
        """The whole comment line, with ``comment`` after it (``# …``) when given."""
        tail = f"  # {comment}" if comment else ""
        return f"# kernel-lens: inputs = {self.expr}{tail}"


def params_of(text: str, info: FunctionInfo) -> list[Param]:
    """The parameters of the def at ``info.def_line`` (``self``/``cls`` of a method left out,
    ``*args``/``**kwargs`` too), from the text's AST; by name only when the text does not parse."""
    skip_first = info.is_method and not any(d.endswith("staticmethod") for d in info.decorators)
    node = _def_node(text, info.def_line)
    if node is None:
        names = [p for p in info.params if not p.startswith("*")]
        return [Param(n) for n in (names[1:] if skip_first and names else names)]
    a = node.args
    positional = [*a.posonlyargs, *a.args]
    if skip_first and positional:
        positional = positional[1:]
    first_default = len(positional) - len(a.defaults)
    out = [Param(p.arg, _annotation(p), i >= first_default) for i, p in enumerate(positional)]
    for p, default in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        out.append(Param(p.arg, _annotation(p), default is not None, keyword_only=True))
    return out


def _def_node(text: str, def_line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, MemoryError, RecursionError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.lineno == def_line:
            return node
    return None


def _annotation(arg: ast.arg) -> str | None:
    return ast.unparse(arg.annotation) if arg.annotation is not None else None


def _bare(annotation: str) -> str:
    """``torch.Tensor`` → ``Tensor``; ``typing.Optional[int]`` → ``Optional[int]``."""
    return annotation.replace("typing.", "").replace("torch.", "").replace(" ", "")


def _optional(annotation: str) -> bool:
    a = _bare(annotation)
    return a.startswith("Optional[") or "|None" in a or a.startswith("None|")


def _value(param: Param, shape: tuple[int, ...], device: str) -> tuple[str, bool]:
    """A value for ``param`` and whether its name alone decided it (a guess)."""
    dev = f", device={device!r}" if device != "cpu" else ""
    name = param.name
    kind = _bare(param.annotation) if param.annotation else ""
    if kind in ("int", "SymInt"):
        return str(_int_for(name)), False
    if kind == "float":
        return "1.0", False
    if kind == "bool":
        return "False", False
    if kind == "str":
        return repr(name), False
    if name in TOKEN_NAMES:
        rows = shape[:-1] if len(shape) > 1 else (1,)
        # ids under 16 fit any embedding table or class count a test model has
        return f"torch.randint(0, 16, {(*rows, 64)!r}{dev})", not kind
    if name in POSITION_NAMES:
        return f"torch.arange(64{dev})", not kind
    if not kind and (name in _INT_NAMES or name.isupper() or name.startswith(("n_", "num_"))):
        return str(_int_for(name)), True
    dims = ", ".join(str(s) for s in shape)
    return f"torch.randn({dims}{dev})", False


def _int_for(name: str) -> int:
    upper = name.upper()
    if "BLOCK" in upper:
        return 128
    if upper in ("N", "NUMEL", "SIZE", "LENGTH"):
        return 1024
    return 64


def candidates(params: list[Param], *, device: str = "cpu") -> list[Candidate]:
    """The directives to try, most likely first: every parameter without a default gets a
    value (typed ones from their hint; ``Optional`` ones ``None``); tensors take each shape of
    :data:`SHAPES` in turn. One candidate when there is no tensor to shape."""
    needed = [p for p in params if not p.has_default]
    if not needed:
        return [Candidate("()")]
    out: list[Candidate] = []
    tensors = sum(
        1
        for p in needed
        if not (p.annotation and _optional(p.annotation))
        and "torch.randn(" in _value(p, (1,), device)[0]
    )
    # two tensors or more are most often multiplied together: matrices first
    shapes = (SHAPES[1], SHAPES[0], *SHAPES[2:]) if tensors > 1 else SHAPES
    for shape in shapes:
        values: list[tuple[Param, str, bool]] = []
        for p in needed:
            if p.annotation and _optional(p.annotation):
                values.append((p, "None", False))
            else:
                value, by_name = _value(p, shape, device)
                values.append((p, value, by_name))
        guessed = tuple(p.name for p, _, g in values if g)
        positional = [v for p, v, _ in values if not p.keyword_only]
        keywords = [(p.name, v) for p, v, _ in values if p.keyword_only]
        if len(values) == 1 and not keywords:
            expr = f"({positional[0]},)"
        else:  # several, or keyword-only ones: by name, so the names stay readable
            kw = ", ".join(f"{p.name}={v}" for p, v, _ in values)
            expr = f"((), dict({kw}))"
        shaped = any("torch.randn(" in v for _, v, _ in values)
        out.append(Candidate(expr, guessed, shape if shaped else None))
        if not shaped and not any("torch.randint(" in v for _, v, _ in values):
            break  # nothing to shape: one candidate
    # the same expression twice (no randn in it) is tried once
    unique: dict[str, Candidate] = {}
    for c in out:
        unique.setdefault(c.expr, c)
    return list(unique.values())
