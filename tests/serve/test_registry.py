"""The server's registry of learners' sessions, without a server: what a tutor that cannot start leaves."""

import asyncio
import os

import pytest

from gradrepl.serve.sessions import Registry, Settings
from gradrepl.serve.shared_zygote import SharedZygote


async def test_a_tutor_that_cannot_start_leaves_no_session_and_a_waiting_tab_gets_none(tmp_path):
    settings = Settings(argv=[str(tmp_path / "no-such-tutor")], env={}, learners_dir=str(tmp_path / "learners"),
                        visitors_dir=str(tmp_path / "visitors"))
    zygote = SharedZygote(str(tmp_path), 1 << 20, lambda pid: None)  # never started: no kernel is asked for
    registry = Registry(settings, zygote)
    tab = "a-tab-id-of-sixteen"
    try:
        assert registry.reserve(tab)
        duplicate = asyncio.create_task(registry.opened(tab))  # the same tab id's second socket waits
        await asyncio.sleep(0)
        with pytest.raises(FileNotFoundError):
            await registry.open(tab, None, 80, 24)
        assert await duplicate is None  # told the start failed, not handed the failed session
        assert registry.sessions == {} and registry.opening == {} and registry.live(tab) is None
        assert not os.path.exists(os.path.join(settings.visitors_dir, tab))  # the visitor's home went too
    finally:
        await registry.close()
        await zygote.close()
