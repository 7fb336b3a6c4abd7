"""Each sandbox layer, applied in a real forked child: it works wherever it reports active.

A layer the machine lacks is skipped with the reason the sandbox gave. The child
runs a probe after ``apply`` and sends what happened back as JSON over a pipe.
"""

from __future__ import annotations

import ctypes
import errno
import json
import linecache
import os
import platform
import resource
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Callable

import pytest
from tests.support.process import outlives, run_in_fork

from gradrepl.kernel.sandbox import layers as sandbox
from gradrepl.host.budgets import default_memory_limit, parse_size
from gradrepl.kernel.sandbox import Policy, apply, refusal
from gradrepl.views.refusals import refusal_words
from tests.support.cli import gradrepl
from tests.support.paths import ROOT

MiB = 1 << 20
BUDGET = 128 * MiB
REFUSED = (errno.EACCES, errno.EROFS)    # Landlock says EACCES; the read-only mounts say EROFS first
LAYERS = ("process_group", "oom_score", "network", "parent_death", "scratch", "limits",
          "no_new_privs", "files", "signals", "memory", "capabilities", "syscalls", "ipc", "mounts", "disk",
          "import_path", "inodes", "threads")


def attempt(action: Callable[[], Any]) -> dict:
    """Run one action inside the sandbox: its value, or the exception it raised."""
    try:
        value = action()
        return {"ok": True, "value": value if isinstance(value, (int, float, str, bool, list, type(None))) else repr(value)}
    except BaseException as exc:  # noqa: BLE001 - the probe reports whatever happened
        return {"ok": False, "type": type(exc).__name__, "errno": getattr(exc, "errno", None), "text": str(exc)}


def run_sandboxed(policy: Policy, probe: Callable[[], dict], needs: str | None = None) -> tuple[dict, dict]:
    """Fork, apply ``policy`` in the child, run ``probe`` there; returns (report, probe result).

    With ``needs``, the probe runs only if that layer is active (it would do harm otherwise).
    """
    # The probes' own lines, as a kernel has the learner's in linecache: the child may not read this file.
    linecache.getlines(__file__)

    def child() -> dict:
        report = apply(policy)
        runs = needs is None or report[needs]["active"]
        return {"report": report, "probe": probe() if runs else {}}

    payload = run_in_fork(child)
    return payload["report"], payload["probe"]


def require(report: dict, layer: str) -> None:
    if not report[layer]["active"]:
        pytest.skip(f"{layer} not active here: {report[layer]['detail']}")


@pytest.fixture
def dirs(tmp_path: Path) -> dict[str, Path]:
    paths = {name: tmp_path / name for name in ("scratch", "workspace", "outside")}
    for path in paths.values():
        path.mkdir()
    return paths


@pytest.fixture
def policy(dirs: dict[str, Path]) -> Policy:
    return Policy(memory_limit=BUDGET, allow_network=False, scratch_dir=str(dirs["scratch"]), workspace=None)


# --- sizes -------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("2G", 2 << 30), ("512M", 512 << 20), ("1.5g", 3 << 29), ("800000", 800000),
    ("64KiB", 64 << 10), (" 3 GB ", 3 << 30), ("1t", 1 << 40), ("100b", 100),
])
def test_parse_size_reads_units(text: str, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "G", "abc", "2X", "-1G", "0", "1.5.5G", "2 G B", "0.0001K"])
def test_parse_size_rejects_nonsense_with_a_clear_message(text: str) -> None:
    with pytest.raises(ValueError, match="invalid size") as caught:
        parse_size(text)
    assert repr(text) in str(caught.value)


