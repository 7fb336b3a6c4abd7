"""`gradrepl doctor` where user namespaces are refused (Docker's default seccomp profile): it says which
layers are missing and that the container is then the wall, and the layers that need no namespace stay."""

from __future__ import annotations

import json
import platform
import subprocess

import pytest

from tests.support import refusing_syscalls
from tests.support.paths import GRADREPL

REFUSE_NAMESPACES = refusing_syscalls.command("namespaces")
NAMESPACE_LAYERS = {"ipc", "mounts", "disk", "inodes"}

pytestmark = pytest.mark.skipif(platform.machine() != "x86_64", reason="the wrapper's filter has x86_64 numbers")


def doctor(*wrapper: str, as_json: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([*wrapper, *GRADREPL, "doctor", *(["--json"] if as_json else [])],
                          capture_output=True, text=True, timeout=180)


def test_without_user_namespaces_doctor_names_the_missing_layers_and_the_wall():
    done = doctor(*REFUSE_NAMESPACES)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert NAMESPACE_LAYERS <= set(report["missing"]), report["missing"]
    assert "container is then the wall" in report["wall"]
    layers = report["sandbox"]
    for kept in ("files", "syscalls", "capabilities", "no_new_privs", "memory"):
        assert layers[kept]["active"], (kept, layers[kept])
    assert layers["network"]["active"] and "refuses every new socket" in layers["network"]["detail"]

    text = " ".join(doctor(*REFUSE_NAMESPACES, as_json=False).stdout.split())
    assert "MISSING mounts" in text and "The container is then the wall" in text


def test_with_user_namespaces_doctor_speaks_of_no_container():
    report = json.loads(doctor().stdout)
    if "mounts" in report["missing"]:
        pytest.skip(f"this machine refuses namespaces itself: {report['sandbox']['mounts']['detail']}")
    assert "wall" not in report
