"""A function edited between profiles by tests/lsp/test_history_lsp.py (the buffer only)."""

import torch


# kernel-lens: inputs = (torch.ones(1 << 12),)  # small: one thread, steady on a busy CPU
def scale(x):
    y = x * 2
    return y + 1
