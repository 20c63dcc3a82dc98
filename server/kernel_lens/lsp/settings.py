"""Server settings: start-up values from ``initializationOptions``, runtime values pulled with
``workspace/configuration`` (section ``kernelLens``)."""

from __future__ import annotations

import os
import re
import sys
from typing import Any

import attrs

from kernel_lens.wire.lsp import DEFAULT_BUDGET_MS, DEFAULT_WARMUP_MS

__all__ = ["Settings"]


def _positive(default: float, *, allow_zero: bool = False) -> Any:
    def convert(value: Any) -> float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            return default
        return number if number > 0 or (allow_zero and number == 0) else default

    return convert


def visible_gpus() -> int:
    """NVIDIA GPUs this machine shows the agent, without importing torch (the server never
    does): ``CUDA_VISIBLE_DEVICES`` when set, else the ``/dev/nvidiaN`` device files."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return len([d for d in visible.split(",") if d.strip() and d.strip() != "-1"])
    try:
        return sum(1 for name in os.listdir("/dev") if re.fullmatch(r"nvidia\d+", name))
    except OSError:
        return 0


def package_names(value: Any) -> list[str]:
    """A list of top-level package names from a setting's value (anything else is dropped:
    a dotted or odd name is not a package the agent can look up)."""
    if not isinstance(value, list):
        return []
    out: list[str] = []
    for item in value:
        if isinstance(item, str) and item.strip().isidentifier() and item.strip() not in out:
            out.append(item.strip())
    return out


@attrs.define
class Settings:
    """Everything the server needs to run jobs."""

    agent_command: list[str] = attrs.field(factory=lambda: [sys.executable])
    """argv prefix that starts a Python able to ``import kernel_lens`` (ssh/srun/container)."""
    agent_command_is_default: bool = True
    """No ``agentCommand`` was given: the agent runs on this server's own interpreter."""
    workspace_root: str | None = None
    """The first workspace folder: the agent's working directory."""
    timeout_seconds: float = 120.0
    """A job that runs longer is stopped and its agent restarted."""
    compile_timeout_seconds: float = 600.0
    """The limit for a compiler job (nvcc for ``load_inline``, Triton's compiler, torch.compile)
    when it is above ``timeout_seconds``: an nvcc build that includes ``torch/extension.h``
    takes a minute on a small machine, which is not a profile that hangs."""
    workspace_trusted: bool = True
    """Nothing runs in an untrusted workspace."""
    warmup_ms: float = DEFAULT_WARMUP_MS
    """Timing warm-up, milliseconds."""
    budget_ms: float = DEFAULT_BUDGET_MS
    """Timing budget for the repetitions, milliseconds."""
    reps: int = 0
    """Fixed timing repetitions; 0 = adaptive."""
    show_all_lenses: bool = False
    """Profile on every function and Sweep on every int parameter (``lenses.showAll``), not
    only where they mean something (see ``analysis/lens_targets.py``)."""
    profile_memory: str = "auto"
    """Record memory on every Profile (``profileMemory``), as *Profile Memory* does: ``on``,
    ``off``, or ``auto`` — on when the function runs on CUDA, where it costs under 10%
    (docs/benchmarks.md); an old boolean value is read as ``on``/``off``."""

    attribute_in_packages: list[str] = attrs.field(factory=list)
    """Installed packages whose code counts as the user's (``attributeInPackages``): runs
    attribute to the innermost line in the workspace or in their files (top-level names)."""
    vscode_client: bool = False
    """The client is the Kernel Lens extension (``initializationOptions.client`` is ``vscode``):
    ``$(icon)`` titles, ``command:`` links and the extension's own commands in lenses. Any other
    editor gets plain titles and only commands the server executes (``lsp/editors.py``)."""

    nproc_per_node: int = 0
    """Ranks of *Profile on N ranks* (``distributed.nprocPerNode``); 0: the visible GPUs, at
    least 2 (gloo on the CPU without GPUs)."""

    def ranks(self) -> int:
        """The ranks *Profile on N ranks* launches: the setting, else the visible GPUs (at
        least 2)."""
        return self.nproc_per_node if self.nproc_per_node > 0 else max(2, visible_gpus())

    def update(self, options: dict[str, Any] | None) -> None:
        """Apply ``initializationOptions`` or the ``kernelLens`` configuration section."""
        if not options:
            return
        if options.get("client") == "vscode":
            self.vscode_client = True
        command = options.get("agentCommand")
        if isinstance(command, list) and command and all(isinstance(c, str) for c in command):
            self.agent_command = list(command)
            self.agent_command_is_default = False
        if "timeoutSeconds" in options:
            self.timeout_seconds = _positive(self.timeout_seconds)(options["timeoutSeconds"])
        if "compileTimeoutSeconds" in options:
            self.compile_timeout_seconds = _positive(self.compile_timeout_seconds)(
                options["compileTimeoutSeconds"]
            )
        if "workspaceTrusted" in options:
            self.workspace_trusted = bool(options["workspaceTrusted"])
        memory = options.get("profileMemory")
        if isinstance(memory, bool):
            self.profile_memory = "on" if memory else "off"
        elif memory in ("auto", "on", "off"):
            self.profile_memory = str(memory)
        if "attributeInPackages" in options:
            self.attribute_in_packages = package_names(options["attributeInPackages"])
        lenses = options.get("lenses")
        if isinstance(lenses, dict) and isinstance(lenses.get("showAll"), bool):
            self.show_all_lenses = lenses["showAll"]
        distributed = options.get("distributed")
        if isinstance(distributed, dict) and "nprocPerNode" in distributed:
            try:
                self.nproc_per_node = max(0, min(64, int(distributed["nprocPerNode"])))
            except (TypeError, ValueError):
                pass
        timing = options.get("timing")
        if isinstance(timing, dict):
            if "warmupMs" in timing:
                self.warmup_ms = _positive(self.warmup_ms, allow_zero=True)(timing["warmupMs"])
            if "budgetMs" in timing:
                self.budget_ms = _positive(self.budget_ms)(timing["budgetMs"])
            if "reps" in timing:
                try:
                    self.reps = max(0, int(timing["reps"]))
                except (TypeError, ValueError):
                    pass
