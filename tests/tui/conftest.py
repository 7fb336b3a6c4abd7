import pytest

from gradrepl.history import History


@pytest.fixture
def history(tmp_path) -> History:
    """A history file of the test's own, so no test reads another's inputs."""
    return History(tmp_path / "history.jsonl")
