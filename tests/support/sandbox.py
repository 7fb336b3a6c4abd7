"""A test of one sandbox layer runs only where that layer is active: elsewhere it is skipped, saying why."""

import pytest


def require(session, layer: str) -> None:
    """Skip the test unless `layer` of the session's sandbox is active here."""
    state = session.sandbox.get(layer, {"active": False, "detail": "not reported"})
    if not state["active"]:
        pytest.skip(f"{layer} not active here: {state['detail']}")
