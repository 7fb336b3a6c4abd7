"""How a kernel is started: the sandbox policy a learner can relax by flags."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class KernelOptions:
    memory_limit: int | None = None      # bytes; None = the default share of the machine
    disk_limit: int | None = None        # bytes of scratch in total; None = the default share of RAM
    allow_network: bool = False
    workspace: str | None = None         # one more writable folder besides the scratch dir
    readable: tuple[str, ...] = ()       # more folders learner code may read (a course elsewhere)
    step_timeout: float | None = None    # seconds; None = run until interrupted (interactive)
    spawn: bool = False                  # skip the zygote: start each kernel with a fresh interpreter
    extra_env: dict[str, str] = field(default_factory=dict)
