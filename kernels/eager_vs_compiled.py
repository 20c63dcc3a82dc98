"""Eager against compiled, line by line: a chain of elementwise lines that Inductor fuses.

Eagerly every operation is its own kernel (its own loop over memory on a CPU) and each line
reads and writes the whole tensor; ``torch.compile`` fuses the lines into one kernel. Use
*Eager vs Compiled* in the function's ``…`` (or ``kernel-lens profile
kernels/eager_vs_compiled.py::gelu_chain --compare-compiled``): each line says what compilation
changed (``compiled: fused with line 18 (was 1.2 ms)``) and the summary the speed-up.
"""

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
N = 8_192 if DEVICE == "cuda" else 512


# kernel-lens: inputs = (torch.randn(N, N, device=DEVICE),)
def gelu_chain(x):
    y = x * 0.5
    t = torch.tanh(0.79788456 * (x + 0.044715 * x * x * x))
    y = y * (1.0 + t)
    z = torch.sigmoid(y)
    return z + 1.0
