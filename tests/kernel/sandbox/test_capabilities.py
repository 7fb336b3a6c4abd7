"""No capability is left in a kernel once its sandbox is set up, judged from /proc outside it.

The kernel sets up its namespaces with full capabilities in a user namespace of its own;
with any of them left, the mount API (open_tree, mount_setattr) could undo the read-only
view. The test process reads the kernel's status as Linux reports it, not as the kernel says.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from tests.support.paths import ROOT

CAP_SETS = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")


def capability_sets(pid: int) -> dict[str, int]:
    sets = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in CAP_SETS:
            sets[name] = int(value.strip(), 16)
    return sets


def thread_capability_sets(pid: int) -> dict[str, dict[str, int]]:
    """Capabilities are per thread: every thread of the kernel, torch's pool included."""
    return {task.name: capability_sets(int(task.name)) for task in Path(f"/proc/{pid}/task").iterdir()}


async def test_a_kernel_holds_no_capability_in_any_set(session):
    await session.execute("import torch\n(torch.ones(64, 64) @ torch.ones(64, 64)).sum()")  # threads exist
    pid = session.kernel_info["pid"]
    assert capability_sets(pid) == dict.fromkeys(CAP_SETS, 0), capability_sets(pid)
    for task, sets in thread_capability_sets(pid).items():
        assert sets == dict.fromkeys(CAP_SETS, 0), (task, sets)
    layer = session.sandbox.get("capabilities")
    assert layer is not None and layer["active"], layer


def test_doctor_reports_the_capabilities_layer() -> None:
    done = subprocess.run([sys.executable, "-m", "gradrepl.cli", "doctor", "--json"], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    layer = json.loads(done.stdout)["sandbox"].get("capabilities")
    assert layer is not None, "doctor does not report a capabilities layer"
    assert layer["active"] or layer["detail"].startswith("missing"), layer
    if layer["active"]:
        assert "bounding" in layer["detail"] and "ambient" in layer["detail"], layer
