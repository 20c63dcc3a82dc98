"""``lens_targets``: which functions get which lenses, from the text alone (pure)."""

from pathlib import Path

from kernel_lens.analysis.functions import find_functions
from kernel_lens.analysis.lens_targets import is_input_factory, lens_targets

ROOT = Path(__file__).resolve().parent.parent.parent
MIX = (ROOT / "tests" / "data" / "examples" / "lens_mix.py").read_text()


def roles(source: str, **kw: bool) -> dict[str, str]:
    return {t.info.qualname: t.role for t in lens_targets(source, **kw)}


def test_each_kind_of_function_in_the_mixed_file() -> None:
    targets = {t.info.qualname: t for t in lens_targets(MIX)}
    assert roles(MIX) == {
        "MLP.__init__": "none",
        "MLP.forward": "profile",
        "MLP.__repr__": "none",
        "mlp_inputs": "none",
        "make_input": "none",
        "describe": "none",
        "_pow2": "none",
        "cdiv": "none",
        "add_kernel": "kernel",
        "add": "profile",
        "numba_square": "none",
        "numba_launch": "profile",
    }
    assert targets["mlp_inputs"].reason == "input factory"
    assert targets["numba_square"].reason.startswith("numba kernel")
    # BLOCK reaches the launch through the grid; repeat does not.
    assert targets["add"].sweep_params == ("BLOCK",) and targets["add"].launches
    assert targets["MLP.__init__"].sweep_params == ()


def test_triton_is_found_by_its_import_not_its_spelling() -> None:
    aliased = "import triton as tr\n\n@tr.jit\ndef k(p):\n    pass\n"
    bare = "from triton import jit\n\n@jit\ndef k(p):\n    pass\n"
    autotuned = (
        "import triton\n\n@triton.autotune(configs=[], key=[])\n@triton.jit\ndef k(p):\n    pass\n"
    )
    numba = "from numba import cuda\n\n@cuda.jit\ndef k(p):\n    pass\n"
    numba_jit = "import numba\n\n@numba.jit(nopython=True)\ndef k(p):\n    return p\n"
    for source in (aliased, bare, autotuned):
        assert roles(source) == {"k": "kernel"}, source
        assert find_functions(source)[0].is_triton_kernel
    for source in (numba, numba_jit):
        assert roles(source) == {"k": "none"}, source
        assert not find_functions(source)[0].is_triton_kernel
        assert find_functions(source)[0].is_numba_kernel


def test_profile_reasons() -> None:
    source = (
        "import torch\n"
        "def uses_torch(x):\n    return torch.relu(x)\n"
        "def matmul(a, b):\n    return a @ b\n"
        "def wraps(x):\n    y = uses_torch(x)\n    return y\n"
        "def main():\n    x = 1\n    print(x)\n"
        "def unused(a, b):\n    return a + b\n"
        "# kernel-lens: inputs = (1,)\ndef directive(x):\n    return x\n"
        "def job():\n    n = 0\n    while True:\n        n += 1\n"
        "def one_liner():\n    return 1\n"
        "def has_factory(x):\n    return x\n"
        "def has_factory_inputs():\n    return (1,)\n"
        "if __name__ == '__main__':\n    main()\n"
    )
    reasons = {t.info.qualname: (t.role, t.reason) for t in lens_targets(source)}
    assert reasons == {
        "uses_torch": ("profile", "tensor work"),
        "matmul": ("profile", "tensor work"),
        "wraps": ("profile", "tensor work"),
        "main": ("profile", "called by the script"),
        "unused": ("none", "no tensor work, not called by the script"),
        "directive": ("profile", "inputs directive"),
        "job": ("profile", "runs without inputs"),
        "one_liner": ("none", "no tensor work, not called by the script"),
        "has_factory": ("profile", "inputs factory"),
        "has_factory_inputs": ("none", "input factory"),
    }


def test_sweep_follows_the_parameter_into_a_called_launcher() -> None:
    source = (
        "import triton\n"
        "@triton.jit\ndef k(p, B: tl.constexpr):\n    pass\n"
        "def launch(x, BLOCK=128):\n    k[(1,)](x, B=BLOCK)\n"
        "def outer(x, BLOCK=256, n=3):\n    for _ in range(n):\n        launch(x, BLOCK=BLOCK)\n"
        "def positional(x, BLOCK=64):\n    launch(x, BLOCK)\n"
    )
    sweeps = {t.info.qualname: t.sweep_params for t in lens_targets(source)}
    assert sweeps == {"k": (), "launch": ("BLOCK",), "outer": ("BLOCK",), "positional": ("BLOCK",)}


def test_show_all_is_the_unfiltered_set() -> None:
    every = lens_targets(MIX, show_all=True)
    assert [t.role for t in every].count("profile") == 11
    assert {t.info.qualname: t.sweep_params for t in every}["MLP.__init__"] == ("dim", "hidden")


def test_input_factory_names() -> None:
    assert is_input_factory("square_inputs") and is_input_factory("make_input")
    assert not is_input_factory("input_layer")