def test_default_memory_limit_is_a_share_of_the_machine() -> None:
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert 0 < default_memory_limit() <= min(4 << 30, ram // 2)


# --- the report --------------------------------------------------------------------------

def test_report_names_every_layer_with_a_reason(policy: Policy) -> None:
    report, _ = run_sandboxed(policy, lambda: {})
    assert set(report) == set(LAYERS)
    for layer, state in report.items():
        assert isinstance(state["active"], bool), layer
        assert state["detail"].strip(), layer
        if not state["active"]:
            assert state["detail"].startswith(("missing", "needs", "off:")), state


# --- process layers ----------------------------------------------------------------------

def test_kernel_leads_its_own_session(policy: Policy) -> None:
    report, probe = run_sandboxed(policy, lambda: {"sid": os.getsid(0), "pgid": os.getpgid(0), "pid": os.getpid()})
    require(report, "process_group")
    assert probe["sid"] == probe["pid"] == probe["pgid"]
    assert probe["sid"] != os.getsid(0)


def test_kernel_is_first_to_go_when_memory_runs_out(policy: Policy) -> None:
    report, probe = run_sandboxed(policy, lambda: {"adj": Path("/proc/self/oom_score_adj").read_text().strip()})
    require(report, "oom_score")
    assert probe["adj"] == "1000"


def test_kernel_dies_with_its_parent(policy: Policy) -> None:
    """A middle process forks the sandboxed kernel and is killed; the kernel must follow it."""
    read_fd, write_fd = os.pipe()
    middle = os.fork()
    if middle == 0:
        if os.fork() == 0:
            report = apply(policy)
            os.write(write_fd, (json.dumps({"pid": os.getpid(), "report": report}) + "\n").encode())
            time.sleep(60)
            os._exit(0)
        time.sleep(60)
        os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd) as pipe:
        message = json.loads(pipe.readline())
    os.kill(middle, signal.SIGKILL)
    os.waitpid(middle, 0)
    kernel = message["pid"]
    outlived = outlives(kernel)
    require(message["report"], "parent_death")
    assert not outlived, "the kernel outlived its parent"


# --- limits and memory -------------------------------------------------------------------

def test_resource_limits_are_set_and_cannot_be_raised(policy: Policy) -> None:
    def probe() -> dict:
        limits = {name: resource.getrlimit(getattr(resource, name)) for name in ("RLIMIT_NOFILE", "RLIMIT_FSIZE", "RLIMIT_CORE", "RLIMIT_AS")}
        raise_as = attempt(lambda: resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY,) * 2))
        raise_files = attempt(lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (1 << 16,) * 2))
        return {"limits": {k: list(v) for k, v in limits.items()}, "raise_as": raise_as, "raise_files": raise_files}

    report, probe = run_sandboxed(policy, probe)
    require(report, "limits")
    limits = probe["limits"]
    assert limits["RLIMIT_CORE"] == [0, 0]
    assert limits["RLIMIT_FSIZE"] == [BUDGET, BUDGET]
    assert limits["RLIMIT_NOFILE"][0] == limits["RLIMIT_NOFILE"][1] <= sandbox.OPEN_FILES
    assert not probe["raise_files"]["ok"]
    if report["memory"]["active"]:
        assert not probe["raise_as"]["ok"]


def test_oversized_file_is_an_error_not_a_crash(policy: Policy, dirs: dict[str, Path]) -> None:
    small = Policy(8 * MiB, False, policy.scratch_dir, None)

    def probe() -> dict:
        chunk = b"x" * MiB

        def fill() -> None:
            with open("big.bin", "wb") as file:
                for _ in range(16):
                    file.write(chunk)
        return {"fill": attempt(fill), "after": attempt(lambda: 6 * 7)}

    report, probe = run_sandboxed(small, probe)
    require(report, "limits")
    assert probe["fill"]["type"] == "OSError" and probe["fill"]["errno"] == 27   # EFBIG
    assert probe["after"]["value"] == 42
    assert (dirs["scratch"] / "big.bin").stat().st_size == 8 * MiB


def test_memory_bombs_raise_memory_error_and_the_process_lives_on(policy: Policy) -> None:
    def probe() -> dict:
        huge = attempt(lambda: len(bytearray(4 * BUDGET)))

        def many_small() -> int:
            hoard = []
            while True:
                hoard.append([0] * 1000)
        bomb = attempt(many_small)
        after = attempt(lambda: sum(range(10_000)))
        limit = resource.getrlimit(resource.RLIMIT_AS)
        return {"huge": huge, "bomb": bomb, "after": after, "limit": list(limit),
                "vm": sandbox._vm_size()}

    report, probe = run_sandboxed(policy, probe)
    require(report, "memory")
    assert probe["huge"]["type"] == "MemoryError"
    assert probe["bomb"]["type"] == "MemoryError"
    assert probe["after"]["value"] == sum(range(10_000))
    soft, hard = probe["limit"]
    assert soft == hard and BUDGET < soft < BUDGET + 4 * probe["vm"]


