"""Cut a faithful excerpt out of a real Kineto trace: ``python excerpt.py IN OUT START_MS MS``.

Nothing is rewritten: the excerpt is the trace object with every key but ``traceEvents`` as it
was, the metadata events (``ph == "M"``), and a subset of the complete events, each one byte for
byte as parsed (the file is parsed with ``parse_float=Decimal`` and written back the same way,
so no timestamp loses a digit). The subset: the host events (CPU ops, annotations, runtime
calls) that lie wholly inside the window ``[first host event + START_MS, … + MS]``, the device
events launched by a runtime call kept (same ``correlation``), and device events without a
correlation that lie inside the window. Flow events are left out.
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from decimal import Decimal
from typing import Any

_HOST = {"cpu_op", "Operator", "user_annotation", "cuda_runtime", "cuda_driver", "Runtime",
         "mtia_runtime", "python_function"}  # fmt: skip


def _load(path: str) -> Any:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f, parse_float=Decimal)


def _marked(value: Any) -> Any:
    """``value`` with each Decimal as a marked string (unmarked after encoding: `_dumps`)."""
    if isinstance(value, Decimal):
        return f"\x00{value}\x00"
    if isinstance(value, dict):
        return {k: _marked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_marked(v) for v in value]
    return value


def _dumps(value: Any) -> str:
    """JSON of ``value`` with every number written with the digits it was read with."""
    return re.sub(r'"\\u0000([-0-9.eE+]+)\\u0000"', r"\1", json.dumps(_marked(value)))


def main(src: str, dst: str, start_ms: float, ms: float) -> None:
    trace = _load(src)
    events = trace["traceEvents"]
    xs = [e for e in events if e.get("ph") == "X"]
    host = [e for e in xs if e.get("cat") in _HOST]
    t0 = min(Decimal(e["ts"]) for e in host)
    a = t0 + Decimal(str(start_ms * 1000))
    b = a + Decimal(str(ms * 1000))
    kept_host = [e for e in host if a <= e["ts"] and e["ts"] + e["dur"] <= b]
    corrs = {(e.get("args") or {}).get("correlation") for e in kept_host} - {None}
    kept: list[Any] = []
    for e in events:
        if e.get("ph") == "M":
            kept.append(e)
        elif e.get("ph") != "X":
            continue
        elif e.get("cat") in _HOST:
            if a <= e["ts"] and e["ts"] + e["dur"] <= b:
                kept.append(e)
        else:
            corr = (e.get("args") or {}).get("correlation")
            if corr in corrs or (corr is None and a <= e["ts"] and e["ts"] + e["dur"] <= b):
                kept.append(e)
    out = {k: v for k, v in trace.items() if k != "traceEvents"}
    out["traceEvents"] = kept
    text = _dumps(out)
    with gzip.open(dst, "wt") if dst.endswith(".gz") else open(dst, "w") as f:
        f.write(text)
    print(f"{dst}: {len(kept)} of {len(events)} events")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]))
