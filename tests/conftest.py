from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

# The files none of whose tests starts a kernel (no Session, no `gradrepl` subprocess, no app with a
# kernel): every other test is marked `kernel`, so a new kernel test needs no marker to be counted as one,
# and `pytest -m "not kernel"` runs the pure tests in seconds. A test here that asks for a kernel fixture
# is marked all the same.
PURE_FILES = {
    "test_completeness.py",
    "kernel/test_guard.py",
    "kernel/inspect/test_graph.py",
    "kernel/inspect/test_snapshot.py",
    "kernel/symbolic/test_crosscheck.py",
    "kernel/symbolic/test_expr.py",
    "kernel/symbolic/test_shadow.py",
    "tui/test_key_footer.py",
    "tui/test_picker_text.py",
    "tui/test_snapshots.py",
    "tui/test_units.py",
    "tui/test_view_guard.py",
    "tutor/test_asking.py",
    "tutor/test_language.py",
    "tutor/test_lesson_loader.py",
    "tutor/test_lesson_run.py",
    "tutor/test_progress.py",
    "tutor/test_quiz_schedule.py",
}
KERNEL_FIXTURES = {"session", "warm_session"}


def pytest_collection_modifyitems(items) -> None:
    for item in items:
        pure = item.path.relative_to(TESTS).as_posix() in PURE_FILES
        if not pure or KERNEL_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.kernel)


FRESH_MACHINE_VARS = ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
                      "XDG_RUNTIME_DIR")


@pytest.fixture(scope="session", autouse=True)
def fresh_machine_home(tmp_path_factory):
    """HOME and the XDG folders are new and empty for the whole run, kernels and subprocesses included:
    nothing left in the developer's home (jedi's cache, config) can make a test pass."""
    root = tmp_path_factory.mktemp("fresh-home")
    with pytest.MonkeyPatch.context() as patch:
        for var in FRESH_MACHINE_VARS:
            folder = root / var.lower()
            folder.mkdir(mode=0o700)
            patch.setenv(var, str(folder))
        yield root


@pytest.fixture(autouse=True)
def gradrepl_home(tmp_path, monkeypatch):
    """Every test gets its own data dir: history and progress never touch the real one."""
    home = tmp_path / "gradrepl-home"
    monkeypatch.setenv("GRADREPL_HOME", str(home))
    return home


@pytest.fixture(scope="session")
async def warm_session(fresh_machine_home):
    """One kernel client for the whole run: its zygote imports torch once."""
    from gradrepl.session import Session

    async with Session() as live:
        yield live


@pytest.fixture
async def session(warm_session):
    """A session with a fresh kernel (forked in milliseconds) and an empty table."""
    await warm_session.restart()
    warm_session.history.clear()
    yield warm_session
