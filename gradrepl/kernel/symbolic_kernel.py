"""The sympy-only kernel: `gradrepl check EXPR` without --at, answered without importing torch.

Spawned as the full kernel is (client/launch.py: `python -P` from "/", the allow-listed environment,
a session of its own), ``python -m gradrepl.kernel.symbolic_kernel CMD REPLY OUT ERR INTERRUPT NONCE
POLICY_JSON``, it applies the same sandbox (wiring.harden: kernel/sandbox/'s layers), sends the same
ready line without "torch" (it has none), and answers `check_expr` with no point (the symbolic
derivatives, by checks.derivatives: the safe reader, then sympy, as the full kernel's check_expression
does without a point), `ping` and `shutdown` over the same protocol and reply schema. Anything that needs torch (a point, a step) is
refused with a request error's code; the client asks a full kernel for that.
"""

from __future__ import annotations

import faulthandler
import os

from gradrepl.kernel import wiring
from gradrepl.kernel.guard import Overtime, time_limit
from gradrepl.protocol import messages as protocol


def handle(message: dict) -> dict:
    """One request's reply: the derivatives alone, a pid, or the code for a request it cannot take."""
    op, msg_id = message.get("op"), message.get("id")
    if op == "check_expr" and not message.get("point"):
        return _derivatives(msg_id, message.get("expr", ""))
    elif op == "ping":
        return protocol.reply(msg_id, pid=os.getpid())
    elif op == "shutdown":
        return protocol.reply(msg_id)
    # a point, a step: torch's work (views/remarks.REQUEST_ERRORS words the code)
    return protocol.reply(msg_id, ok=False, error={"code": "unknown_op", "names": {"op": str(op)}})


def _derivatives(msg_id, expr) -> dict:
    """The derivatives' reply; out of time said as the full kernel says it, so `check` calls it too large
    (exit 2) here too, and out of memory as check_memory.within_memory says it (the checker's or the expression's).
    Out of memory elsewhere raises on to wiring.answer_requests, which says it the same way."""
    try:
        with time_limit(protocol.OP_SECONDS):
            from gradrepl.kernel.check_memory import within_memory
            from gradrepl.kernel.symbolic import checks

            return protocol.reply(msg_id, **within_memory(lambda: {"check": checks.derivatives(expr)}, False))
    except Overtime:
        return protocol.reply(msg_id, ok=False, exhausted="time",
                              error={"code": "gave_up", "names": {"op": "check_expr", "seconds": protocol.OP_SECONDS}})


def serve(cmd_fd: int, reply_fd: int, out_fd: int, err_fd: int, policy: dict) -> None:
    """Become the sympy-only kernel: wire the fds, harden the process, answer requests until EOF."""
    wiring.wire_fds(cmd_fd, reply_fd, out_fd, err_fd)
    faulthandler.enable(file=2, all_threads=False)
    try:
        layers = wiring.harden(policy)
        wiring.send_ready(reply_fd, layers)
        wiring.answer_requests(cmd_fd, reply_fd, handle)
    except MemoryError:  # outside any request's reply (the limit is a few MiB): said by the exit status
        os._exit(protocol.OUT_OF_MEMORY_EXIT)
    os._exit(0)


def main(argv: list[str] | None = None) -> None:
    """``python -m gradrepl.kernel.symbolic_kernel CMD REPLY OUT ERR INTERRUPT NONCE POLICY_JSON``, as the worker."""
    args = wiring.spawn_args(argv)
    serve(args.cmd_fd, args.reply_fd, args.out_fd, args.err_fd, args.policy)


if __name__ == "__main__":
    main()