# --- network -----------------------------------------------------------------------------

@pytest.fixture
def tcp_listener():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    yield server.getsockname()
    server.close()


@pytest.fixture
def unix_listener(tmp_path: Path):
    path = str(tmp_path / "listener.sock")
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen()
    yield path
    server.close()


def _connect_probe(address: tuple, unix_path: str) -> Callable[[], dict]:
    def probe() -> dict:
        start = time.monotonic()
        tcp = attempt(lambda: socket.create_connection(address, timeout=10).close())
        tcp_seconds = time.monotonic() - start

        def connect_unix() -> None:
            with socket.socket(socket.AF_UNIX) as client:
                client.settimeout(10)
                client.connect(unix_path)
        return {"tcp": tcp, "tcp_seconds": tcp_seconds, "unix": attempt(connect_unix),
                "netns": os.readlink("/proc/self/ns/net")}
    return probe


def test_no_connection_reaches_a_loopback_listener(policy: Policy, tcp_listener, unix_listener) -> None:
    report, probe = run_sandboxed(policy, _connect_probe(tcp_listener, unix_listener))
    require(report, "network")
    assert not probe["tcp"]["ok"], "connected to the test's loopback listener"
    assert probe["tcp"]["type"] != "TimeoutError", "the connect hung instead of failing fast"
    assert probe["tcp_seconds"] < 5
    assert not probe["unix"]["ok"], "connected to the test's UNIX socket"
    if "namespace" in report["network"]["detail"] and "instead" not in report["network"]["detail"]:
        assert probe["netns"] != os.readlink("/proc/self/ns/net")


def test_allow_network_lets_tcp_through_and_no_unix_socket(policy: Policy, tcp_listener, unix_listener) -> None:
    open_policy = Policy(policy.memory_limit, True, policy.scratch_dir, None)
    report, probe = run_sandboxed(open_policy, _connect_probe(tcp_listener, unix_listener))
    assert not report["network"]["active"]
    assert probe["tcp"]["ok"], probe["tcp"]
    if report["syscalls"]["active"]:              # --allow-network means AF_INET/AF_INET6 only
        assert not probe["unix"]["ok"], probe["unix"]


# --- files -------------------------------------------------------------------------------

