"""The process side of gradrepl serve's tutor template (serve/tutor_template.py says why): imports
what a tutor needs once, then forks one tutor per request, each taking the tab's pipes, environment
and folder, and reports each child's exit. One thread; `python -m gradrepl.tutor_fork FD`."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys

def _warm() -> None:
    """Import what a tutor imports before its first frame and just after it (its session, the kernel
    client, the magics), then draw that first frame once, headless and without a kernel, and highlight its
    input: the modules it imports on the way and what Textual, Rich and the code input's grammar and query
    keep from it are then every tab's from the fork, and a tab's first frame costs its own compose and paint
    only. Ten tabs at once on two cores otherwise each pay it all, and each other tab's session imports
    beside it."""
    import asyncio
    import gc

    import gradrepl.cli  # noqa: F401
    import gradrepl.commands.common  # noqa: F401
    import gradrepl.session.session  # noqa: F401
    import gradrepl.session.steps  # noqa: F401
    import textual.drivers.web_driver  # noqa: F401
    from gradrepl.history import History
    from gradrepl.tui.app import GradReplApp
    from gradrepl.tui.console.code_input import CodeInput

    async def rehearse() -> None:
        app = GradReplApp(start_kernel=False, history=History(None))
        async with app.run_test(size=(120, 36)) as pilot:
            await pilot.pause()
            app.query_one(CodeInput)._highlight_python()  # tree-sitter's query: compiled once (code_input.py)

    try:
        asyncio.run(rehearse())
    except Exception:
        pass  # a tab then draws it all itself, as before
    gc.collect()
    gc.freeze()  # the template's objects: no tutor's collection walks (and so copies) them


def _die_with_parent() -> None:
    """SIGKILL when the parent ends (prctl PR_SET_PDEATHSIG): nothing outlives the server."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)


def _send(sock: socket.socket, event: dict) -> None:
    try:
        sock.sendall((json.dumps(event) + "\n").encode())
    except OSError:
        pass


def _run_child(sock: socket.socket, wakeup: tuple[int, int], fds: list[int], request: dict) -> None:
    """In the forked child: become the tab's tutor, then exit with its status (never returns)."""
    status = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        sock.close()
        for fd in wakeup:
            os.close(fd)
        os.setsid()  # its own group: the server stops a tutor by signalling its group
        _die_with_parent()  # the template's exit reports every child gone: make it true
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = ["gradrepl", *request["flags"]]
        from gradrepl.cli import main

        status = main(list(request["flags"])) or 0
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(status)


def serve(fd: int) -> None:
    """The template's loop: fork a tutor per request, report each child's exit."""
    _die_with_parent()
    sock = socket.socket(fileno=fd)
    _warm()
    wakeup = os.pipe()
    os.set_blocking(wakeup[1], False)
    signal.set_wakeup_fd(wakeup[1])
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so the wakeup fd is written
    _send(sock, {"event": "ready"})

    buffer, fds = b"", []
    while True:
        readable, _, _ = select.select([sock, wakeup[0]], [], [])
        if wakeup[0] in readable:
            os.read(wakeup[0], 4096)
            while True:
                try:
                    pid, status = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    break
                _send(sock, {"event": "exit", "pid": pid, "status": status})
        if sock not in readable:
            continue
        data, more, _, _ = socket.recv_fds(sock, 1 << 20, 8)
        fds += more
        if not data:
            return  # the server is gone
        buffer += data
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            taken, fds = fds[:3], fds[3:]
            try:
                request = json.loads(line)
                if len(taken) != 3:
                    raise ValueError("a tutor needs three streams")
                pid = os.fork()
            except (OSError, ValueError) as exc:
                _send(sock, {"event": "error", "error": str(exc)})
            else:
                if pid == 0:
                    _run_child(sock, wakeup, taken, request)
                _send(sock, {"event": "forked", "pid": pid})
            for taken_fd in taken:
                os.close(taken_fd)


if __name__ == "__main__":
    serve(int(sys.argv[1]))
