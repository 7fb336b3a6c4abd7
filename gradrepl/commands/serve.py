"""`gradrepl serve`: the tutor in a browser, one tutor process and sandboxed kernel per tab (gradrepl/serve/)."""

from __future__ import annotations

import argparse
import os
import re
import secrets
import sys

from gradrepl.errors import UsageError


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "serve", help="serve the tutor to browsers: one learner per tab (for a class)",
        description="Serve the tutor's TUI to web browsers (textual-serve). Each tab is one learner with its own "
                    "tutor process and sandboxed kernel; all kernels fork from one warm template. A reload "
                    "within 60 s finds the same session. Needs the 'serve' extra: pip install 'gradrepl[serve]'. "
                    "Exit status: 0 after SIGTERM or Ctrl-C, 2 for a usage error, 1 if it could not start.",
        epilog="The token is printed once, in the address to open; give your own with --token or GRADREPL_TOKEN. "
               "See docs/classroom.md for JupyterHub.")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0: any free port)")
    token = parser.add_mutually_exclusive_group()
    token.add_argument("--token", help="the token learners' addresses carry (default: GRADREPL_TOKEN, or a "
                                       "random one)")
    token.add_argument("--no-token", action="store_true",
                       help="no token: only behind a hub or proxy that authenticates (refused on a non-loopback host)")
    parser.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                        help="a name the server may be called by (its Host, or X-Forwarded-Host behind a proxy), "
                             "besides localhost, 127.0.0.1, [::1] and --host; repeatable. Other names get 403: "
                             "a DNS-rebinding site cannot reach the tutor. '*': any name (needs the token)")
    parser.add_argument("--base-url", default="/", help="path prefix the server answers under (default /)")
    parser.add_argument("--max-sessions", type=int, metavar="N", help="at most N learners at once")
    parser.add_argument("--idle-timeout", metavar="T", help="end a session whose learner typed nothing for T "
                                                            "(e.g. 30m, 2h, 90s)")
    parser.add_argument("--lessons", metavar="DIR", help="the course folder every learner's tutor reads")
    parser.add_argument("--learners-dir", metavar="DIR",
                        help="where named learners (?learner=NAME) keep history and progress (default: a "
                             "folder removed when the server stops)")
    parser.add_argument("--memory-limit", metavar="SIZE", help="memory each learner's kernel may use")
    parser.add_argument("--disk-limit", metavar="SIZE", help="scratch space per learner (default 256M)")
    # Seconds a tab's tutor outlives its websocket (60); changed by the tests only.
    parser.add_argument("--reattach-grace", type=float, help=argparse.SUPPRESS)


def parse_duration(text: str) -> float:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", text)
    if not match or float(match.group(1)) <= 0:
        raise UsageError(f"--idle-timeout: {text!r} is no duration (e.g. 30m, 2h, 90s)")
    return float(match.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[match.group(2)]


def serve_options(args: argparse.Namespace):
    from gradrepl.host.budgets import parse_size
    from gradrepl.serve.access import is_loopback
    from gradrepl.serve.server import ServeOptions

    token = None if args.no_token else (args.token or os.environ.get("GRADREPL_TOKEN") or secrets.token_urlsafe(24))
    if token is None and not is_loopback(args.host):
        raise UsageError(f"--no-token on {args.host}: anyone who reaches this address would get a tutor; "
                         "without a token bind to 127.0.0.1 (behind a hub or proxy)")
    if token is None and "*" in args.allow_host:
        raise UsageError("--allow-host '*' with --no-token: any site whose name points here could reach the "
                         "tutor (DNS rebinding); name the hosts, or keep the token")
    if args.max_sessions is not None and args.max_sessions < 1:
        raise UsageError("--max-sessions must be at least 1")
    if args.lessons and not os.path.isdir(args.lessons):
        raise UsageError(f"--lessons: {args.lessons} is not a folder")
    try:
        disk = parse_size(args.disk_limit) if args.disk_limit else 256 << 20
        if args.memory_limit:
            parse_size(args.memory_limit)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return ServeOptions(host=args.host, port=args.port, token=token, base_url=args.base_url,
                        max_sessions=args.max_sessions,
                        idle_timeout=parse_duration(args.idle_timeout) if args.idle_timeout else None,
                        lessons=args.lessons, learners_dir=args.learners_dir and os.path.abspath(args.learners_dir),
                        disk_limit=disk, grace=args.reattach_grace,
                        allow_hosts=tuple(args.allow_host))


def run(args: argparse.Namespace) -> int:
    try:
        import aiohttp  # noqa: F401
        import textual_serve  # noqa: F401
    except ImportError:
        print("gradrepl serve: needs the 'serve' extra: pip install 'gradrepl[serve]'", file=sys.stderr)
        return 1
    import asyncio

    from gradrepl.serve.server import ClassroomServer

    options = serve_options(args)
    flags = []
    for flag, value in (("--memory-limit", args.memory_limit), ("--disk-limit", args.disk_limit)):
        if value:
            flags += [flag, value]
    server = ClassroomServer(options, flags)

    def ready(server) -> None:
        address = server.url() + (f"?token={options.token}" if options.token else "")
        # Said once, to whoever started the server (as jupyter does); never logged again.
        print(f"gradrepl serve: open {address}", flush=True)

    try:
        asyncio.run(server.run_until_signalled(ready))
    except OSError as exc:
        print(f"gradrepl serve: could not start: {exc}", file=sys.stderr)
        return 1
    return 0
