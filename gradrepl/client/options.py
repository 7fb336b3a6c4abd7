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
    script: str | None = None            # `run`: the script's absolute path (kernel/script_run.py)
    argv: tuple[str, ...] = ()           # `run FILE -- ARGS`: its sys.argv[1:]
    step_timeout: float | None = None    # seconds; None = run until interrupted (interactive)
    # Seconds a request other than a step (a task's check, inspect, completion) may go unanswered before
    # its kernel is killed and replaced; None = kernel_client.REQUEST_DEADLINE (tests shrink it).
    request_deadline: float | None = None
    spawn: bool = False                  # skip the zygote: start each kernel with a fresh interpreter
    # The module a spawned kernel runs: the full kernel, or the sympy-only one (SYMBOLIC_KERNEL, with spawn).
    kernel_module: str = "gradrepl.kernel.worker"
    # Let the idle zygote import sympy, jedi and torch._dynamo for later kernels (restarts). Off for
    # one-shot commands (run, check): that import would compete with their steps for the CPU.
    warm_later: bool = True
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def runs_learner_code(self) -> bool:
        """Whether its kernels run learner code (which can end them with any exit status)."""
        return self.kernel_module != SYMBOLIC_KERNEL


# `gradrepl check` without a point: the symbolic derivatives from a sandboxed kernel that imports sympy,
# never torch (kernel/symbolic_kernel.py). Spawned, by its module name, as the full kernel is.
SYMBOLIC_KERNEL = "gradrepl.kernel.symbolic_kernel"
