"""A real browser: Debian's Chromium, headless, loads the page of `gradrepl serve`, types into the tutor,
and the tensors panel's row is read from the frames the page received (through a terminal emulator);
a screenshot is kept in test-artifacts/. Skipped, with the reason, where Chromium is not installed
(.ci/run installs it with apt)."""

from __future__ import annotations

import shutil
import time

import pyte
import pytest

from tests.support.serve import DEADLINE, Served
from tests.support.paths import ROOT

pytestmark = pytest.mark.timeout(600)
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = ROOT / "test-artifacts"


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (apt-get install chromium; .ci/run does)")
async def test_chromium_types_into_the_tutor_and_the_panel_shows_the_row(tmp_path):
    playwright = pytest.importorskip("playwright.async_api")
    served = Served(tmp_path)
    screens: dict[object, pyte.Screen] = {}  # one terminal emulator per page load

    def text(tab=None) -> str:
        return "\n".join(screens[tab or page].display) if (tab or page) in screens else ""

    async def until(predicate, what: str, tab=None) -> None:
        end = time.monotonic() + DEADLINE
        while not predicate(text(tab)):
            assert time.monotonic() < end, f"never saw {what}; the page's terminal:\n{text(tab)}"
            await page.wait_for_timeout(200)

    def watch(tab) -> None:
        def on_websocket(websocket) -> None:
            screen = screens[tab] = pyte.Screen(200, 60)
            stream = pyte.ByteStream(screen)

            def received(payload) -> None:
                if isinstance(payload, bytes):
                    stream.feed(payload)
            websocket.on("framereceived", received)
        tab.on("websocket", on_websocket)

    try:
        async with playwright.async_playwright() as driver:
            browser = await driver.chromium.launch(executable_path=CHROMIUM, headless=True,
                                                   args=["--no-sandbox", "--use-gl=swiftshader"])
            context = await browser.new_context(viewport={"width": 1600, "height": 1000})
            page = await context.new_page()
            watch(page)
            await page.goto(served.address)  # ?token=...: moved into a cookie, then the page
            assert "token" not in page.url
            await until(lambda t: "type torch code" in t, "the tutor's console")
            # textual.js sized the terminal to the page: the emulator takes the size the app drew at.
            await page.click("#terminal")
            await page.keyboard.type("in_chromium = torch.ones(4, requires_grad=True)")
            await page.keyboard.press("Enter")
            await until(lambda t: "● in_chromium" in t, "the new row in the tensors panel")
            row = next(line for line in text().splitlines() if "● in_chromium" in line)
            assert "yes" in row and "[1, 1, 1, 1]" in row, row
            ARTIFACTS.mkdir(exist_ok=True)
            await page.wait_for_timeout(500)
            await page.screenshot(path=str(ARTIFACTS / "serve_chromium.png"))

            # A reload keeps the tab's session (sessionStorage): the same tutor, the row drawn again.
            await page.reload()
            await until(lambda t: "● in_chromium" in t, "the row again after the reload")
            # Another tab of the same browser (same cookie) is another learner.
            other = await context.new_page()
            watch(other)
            await other.goto(served.url)
            await until(lambda t: "type torch code" in t, "the second tab's console", tab=other)
            await page.wait_for_timeout(1000)
            assert "in_chromium" not in text(other)
            await browser.close()
    finally:
        served.stop()
