"""The kernel's loop: read a request, do it (requests.py), reply. Runs in the kernel process.

A kernel is either forked from the warm zygote (zygote.py) or spawned as
``python -m gradrepl.kernel.worker``; both end up in :func:`serve`.
"""

from __future__ import annotations

import ctypes
import faulthandler
import os
import signal
import sys

import torch

from gradrepl.kernel import script_run, wiring
from gradrepl.kernel.aimed_word import AimedWord
from gradrepl.kernel.requests import MEMORY_RESERVE, Kernel
from gradrepl.kernel.sandbox import threads as thread_bound
from gradrepl.kernel.streams import NoInput
from gradrepl.kernel.wiring import bounded_reply as _bounded_reply  # tests bend it here
from gradrepl.protocol.interrupt_word import ANY_STEP

KERNEL_THREADS = max(1, min(4, os.cpu_count() or 1))  # torch's intra-op pool, fixed for a predictable footprint


def warm_up() -> None:
    """What every step needs, imported before the first kernel: torch (above) and the shadow recorder."""
    from gradrepl.kernel.symbolic import shadow  # noqa: F401


# What only some requests need: sympy for checks (about 0.2 s), jedi for completion, torch._dynamo
# (optimizers, checkpointing and torch.func's transforms import it on first use: 3.8 s on an idle
# machine, more under load), then jvp's decompositions (forward-mode transforms load them on first
# use, 0.4 s). The zygote imports these one by one while idle, after its first kernel runs; a kernel
# forked before that imports them on first use.
WARM_LATER = ("gradrepl.kernel.symbolic.crosscheck", "jedi", "torch._dynamo", "torch.utils.checkpoint",
              "torch._decomp.decompositions_for_jvp")


def _intra_op_threads(count: int) -> None:
    """torch's intra-op pool at `count` threads (the zygote imported torch with one, to fork safely),
    with MKL left as plain python has it. torch.set_num_threads also turns MKL's dynamic threading off
    (pytorch#13757): MKL then spreads even a 512-element sin or an 8x8 matmul over every thread, and on
    a busy machine each such op waits milliseconds for a core (a tiny-op loop ran 10-1000x python's
    time). Python never sets the count, so MKL's default, dynamic, is what a script expects."""
    torch.set_num_threads(count)
    if torch.backends.mkl.is_available():
        try:
            ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")).MKL_Set_Dynamic(1)
        except (OSError, AttributeError):
            pass  # MKL linked another way: its threads stay as torch set them


def serve(cmd_fd: int, reply_fd: int, out_fd: int, err_fd: int, interrupt_fd: int, nonce: str,
          policy: dict) -> None:
    """Become a kernel: wire the fds, harden the process, then answer requests until EOF.
    `interrupt_fd` is the client's InterruptTarget page (or /dev/null: every SIGINT counts)."""
    target = AimedWord.attach(interrupt_fd)
    wiring.wire_fds(cmd_fd, reply_fd, out_fd, err_fd)
    kernel = Kernel(nonce)
    sys.stdout, sys.stderr, sys.stdin = kernel.stdout, kernel.stderr, NoInput()
    faulthandler.enable(file=2, all_threads=False)

    def on_sigint(signum, frame):
        if kernel.executing and (target is None or target.aimed_at(kernel.running_step)):
            raise KeyboardInterrupt
        if not kernel.executing:  # sent as the step was starting (a loaded machine): it stops at its start
            kernel.pending_interrupt = target.word.value if target is not None else ANY_STEP

    signal.signal(signal.SIGINT, on_sigint)
    layers = wiring.harden(policy)
    script_run.setup(policy, kernel.namespace)  # sys.argv, and a script's __file__, folder, sys.path
    # Threads created from here on inherit the sandbox's seccomp and Landlock rules.
    _intra_op_threads(KERNEL_THREADS)
    # Under a thread bound the intra-op pool starts now: libgomp ends the process when it cannot make its
    # threads, as later, when learner threads may hold every one the bound allows. Not where the memory
    # limit leaves no room for their stacks: there, as without a bound, the pool's first use fails.
    if layers["threads"]["active"] and KERNEL_THREADS > 1 and \
            thread_bound.room_for_stacks(KERNEL_THREADS - 1, spare=MEMORY_RESERVE):
        torch.ones(KERNEL_THREADS << 16).add_(1)
    wiring.send_ready(reply_fd, layers, torch=torch.__version__)
    wiring.answer_requests(cmd_fd, reply_fd, kernel.handle, lambda answer: _bounded_reply(answer))
    os._exit(0)


def main(argv: list[str] | None = None) -> None:
    """Spawn mode: ``python -m gradrepl.kernel.worker CMD REPLY OUT ERR INTERRUPT NONCE POLICY_JSON``."""
    args = wiring.spawn_args(argv)
    warm_up()
    serve(*args)


if __name__ == "__main__":
    main()
