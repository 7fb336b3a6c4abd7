import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GRADREPL = [sys.executable, "-m", "gradrepl"]


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