def test_reads_only_from_the_allow_list(dirs: dict[str, Path], tmp_path: Path) -> None:
    """The home folder, its secrets, other terminals and the progress store cannot be read;
    Python, torch's lazy imports and the devices Python needs still can."""
    home = Path(os.environ["HOME"])
    (home / ".ssh").mkdir(exist_ok=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY")
    store = tmp_path / "gradrepl-home"
    store.mkdir(exist_ok=True)
    (store / "progress.sqlite3").write_bytes(b"SQLite format 3\0")
    (dirs["workspace"] / "data.txt").write_text("mine")
    master, slave = os.openpty()
    terminal = os.ttyname(slave)
    policy = Policy(BUDGET, False, str(dirs["scratch"]), str(dirs["workspace"]))

    def probe() -> dict:
        read = lambda path: Path(path).read_bytes()[:16].decode(errors="replace")    # noqa: E731
        return {
            "key": attempt(lambda: read(home / ".ssh" / "id_ed25519")),
            "home": attempt(lambda: os.listdir(home)),
            "shadow": attempt(lambda: read("/etc/shadow")),
            "store": attempt(lambda: read(store / "progress.sqlite3")),
            "terminal": attempt(lambda: os.open(terminal, os.O_RDONLY | os.O_NOCTTY)),
            "tmp": attempt(lambda: os.listdir("/tmp")),
            "workspace": attempt(lambda: read(dirs["workspace"] / "data.txt")),
            "urandom": attempt(lambda: len(open("/dev/urandom", "rb").read(4))),
            "proc": attempt(lambda: len(os.listdir("/proc/self/fd")) > 0),
            "stdlib": attempt(lambda: __import__("inspect").getsource(__import__("fractions").Fraction)[:5]),
            "site": attempt(lambda: __import__("numpy").zeros(2).tolist()),
            "words": attempt(lambda: refusal_words(*refusal(_refusal(lambda: read("/etc/shadow"))))),
        }

    report, probe = run_sandboxed(policy, probe, needs="files")
    os.close(master)
    os.close(slave)
    require(report, "files")
    for action in ("key", "home", "shadow", "store", "terminal", "tmp"):
        assert probe[action]["type"] == "PermissionError", (action, probe[action])
    assert probe["workspace"]["value"] == "mine"
    assert probe["urandom"]["value"] == 4 and probe["proc"]["value"] is True
    assert probe["stdlib"]["value"] == "class" and probe["site"]["value"] == [0.0, 0.0]
    assert "Reads are limited" in probe["words"]["value"]


def _refusal(action: Callable[[], Any]) -> BaseException:
    try:
        action()
    except BaseException as exc:  # noqa: BLE001 - the refusal itself is the value
        return exc
    raise AssertionError("the action was not refused")


def test_writes_only_in_scratch_and_workspace(dirs: dict[str, Path]) -> None:
    (dirs["outside"] / "notes.txt").write_text("readable")
    policy = Policy(BUDGET, False, str(dirs["scratch"]), str(dirs["workspace"]))

    def probe() -> dict:
        def write(path: str) -> None:
            with open(path, "w") as file:
                file.write("learner")

        def rename_inside() -> None:
            os.makedirs("sub/deeper")
            write("sub/a.txt")
            os.rename("sub/a.txt", "sub/deeper/b.txt")
        return {
            "cwd": os.getcwd(),
            "relative": attempt(lambda: write("here.txt")),
            "rename": attempt(rename_inside),
            "workspace": attempt(lambda: write(os.path.join(str(dirs["workspace"]), "w.txt"))),
            "outside": attempt(lambda: write(os.path.join(str(dirs["outside"]), "evil.txt"))),
            "overwrite": attempt(lambda: write(os.path.join(str(dirs["outside"]), "notes.txt"))),
            "mkdir": attempt(lambda: os.mkdir(os.path.join(str(dirs["outside"]), "d"))),
            "tmp": attempt(lambda: write("/tmp/gradrepl-sandbox-escape.txt")),
            "read": attempt(lambda: Path(dirs["outside"], "notes.txt").read_text()),
            "devnull": attempt(lambda: write("/dev/null")),
            "import": attempt(lambda: __import__("fractions").Fraction(1, 3).denominator),
            "tempfile": attempt(lambda: __import__("tempfile").mkstemp()[1]),
        }

    report, probe = run_sandboxed(policy, probe, needs="files")
    require(report, "files")
    assert probe["cwd"] == str(dirs["scratch"])
    assert (dirs["scratch"] / "here.txt").read_text() == "learner"
    assert probe["rename"]["ok"] and (dirs["scratch"] / "sub/deeper/b.txt").exists()
    assert probe["workspace"]["ok"] and (dirs["workspace"] / "w.txt").exists()
    for action in ("outside", "overwrite", "mkdir", "tmp"):
        assert probe[action]["errno"] in REFUSED, (action, probe[action])
    assert not (dirs["outside"] / "evil.txt").exists()
    assert not (dirs["outside"] / "d").exists()
    assert (dirs["outside"] / "notes.txt").read_text() == "readable"
    assert not Path("/tmp/gradrepl-sandbox-escape.txt").exists()
    assert probe["read"]["type"] == "PermissionError", probe["read"]
    assert probe["devnull"]["ok"] and probe["import"]["value"] == 3
    assert probe["tempfile"]["value"].startswith(str(dirs["scratch"]))


# --- signals and syscalls ----------------------------------------------------------------

def test_signals_stay_inside_the_kernel(policy: Policy) -> None:
    parent = os.getpid()
    report, probe = run_sandboxed(policy, lambda: {
        "parent": attempt(lambda: os.kill(parent, 0)),
        "init": attempt(lambda: os.kill(1, 0)),
        "self": attempt(lambda: os.kill(os.getpid(), 0)),
    })
    require(report, "signals")
    assert probe["parent"]["type"] == "PermissionError"
    assert probe["init"]["type"] == "PermissionError"
    assert probe["self"]["ok"]


def test_no_new_programs_or_processes_but_threads_work(policy: Policy) -> None:
    def probe() -> dict:
        from concurrent.futures import ThreadPoolExecutor

        def threads() -> list[int]:
            with ThreadPoolExecutor(4) as pool:
                return list(pool.map(lambda n: n * n, range(8)))
        libc = ctypes.CDLL(None, use_errno=True)
        return {
            "fork": attempt(os.fork),
            "subprocess": attempt(lambda: subprocess.run(["true"]).returncode),
            "exec": attempt(lambda: os.execv("/bin/true", ["true"])),
            "posix_spawn": attempt(lambda: os.posix_spawn("/bin/true", ["true"], {})),
            "unshare": attempt(lambda: [libc.unshare(0x40000000), ctypes.get_errno()]),
            "threads": attempt(threads),
        }

    report, probe = run_sandboxed(policy, probe, needs="syscalls")
    require(report, "syscalls")
    for action in ("fork", "subprocess", "exec", "posix_spawn"):
        assert probe[action]["type"] == "PermissionError", (action, probe[action])
    assert probe["unshare"]["value"] == [-1, 1]        # EPERM
    assert probe["threads"]["value"] == [n * n for n in range(8)]


# --- torch, the way a kernel holds it ------------------------------------------------------

TORCH_PROBE = textwrap.dedent("""
    import json, os, sys
    import torch
    from gradrepl.kernel.sandbox import Policy, apply

    # As the zygote does: import torch, run no op, fork the kernel.
    pid = os.fork()
    if pid:
        _, status = os.waitpid(pid, 0)
        sys.exit(os.waitstatus_to_exitcode(status))

    def attempt(action):
        try:
            return {"ok": True, "value": action()}
        except BaseException as exc:
            return {"ok": False, "type": type(exc).__name__, "text": str(exc)[:200]}

    report = apply(Policy(int(sys.argv[2]), False, sys.argv[1], None))
    torch.set_num_threads(2)
    out = {"report": report}
    out["huge"] = attempt(lambda: torch.empty(1 << 40, dtype=torch.uint8).numel())

    def bomb():
        hoard = []
        while True:
            hoard.append(torch.ones(1 << 20))
    out["bomb"] = attempt(bomb)
    a = torch.randn(512, 512, requires_grad=True)
    out["matmul"] = attempt(lambda: float((a @ a).sum().backward() or a.grad.abs().sum() > 0))
    out["save"] = attempt(lambda: torch.save({"w": torch.arange(3)}, "model.pt"))
    out["load"] = attempt(lambda: torch.load("model.pt")["w"].tolist())
    print(json.dumps(out))
    sys.stdout.flush()
    os._exit(0)
""")


def test_torch_memory_errors_are_clean_and_torch_keeps_working(dirs: dict[str, Path]) -> None:
    pytest.importorskip("torch")
    done = subprocess.run([sys.executable, "-c", TORCH_PROBE, str(dirs["scratch"]), str(512 * MiB)],
                          capture_output=True, text=True, timeout=120,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    require(out["report"], "memory")
    assert out["huge"]["type"] == "RuntimeError" and "allocate" in out["huge"]["text"]
    assert out["bomb"]["type"] == "RuntimeError"
    assert out["matmul"]["value"] == 1.0
    assert out["load"]["value"] == [0, 1, 2]
    assert (dirs["scratch"] / "model.pt").exists()


# --- gradrepl doctor ------------------------------------------------------------------------

def test_doctor_reports_each_layer_of_a_real_kernel() -> None:
    done = gradrepl("doctor", "--json", "--memory-limit", "1G")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert set(report["sandbox"]) == set(LAYERS) | {"interrupt_page", "replies"}  # the client adds its own two
    assert report["active"] == sum(layer["active"] for layer in report["sandbox"].values())
    assert report["missing"] == [name for name, layer in report["sandbox"].items() if not layer["active"]]
    if report["sandbox"]["memory"]["active"]:
        assert "budget 1.0 GiB" in report["sandbox"]["memory"]["detail"]
    table = gradrepl("doctor")
    assert table.returncode == 0, table.stderr
    for name, layer in report["sandbox"].items():
        assert any(name in line and ("active" if layer["active"] else "MISSING") in line
                   for line in table.stdout.splitlines()), name


def test_doctor_shows_a_relaxed_layer_as_off() -> None:
    report = json.loads(gradrepl("doctor", "--json", "--allow-network").stdout)
    assert report["sandbox"]["network"]["active"] is False
    assert report["off"] == ["network"] and "network" not in report["missing"]


def test_doctor_rejects_a_bad_memory_limit_in_one_line() -> None:
    done = gradrepl("doctor", "--memory-limit", "lots")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "gradrepl: error: --memory-limit: invalid size 'lots': use a number with an optional unit "
        "K, M, G or T, e.g. 2G or 512M"]


# --- words for the learner -----------------------------------------------------------------

def test_each_refusal_is_explained_in_words(policy: Policy, dirs: dict[str, Path], tcp_listener) -> None:
    def probe() -> dict:
        def words(action: Callable[[], Any]) -> str | None:
            try:
                action()
            except BaseException as exc:  # noqa: BLE001 - any refusal is explained, or not
                found = refusal(exc)
                return refusal_words(*found) if found else None  # as the frontend words the kernel's code
            return "no error"
        return {
            "file": words(lambda: open(os.path.join(str(dirs["outside"]), "x.txt"), "w")),
            "fork": words(lambda: os.fork()),
            "program": words(lambda: subprocess.run(["ls"])),
            "connect": words(lambda: socket.create_connection(tcp_listener, timeout=5)),
            "dns": words(lambda: socket.getaddrinfo("example.com", 80)),
            "signal": words(lambda: os.kill(1, signal.SIGTERM)),
            "not_ours": words(lambda: 1 / 0),
        }

    report, probe = run_sandboxed(policy, probe, needs="syscalls")
    require(report, "syscalls")
    assert probe["fork"].startswith("Learner code cannot start programs")
    assert probe["program"].startswith("Learner code cannot start programs")
    assert "signal other processes" in probe["signal"]
    assert probe["not_ours"] is None
    if report["files"]["active"]:
        assert policy.scratch_dir in probe["file"]
    if report["network"]["active"]:
        assert "no network" in probe["connect"] and "no network" in probe["dns"]


# --- other processes' scheduling, hidden namespaces, exotic sockets, memfd -------------------

@pytest.fixture
def victim():
    """A process of the same user that the kernel must not be able to slow down."""
    process = subprocess.Popen(["sleep", "120"])
    yield process.pid
    process.kill()
    process.wait()


def test_scheduling_calls_reach_only_the_kernel_itself(policy: Policy, victim: int) -> None:
    nice, affinity = os.getpriority(os.PRIO_PROCESS, victim), os.sched_getaffinity(victim)
    scheduler = os.sched_getscheduler(victim)
    libc = ctypes.CDLL(None, use_errno=True)
    ioprio_get = lambda pid: libc.syscall(252, 1, pid)          # noqa: E731 - x86_64 ioprio_get
    ioprio = ioprio_get(victim)

    def probe() -> dict:
        one_cpu = {min(os.sched_getaffinity(0))}

        def ioprio_set(pid: int) -> list[int]:
            rc = libc.syscall(251, 1, pid, (3 << 13) | 0)          # IOPRIO_CLASS_IDLE
            return [rc, ctypes.get_errno() if rc < 0 else 0]
        return {
            "nice": attempt(lambda: os.setpriority(os.PRIO_PROCESS, victim, 19)),
            "affinity": attempt(lambda: os.sched_setaffinity(victim, one_cpu)),
            "scheduler": attempt(lambda: os.sched_setscheduler(victim, os.SCHED_IDLE, os.sched_param(0))),
            "param": attempt(lambda: os.sched_setparam(victim, os.sched_param(0))),
            "ioprio": attempt(lambda: ioprio_set(victim)),
            "group": attempt(lambda: os.setpriority(os.PRIO_PGRP, os.getpgid(victim), 19)),
            "own_nice": attempt(lambda: os.setpriority(os.PRIO_PROCESS, 0, 5)),
            "own_affinity": attempt(lambda: os.sched_setaffinity(0, one_cpu)),
            "own_ioprio": attempt(lambda: ioprio_set(0)),
        }

    if platform.machine() != "x86_64":
        pytest.skip("the raw ioprio syscall numbers here are x86_64's")
    report, probe = run_sandboxed(policy, probe, needs="syscalls")
    require(report, "syscalls")
    assert os.getpriority(os.PRIO_PROCESS, victim) == nice
    assert os.sched_getaffinity(victim) == affinity
    assert os.sched_getscheduler(victim) == scheduler
    assert ioprio_get(victim) == ioprio
    for action in ("nice", "affinity", "scheduler", "param", "group"):
        assert probe[action]["type"] == "PermissionError", (action, probe[action])
    assert probe["ioprio"]["value"] == [-1, 1]
    assert probe["own_nice"]["ok"] and probe["own_affinity"]["ok"], probe
    assert probe["own_ioprio"]["value"] == [0, 0]


def test_no_thread_in_new_namespaces_no_exotic_sockets_no_memfd(policy: Policy) -> None:
    def probe() -> dict:
        libc = ctypes.CDLL(None, use_errno=True)

        def clone(flags: int) -> list[int]:
            # Without CLONE_SIGHAND/CLONE_VM Linux itself answers EINVAL; only the filter says EPERM.
            rc = libc.syscall(56, flags, 0, 0, 0, 0)
            return [rc, ctypes.get_errno() if rc < 0 else 0]

        def make(domain: int, kind: int) -> None:
            socket.socket(domain, kind).close()
        return {
            "clone_net": attempt(lambda: clone(0x00010000 | 0x40000000)),
            "clone_ns": attempt(lambda: clone(0x00010000 | 0x00020000)),
            "netlink": attempt(lambda: make(socket.AF_NETLINK, socket.SOCK_RAW)),
            "packet": attempt(lambda: make(socket.AF_PACKET, socket.SOCK_RAW)),
            "vsock": attempt(lambda: make(40, socket.SOCK_STREAM)),
            "raw": attempt(lambda: make(socket.AF_INET, socket.SOCK_RAW)),
            "pair": attempt(lambda: socket.socketpair(socket.AF_NETLINK)),
            "memfd": attempt(lambda: os.memfd_create("pages")),
            "udp": attempt(lambda: make(socket.AF_INET, socket.SOCK_DGRAM)),
            "asyncio": attempt(lambda: __import__("asyncio").run(__import__("asyncio").sleep(0, 5))),
            "threads": attempt(lambda: __import__("concurrent.futures").futures.ThreadPoolExecutor(2)
                               .submit(lambda: 7).result()),
        }

    if platform.machine() != "x86_64":
        pytest.skip("the raw clone syscall number here is x86_64's")
    report, probe = run_sandboxed(policy, probe, needs="syscalls")
    require(report, "syscalls")
    assert probe["clone_net"]["value"] == [-1, 1] and probe["clone_ns"]["value"] == [-1, 1], probe
    for action in ("netlink", "packet", "vsock", "raw", "pair", "memfd"):
        assert probe[action]["type"] == "PermissionError", (action, probe[action])
    assert probe["udp"]["ok"] and probe["threads"]["value"] == 7
    assert probe["asyncio"]["value"] == 5, probe["asyncio"]


def test_an_enomem_oserror_counts_as_running_out_of_memory():
    """Under a memory limit of a few MiB the import machinery fails listing a package's folder with OSError
    ENOMEM, not MemoryError (`gradrepl check x**2 --memory-limit 1M`, importing sympy's mpmath): the
    kernels must call that out of memory (check's exit 2, "ran out of memory"), not a kernel that failed."""
    import _ctypes

    from gradrepl.kernel.sandbox import out_of_memory

    ctypes_library = _ctypes.__file__

    assert out_of_memory(OSError(errno.ENOMEM, "Cannot allocate memory", "/venv/site-packages/mpmath"))
    assert out_of_memory(MemoryError())
    assert not out_of_memory(OSError(errno.ENOENT, "No such file or directory"))
    assert not out_of_memory(PermissionError(errno.EACCES, "Permission denied"))
    # dlopen failing to map a library counts only where the library does not fit under RLIMIT_AS (none here)
    assert not out_of_memory(ImportError("failed to map segment from shared object", path=ctypes_library))
    assert not out_of_memory(ImportError("No module named 'nothing_here'"))
