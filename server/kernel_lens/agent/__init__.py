"""The agent: runs the profiling stages in the user's own interpreter.

Only :mod:`kernel_lens.agent.stages` modules import torch, and only inside functions, so the
protocol loop and the error types stay importable without torch.
"""
