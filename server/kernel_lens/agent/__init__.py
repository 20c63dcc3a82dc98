"""The agent: runs the profiling stages in the user's own interpreter.

Only :mod:`kernel_lens.agent.stages` modules import torch, and only inside functions, so the
protocol loop and the error types stay importable without torch. The stages take the user's
code from the leaves below them: :mod:`kernel_lens.agent.usercode` reads, compiles, loads and
calls it, and :func:`~kernel_lens.agent.usercode.run_until` is the one "run the script until
the call" (a function's first call, a kernel's first launch; from the file or a driver).
"""
