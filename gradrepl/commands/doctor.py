"""`gradrepl doctor`: start a kernel and say which sandbox layers protect it on this machine."""

from __future__ import annotations

import argparse
import sys
import textwrap

from gradrepl import __version__
from gradrepl.commands.common import (add_kernel_options, emit_json, exit_codes, INTERRUPTED_EXIT, kernel_options,
                                     run_async, USAGE_EXIT)


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "doctor", help="start a kernel and list each sandbox layer as active or missing",
        description="Start a sandboxed kernel the way every other command does and report, layer by "
                    "layer, what confines learner code on this machine, and why a layer is missing.",
        epilog=exit_codes("0 a kernel started and its sandbox was reported (layers this machine lacks are listed, not an error)",
                          "1 no kernel could start",
                          USAGE_EXIT,
                          INTERRUPTED_EXIT))
    parser.add_argument("--json", action="store_true", help="one JSON object instead of a table")
    add_kernel_options(parser)


def run(args: argparse.Namespace) -> int:
    return run_async(_doctor(args.json, kernel_options(args, one_shot=True)))


async def _doctor(as_json: bool, options) -> int:
    from gradrepl.client.kernel_client import KernelDied
    from gradrepl.session import Session

    session = Session(options)
    try:
        await session.start()
    except KernelDied as died:
        if as_json:
            emit_json({"type": "doctor", "gradrepl": __version__, "error": died.reason})
        else:
            print(f"gradrepl doctor: no kernel could start: {died.reason}", file=sys.stderr)
        await session.close()
        return 1
    try:
        report = summarize(session.sandbox)
        if as_json:
            emit_json({"type": "doctor", "gradrepl": __version__, "kernel": session.kernel_info, **report})
        else:
            print(render(session.kernel_info, report))
    finally:
        await session.close()
    return 0


def summarize(sandbox: dict[str, dict]) -> dict:
    """The layers plus counts: how many are active, and which are missing."""
    missing = [name for name, layer in sandbox.items() if not layer["active"] and not _turned_off(layer)]
    off = [name for name, layer in sandbox.items() if _turned_off(layer)]
    report = {"sandbox": sandbox, "active": len(sandbox) - len(missing) - len(off), "total": len(sandbox),
              "missing": missing, "off": off}
    if _namespaces_refused(sandbox):
        report["wall"] = CONTAINER_WALL
    return report


# Docker's default seccomp profile (and some hardened hosts) refuse unshare: then the namespace layers
# are missing whatever gradrepl does, and what stands around learner code is the container itself.
CONTAINER_WALL = ("User namespaces are refused on this machine, as inside a container with Docker's default "
                  "seccomp profile: the ipc, mounts, disk and inodes layers cannot exist here, so learner code "
                  "may change permissions, times and extended attributes of the files it owns, and scratch has "
                  "no cap on its total size or its number of files. The container is then the wall: give each learner a container of their own, with "
                  "memory and CPU limits, the course mounted read-only, and nothing else of value inside.")


def _namespaces_refused(sandbox: dict[str, dict]) -> bool:
    mounts = sandbox.get("mounts", {})
    return not mounts.get("active", True) and "unshare" in mounts.get("detail", "")


def _turned_off(layer: dict) -> bool:
    # A layer relaxed by a flag (e.g. --allow-network) is a choice, not a gap in the machine.
    return not layer["active"] and layer["detail"].startswith("off:")


def render(kernel: dict, report: dict) -> str:
    """A plain table: one line per layer, active or missing, with what it does or why it is absent."""
    startup = f", ready in {kernel['startup_ms']:.0f} ms" if kernel.get("startup_ms") is not None else ""
    lines = [f"Sandbox of a fresh kernel (pid {kernel.get('pid')}, {kernel.get('mode')} mode{startup})", ""]
    width = max((len(name) for name in report["sandbox"]), default=0)
    for name, layer in report["sandbox"].items():
        state = "active " if layer["active"] else "off    " if _turned_off(layer) else "MISSING"
        lines.append(f"  {state}  {name:<{width}}  {layer['detail']}")
    if not report["sandbox"]:
        lines.append("  the kernel reported no sandbox layers")
    off = f", {len(report['off'])} turned off by a flag" if report["off"] else ""
    lines += ["", f"{report['active']} of {report['total']} layers active{off}."]
    if report["missing"]:
        lines.append("Missing layers leave learner code less confined; the others still apply.")
    if report.get("wall"):
        lines += ["", textwrap.fill(report["wall"], 100)]
    return "\n".join(lines)
