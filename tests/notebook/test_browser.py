"""The panel in a notebook, level 3: a real browser. JupyterLab is started on a loopback port, Debian's
Chromium (headless, driven by Playwright through executable_path) opens a notebook, runs its cells, and
the panel's changed row is read from the page; a screenshot is kept in tests/artifacts/ (its path is
printed). Skipped, saying why, where Chromium, JupyterLab or Playwright is missing."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.support.paths import ROOT

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = ROOT / "tests" / "artifacts"
CELLS = ["%load_ext gradrepl", "import torch\nx = torch.tensor([1.0, 2.0], requires_grad=True)",
         "y = (x * 3).sum()", "y.backward()"]


def _missing() -> str | None:
    if CHROMIUM is None:
        return "no Chromium on this machine (.ci/run installs Debian's with apt-get install chromium)"
    for module in ("jupyterlab", "playwright", "anywidget", "ipykernel"):
        try:
            __import__(module)
        except ImportError:
            return f"{module} is not installed (pip install -e '.[test]')"
    return None


pytestmark = [pytest.mark.e2e, pytest.mark.skipif(_missing() is not None, reason=_missing() or "")]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def jupyterlab(tmp_path, name: str, cells: list[str]):
    """JupyterLab on a loopback port, serving a notebook of ``cells``; yields the notebook's address."""
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, tmp_path / name)
    port, token = _free_port(), secrets.token_hex(16)
    log = open(tmp_path / "lab.log", "w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={tmp_path}", "--ServerApp.open_browser=False",
         "--allow-root", "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "JUPYTER_PLATFORM_DIRS": "1"})
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180  # a safety net for a busy machine, not a speed test
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5) as reply:
                    json.load(reply)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("JupyterLab did not start:\n" + (tmp_path / "lab.log").read_text()[-3000:])
                time.sleep(0.5)
        yield f"{base}/lab/tree/{name}?token={token}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@contextlib.contextmanager
def chromium_page(url: str, tmp_path):
    """Headless Chromium on ``url``, the kernel connected and idle; a failure leaves a screenshot."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.set_default_timeout(120_000)
            page.goto(url)
            page.wait_for_selector(".jp-Notebook .jp-Cell")
            try:
                # the kernel is connected and idle (the status bar says so) before anything is run
                page.wait_for_selector(".jp-StatusBar-TextItem:has-text('| Idle')")
                yield page
            except Exception:
                page.screenshot(path=str(tmp_path / "failed.png"))
                print(f"screenshot of the failure: {tmp_path / 'failed.png'}")
                raise
        finally:
            browser.close()


@pytest.fixture
def lab(tmp_path):
    with jupyterlab(tmp_path, "panel.ipynb", CELLS) as url:
        yield url


@pytest.mark.timeout(600)
def test_the_panel_in_jupyterlab_shows_the_changed_row(lab, tmp_path):
    with chromium_page(lab, tmp_path) as page:
        # the first cell alone, until the panel shows: the cells after it reach a view that has
        # said it is shown, so they come as deltas the view applies (panel.js), not whole state
        page.locator(".jp-Notebook .jp-Cell").first.click()
        page.keyboard.press("Escape")
        page.keyboard.press("Shift+Enter")
        page.wait_for_selector(".gradrepl-panel")
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run Selected Cell and All Below", exact=True).click()
        page.locator(".jp-Notebook .jp-Cell").nth(len(CELLS) - 1).locator(
            f".jp-InputPrompt:has-text('[{len(CELLS)}]')").wait_for()
        row = page.locator(".gradrepl-panel tr[data-name='x']")
        page.wait_for_function(
            "() => { const r = document.querySelector(\".gradrepl-panel tr[data-name='x']\");"
            " return r && r.classList.contains('changed') && r.textContent.includes('[3, 3]'); }")
        text = row.inner_text()
        assert "[3, 3]" in text and f"[{len(CELLS)}]" in text, text
        assert "changed" in row.get_attribute("class")
        outputs = page.locator(".jp-Notebook .jp-Cell .jp-OutputArea").all_inner_texts()
        assert not any("gradrepl:" in text for text in outputs), outputs  # no fallback table: a view shows it
        panel = page.locator(".gradrepl-panel")
        assert "no sandbox" in panel.inner_text()
        ARTIFACTS.mkdir(exist_ok=True)
        shot = ARTIFACTS / "notebook-panel.png"
        panel.screenshot(path=str(shot))
        print(f"screenshot: {shot}")


@pytest.mark.timeout(600)
def test_a_lesson_in_jupyterlab_is_answered_by_its_buttons(tmp_path):
    """learn()'s widget in a browser: Next, Run and Check are clicked; each reaches the kernel as a widget
    message, the engine answers, and the page shows its verdict."""
    cells = ["import gradrepl.notebook\nlesson = gradrepl.notebook.learn('accumulation')"]
    with jupyterlab(tmp_path, "lesson.ipynb", cells) as url, chromium_page(url, tmp_path) as page:
        page.locator(".jp-Notebook .jp-Cell").first.click()
        page.keyboard.press("Escape")
        page.keyboard.press("Shift+Enter")
        lesson = page.locator(".gradrepl-lesson")
        lesson.locator(".prose").first.wait_for()
        lesson.get_by_role("button", name="Next").click()
        lesson.get_by_role("button", name="Run").click()
        lesson.locator("pre.output:has-text('tensor(7.)')").wait_for()
        lesson.get_by_role("button", name="Next").click()
        lesson.locator("label:has-text('The sum of the gradients from both calls') input").check()
        lesson.get_by_role("button", name="Check").click()
        verdict = lesson.locator(".verdict.right")
        verdict.wait_for()
        assert "right" in verdict.inner_text()
        assert "no sandbox" in lesson.locator(".footer").inner_text()
        ARTIFACTS.mkdir(exist_ok=True)
        shot = ARTIFACTS / "notebook-lesson.png"
        lesson.screenshot(path=str(shot))
        print(f"screenshot: {shot}")
