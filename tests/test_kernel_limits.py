"""Limits no size counts: files in scratch and threads of a kernel. A real kernel runs into each;
judged from outside (the scratch tmpfs as the host sees it, /proc of the kernel) and by the
kernel answering the next step."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gradrepl.kernel.options import KernelOptions
from gradrepl.kernel.sandbox import parse_size
from gradrepl.session import Session

DISK = parse_size("16M")


@pytest.fixture
async def capped():
    async with Session(KernelOptions(disk_limit=DISK)) as live:
        yield live


def require(session: Session, layer: str) -> None:
    state = session.sandbox.get(layer, {"active": False, "detail": "not reported"})
    if not state["active"]:
        pytest.skip(f"{layer} not active here: {state['detail']}")


def scratch_seen_from_outside(session: Session) -> Path:
    """The kernel's scratch folder as the host reaches it: through the kernel's own mount namespace."""
    return Path(f"/proc/{session.kernel_info['pid']}/root") / session.client.scratch_dir.lstrip("/")


async def test_scratch_holds_a_bounded_number_of_files_and_says_so(capped):
    require(capped, "disk")
    scratch = scratch_seen_from_outside(capped)
    files = os.statvfs(scratch).f_files
    assert files <= max(4096, DISK // 4096), f"scratch allows {files:,} files under a {DISK >> 20} MiB limit"
    flood = (f"import os\nos.mkdir('many')\nfor made in range({files + 100}):\n"
             "    open(f'many/{made}', 'w').close()")
    result = await capped.execute(flood)
    assert result.error is not None and "Errno 28" in result.error.message, result.error
    assert result.error.explanation and "files" in result.error.explanation, result.error.explanation
    assert f"{files:,}" in result.error.explanation
    made = len(os.listdir(scratch / "many"))
    assert made < files
    alive = await capped.execute("made, len(os.listdir('many'))")
    assert alive.result == f"({made}, {made})", alive
    freed = await capped.execute("for name in os.listdir('many'):\n    os.remove(f'many/{name}')\n"
                                 "open('after.txt', 'w').write('room again')")
    assert freed.error is None, freed.error
