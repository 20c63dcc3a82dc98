"""A stand-in agent that replays a result recorded on an H200 (for CUDA lens/hover text on CPU).

Started by the server as ``[python, fake_agent.py] + ["-m", "kernel_lens.agent"]``; speaks the
real agent protocol (kernel_lens.agent.protocol) and answers every profile job with
tests/data/h200/square_three_ways_profile.json, its path replaced by the job's.
"""

import json
import sys
from pathlib import Path

RECORDED = (
    Path(__file__).resolve().parent.parent / "data" / "h200" / "square_three_ways_profile.json"
)


def main() -> None:
    out = sys.stdout
    out.write(json.dumps({"event": "ready", "pid": 0, "torch": "recorded", "cuda": True}) + "\n")
    out.flush()
    for raw in sys.stdin:
        message = json.loads(raw)
        result = json.loads(RECORDED.read_text())
        result["path"] = message["params"]["path"]
        out.write(json.dumps({"id": message["id"], "result": result}) + "\n")
        out.flush()


main()
