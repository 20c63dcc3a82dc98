"""On a CUDA GPU with Nsight Compute (issue 43): a planted uncoalesced read holds the blame.

``tests/data/inside/cuda_strided.py`` (``load_inline``, ``-lineinfo``) and ``tl_strided.py``
(Triton) read ``x[i]`` coalesced and ``y[i * 32]`` strided and store their sum. Each kernel is
profiled twice with ``--section SourceCounters``; the SASS of the very binary that ran is
dumped with ``cuobjdump -sass`` (the report has no control words); the stalls are blamed with
:func:`kernel_lens.analysis.stall_blame.blame_stalls`. The strided line must hold ≥ 80% of the
blamed samples in both runs, even where the raw samples sit on other lines.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kernel_lens.analysis.sass_control import parse_cuobjdump
from kernel_lens.analysis.stall_blame import blame_stalls, explain
from kernel_lens.traces.ncu_files import find_ncu, load_ncu_report_module
from tests.conftest import ROOT
from tests.stall_reports import KernelPcs, line_of, read_kernel, shares_by_line

pytestmark = pytest.mark.gpu
INSIDE = ROOT / "tests" / "data" / "inside"


def _cuobjdump() -> str | None:
    found = shutil.which("cuobjdump")
    if found:
        return found
    home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    candidates = [os.path.join(home, "bin", "cuobjdump")]
    try:
        import triton

        candidates.append(
            os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
        )
    except ImportError:
        pass
    return next((c for c in candidates if os.path.isfile(c)), None)


NCU = find_ncu()
CUOBJDUMP = _cuobjdump()
needs_tools = pytest.mark.skipif(
    NCU is None or CUOBJDUMP is None or load_ncu_report_module() is None,
    reason="needs ncu, ncu_report and cuobjdump",
)


def _profile(out: Path, name: str, kernel: str, script: str, env: dict[str, str]) -> Path:
    assert NCU is not None
    cmd = [NCU, "--section", "SourceCounters", "--import-source", "yes", "--clock-control",
           "none", "-k", f"regex:{kernel}", "-c", "1", "-f", "-o", str(out / name),
           sys.executable, script]  # fmt: skip
    proc = subprocess.run(cmd, cwd=INSIDE, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return out / f"{name}.ncu-rep"


def _sass(binary: str) -> str:
    assert CUOBJDUMP is not None
    return subprocess.run(
        [CUOBJDUMP, "-sass", binary], capture_output=True, text=True, check=True, timeout=120
    ).stdout


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("stall_blame")
    env = dict(os.environ, TORCH_EXTENSIONS_DIR=str(out / "ext"), TRITON_CACHE_DIR=str(out / "tc"))
    env["PYTHONPATH"] = os.pathsep.join([str(INSIDE), env.get("PYTHONPATH", "")])
    # build the extension once, outside ncu, so both runs profile the same binary
    subprocess.run(
        [sys.executable, "cuda_strided.py"], cwd=INSIDE, env=env, check=True, timeout=900
    )
    # chase with 64 steps: four passes of the loop unrolled ×16, so its head waits on the
    # last load of the previous pass, across the back edge (the recorded 16 steps run once)
    (out / "chase64.py").write_text(
        "import torch\nfrom cuda_strided import build\n"
        "ext = build()\nn = 1 << 22\n"
        "nxt = torch.randperm(n, device='cuda', dtype=torch.int64).to(torch.int32)\n"
        "ext.run_chase(nxt, 64)\ntorch.cuda.synchronize()\n"
    )
    runs = {
        "chase": [_profile(out, "chase64", "^chase", str(out / "chase64.py"), env)],
        "cuda": [_profile(out, f"cuda{i}", "^strided_sum", "cuda_strided.py", env) for i in (1, 2)],
        "triton": [
            _profile(out, f"tl{i}", "^strided_sum_kernel", "tl_strided.py", env) for i in (1, 2)
        ],
    }
    (so,) = glob.glob(str(out / "ext" / "**" / "*.so"), recursive=True)
    cubins = glob.glob(str(out / "tc" / "**" / "strided_sum_kernel.cubin"), recursive=True)
    assert cubins, "no Triton cubin in the cache"
    listing = parse_cuobjdump(_sass(so))
    return {
        "runs": runs,
        "sass": {
            "cuda": listing["_Z11strided_sumPKfS0_Pfi"],
            "chase": listing["_Z5chasePKiPiii"],
            "triton": parse_cuobjdump(_sass(cubins[0]))["strided_sum_kernel"],
        },
    }


def _check_run(
    kind: str, kernel: KernelPcs, recorded: dict[str, Any], needle: str, after: str
) -> float:
    ins = recorded["sass"][kind]
    blame = blame_stalls(ins, kernel.samples, kernel.costs)
    assert blame.total == pytest.approx(kernel.sample_count)
    assert blame.blamed + blame.unblamed == pytest.approx(blame.total)
    strided = line_of(kernel.sources, needle, after)
    raw = shares_by_line({pc: sum(r.values()) for pc, r in kernel.samples.items()}, kernel.lines)
    caused = blame.culprit_samples()
    blamed = sum(v for pc, v in caused.items() if kernel.lines.get(pc) == strided) / blame.blamed
    top = max(caused, key=lambda pc: caused[pc])
    by_pc = {x.pc: x for x in ins}
    text = explain(by_pc[top], kernel.costs.get(top))
    print(
        f"{kind} {kernel.name}: samples {blame.total:.0f}, blamed {blame.fraction_blamed:.1%}; "
        f"strided line {strided[1]}: raw {raw.get(strided, 0.0):.1%}, blamed {blamed:.1%}; "
        f"raw top line {max(raw, key=lambda k: raw[k])}; culprit {by_pc[top].text} · {text.cause}"
    )
    assert blamed >= 0.8
    assert blamed > raw.get(strided, 0.0)
    return blamed


@needs_tools
def test_cuda_strided_read_holds_the_blame_in_both_runs(recorded: dict[str, Any]) -> None:
    shares = [
        _check_run(
            "cuda",
            read_kernel(str(rep)),
            recorded,
            "float b = y[(long)i * 32];",
            "void strided_sum(",
        )
        for rep in recorded["runs"]["cuda"]
    ]
    assert abs(shares[0] - shares[1]) < 0.05


@needs_tools
def test_triton_strided_read_holds_the_blame_in_both_runs(recorded: dict[str, Any]) -> None:
    shares = [
        _check_run(
            "triton",
            read_kernel(str(rep)),
            recorded,
            "y = tl.load(y_ptr + offs * STRIDE",
            "def strided_sum_kernel(",
        )
        for rep in recorded["runs"]["triton"]
    ]
    assert abs(shares[0] - shares[1]) < 0.05


@needs_tools
def test_chase_blame_crosses_the_back_edge(recorded: dict[str, Any]) -> None:
    (rep,) = recorded["runs"]["chase"]
    kernel = read_kernel(str(rep))
    ins = recorded["sass"]["chase"]
    blame = blame_stalls(ins, kernel.samples, kernel.costs)
    step = line_of(kernel.sources, "j = next[j];")
    caused = blame.culprit_samples()
    on_step = sum(v for pc, v in caused.items() if kernel.lines.get(pc) == step) / blame.blamed
    across = sum(m.samples for m in blame.moves if "back edge" in m.via)
    print(f"chase 64 steps: j = next[j] holds {on_step:.1%} of the blamed samples; "
          f"{across:.0f} of {blame.blamed:.0f} moved across the back edge")  # fmt: skip
    assert on_step >= 0.95
    assert across > 0
