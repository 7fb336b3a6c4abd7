"""The kernel's environment is an allow-list: agent sockets, display servers and secrets of the frontend's
environment never reach learner code, neither in os.environ nor in the environment the process was
started with (/proc/self/environ: for a forked kernel, the zygote's)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from tests.support.paths import ROOT
from tests.support.pty import GRADREPL_COMMAND

from gradrepl.client.options import KernelOptions
from gradrepl.session import Session

SECRETS = {
    "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock", "SSH_AGENT_PID": "4242", "GPG_AGENT_INFO": "/tmp/gpg",
    "DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0", "XAUTHORITY": "/tmp/.Xauthority",
    "DBUS_SESSION_BUS_ADDRESS": "unix:path=/tmp/bus", "XDG_RUNTIME_DIR": "/tmp/runtime",
    "TMUX": "/tmp/tmux-0/default,1,0", "KRB5CCNAME": "FILE:/tmp/krb5cc",
    "GITHUB_TOKEN": "ghp_fake", "HF_TOKEN": "hf_fake", "AWS_ACCESS_KEY_ID": "AKIAFAKE",
    "AWS_SECRET_ACCESS_KEY": "fake/secret", "OPENAI_API_KEY": "sk-fake", "DATABASE_PASSWORD": "hunter2",
    "MY_APP_SECRET": "fake", "SOME_UNRELATED_SETTING": "not the kernel's business",
    "PYTHONSTARTUP": "/tmp/startup.py",
    # The dynamic loader's code variables: empty, so that the frontend itself loads nothing from them.
    "LD_PRELOAD": "", "LD_AUDIT": "",
}

REPORT = ("import json, os\n"
          "started = open('/proc/self/environ', 'rb').read().split(b'\\0')\n"
          "print(json.dumps({'environ': dict(os.environ), "
          "'started': sorted(item.split(b'=', 1)[0].decode() for item in started if item)}))\n")


def leaked(report: dict) -> list[str]:
    return sorted(name for name in SECRETS if name in report["environ"] or name in report["started"])


@pytest.mark.timeout(300)
def test_run_gives_the_kernel_none_of_the_frontends_secrets(tmp_path):
    script = tmp_path / "environ.py"
    script.write_text(REPORT)
    lessons = ROOT / "lessons"
    env = {**os.environ, **SECRETS, "GRADREPL_LESSONS": str(lessons), "LANG": "C.UTF-8", "TZ": "Europe/Paris"}
    done = subprocess.run([GRADREPL_COMMAND, "run", "--json", str(script)], capture_output=True, text=True,
                          timeout=240, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    step = [line for line in map(json.loads, done.stdout.splitlines()) if line["type"] == "step"][-1]
    report = json.loads(step["stdout"])
    assert not leaked(report), f"reached the kernel: {leaked(report)}"
    environ = report["environ"]
    # What Python, torch and the tutor read is kept.
    assert environ["GRADREPL_LESSONS"] == str(lessons)
    assert environ["LANG"] == "C.UTF-8" and environ["TZ"] == "Europe/Paris"
    assert environ["OMP_NUM_THREADS"] == "1" and environ["MALLOC_ARENA_MAX"] == "2"
    # HOME, the XDG folders and TMPDIR are the kernel's scratch folder (set by the kernel itself).
    assert environ["HOME"] == environ["TMPDIR"] == environ["XDG_CACHE_HOME"]


async def test_a_spawned_kernel_gets_none_of_them_either(monkeypatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    async with Session(KernelOptions(spawn=True)) as session:
        result = await session.execute(REPORT)
        assert session.kernel_info["mode"] == "spawn"
    assert result.error is None, result.error
    report = json.loads(result.stdout)
    assert not leaked(report), f"reached the kernel: {leaked(report)}"
