import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GRADREPL = [sys.executable, "-m", "gradrepl"]


@pytest.fixture(autouse=True)
def gradrepl_home(tmp_path, monkeypatch):
    """Every test gets its own data dir: history and progress never touch the real one."""
    home = tmp_path / "gradrepl-home"
    monkeypatch.setenv("GRADREPL_HOME", str(home))
    return home


@pytest.fixture(scope="session")
async def warm_session():
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
