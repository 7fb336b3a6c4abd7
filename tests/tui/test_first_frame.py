"""The first frame waits only for what it shows: `gradrepl` with no command paints the console and the
panel without importing the course, the quiz, their parsers (markdown-it, yaml) or other commands, and
without garbage collections (turned back on once the frame is painted)."""

from __future__ import annotations

import subprocess
import sys

from tests.support.paths import ROOT

# Loaded when a lesson, the quiz or another command is opened (pygments: when a step is echoed); never before
# the first frame.
NOT_BEFORE_FIRST_FRAME = (
    "gradrepl.tutor", "gradrepl.tui.lesson", "gradrepl.tui.quiz", "gradrepl.plain", "markdown_it", "yaml",
    "fsrs", "sqlite3", "textual.widgets._markdown", "pygments", "torch", "sympy", "numpy",
)

FIRST_FRAME = """
import asyncio, gc, sys
from gradrepl import cli

if cli._opens_the_tui([]):
    gc.disable()  # as cli.main does until the first frame
parser, _ = cli.build_parser([])  # as `gradrepl` with no command builds it
args = parser.parse_args([])
from gradrepl.tui.app import GradReplApp
from gradrepl.tui.console.console_log import ConsoleLog

async def first_frame():
    app = GradReplApp(start_kernel=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert "importing torch" in "\\n".join(line.text for line in app.query_one(ConsoleLog).lines)
        print(sorted(name for name in sys.modules
                     if name.startswith("gradrepl.commands.") and name != "gradrepl.commands.common"))
        print(sorted(name for name in sys.modules if name.startswith({prefixes})))
        print("collector on" if gc.isenabled() else "collector off")

asyncio.run(first_frame())
"""


def printed_lines(code: str) -> list[str]:
    """What `code`, run in a Python of its own (a fresh sys.modules), printed; it must succeed."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=180,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()


def test_the_first_frame_imports_no_lesson_quiz_or_other_command():
    other_commands, pulled, collector = printed_lines(FIRST_FRAME.format(prefixes=NOT_BEFORE_FIRST_FRAME))[-3:]
    assert other_commands == "[]"
    assert pulled == "[]"
    assert collector == "collector on"  # held off only until the first frame


def test_help_and_a_mistyped_command_still_name_every_command():
    from gradrepl import cli

    for argv in (["--help"], ["--plain", "-h"], ["lesons"]):
        done = subprocess.run([sys.executable, "-m", "gradrepl", *argv], capture_output=True, text=True,
                              cwd=ROOT, timeout=60, stdin=subprocess.DEVNULL)
        said = done.stdout + done.stderr
        assert all(name in said for name in cli.COMMANDS), (argv, said)


def test_a_command_registers_only_itself_and_keeps_its_own_help():
    done = subprocess.run([sys.executable, "-m", "gradrepl", "run", "--help"], capture_output=True, text=True,
                          cwd=ROOT, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 0 and "usage: gradrepl run" in done.stdout and "--stop-on-error" in done.stdout


async def test_code_typed_before_the_highlighter_is_ready_keeps_its_cursor_and_gets_colours(tmp_path):
    from textual.app import App

    from gradrepl.history import History
    from gradrepl.tui.console.code_input import CodeInput

    class Early(App):
        def compose(self):
            yield CodeInput(History(tmp_path / "history.jsonl"))

        def on_mount(self) -> None:  # before the first frame, so before the Python highlighting
            code_input = self.query_one(CodeInput)
            code_input.load_text("x = 1\nfor i in range(3):")
            code_input.move_cursor((1, 3))

    app = Early()
    async with app.run_test(size=(60, 10)) as pilot:
        code_input = app.query_one(CodeInput)
        for _ in range(100):  # the highlighter comes after the first frame and the footer's keys
            if code_input.language == "python":
                break
            await pilot.pause(0.05)
        assert code_input.language == "python"
        assert code_input.cursor_location == (1, 3)
        assert code_input.text == "x = 1\nfor i in range(3):"
        colours = {segment.text.strip(): segment.style.color for segment in code_input.render_line(1)
                   if segment.text.strip()}
        assert colours["for"] != colours["i"]  # a keyword is coloured apart from a name


async def test_text_loaded_into_a_highlighted_input_keeps_its_colours_and_its_compiled_query(tmp_path):
    """A text put in the input whole (a recalled lesson cell, %edit) gets a new document: its colours come from
    the highlight query compiled once a process (code_input.py), not one compiled again (~30 ms a load)."""
    from textual.app import App

    from gradrepl.history import History
    from gradrepl.tui.console.code_input import CodeInput

    class Loaded(App):
        def compose(self):
            yield CodeInput(History(tmp_path / "history.jsonl"))

    app = Loaded()
    async with app.run_test(size=(60, 10)) as pilot:
        code_input = app.query_one(CodeInput)
        code_input._highlight_python()
        first = code_input._highlight_query
        for text in ("while x:", "for i in range(3):"):
            code_input.load_text("y = 1\n" + text)  # the cursor stays on the first line, out of the way
            await pilot.pause()
            assert code_input._highlight_query is first
            colours = {segment.text.strip(): segment.style.color for segment in code_input.render_line(1)
                       if segment.text.strip()}
            keyword, name = text.split()[:2]
            assert colours[keyword] != colours[name.rstrip(":")]


# What only later replies, keys or steps need: imported once the first frame is out, never before it (Textual's
# own OptionList and Tree are not listed: textual.app imports them, a bare app's first frame too).
LATE = (
    "gradrepl.session.session", "gradrepl.session.steps", "gradrepl.session.magics",
    "gradrepl.client.kernel_client", "gradrepl.views.graph_drawing", "gradrepl.views.check",
    "gradrepl.views.trace_pictures", "gradrepl.views.steps", "gradrepl.tui.console.completion_menu",
    "gradrepl.tui.console.history_search", "gradrepl.tui.console.help_view", "gradrepl.tui.console.traceback_view",
    "gradrepl.tui.confirm", "prompt_toolkit",
)

# The app as `gradrepl` runs it (a kernel starting); sys.modules is read as Textual sends the first frame.
AT_THE_FIRST_FRAME = """
import asyncio, sys
from textual.app import App
from gradrepl.tui.app import GradReplApp

at_first_frame = []
display = App._display

def first_display(self, screen, renderable):
    if renderable is not None and not self._batch_count and not at_first_frame:
        at_first_frame.append(sorted(name for name in sys.modules if name.startswith({late})))
    display(self, screen, renderable)

App._display = first_display

async def main():
    app = GradReplApp()
    async with app.run_test(size=(120, 40)) as pilot:
        while app.kernel_state != "idle":  # the late parts are wired and the kernel comes up as before
            assert app.kernel_state != "failed"
            await pilot.pause(0.05)
    print(at_first_frame[0])

asyncio.run(main())
"""


def test_the_first_frame_imports_none_of_what_only_later_replies_need():
    assert printed_lines(AT_THE_FIRST_FRAME.format(late=LATE))[-1] == "[]"


# Composed when first opened, never for the first frame: the past table (F3), the trace view (%trace) and the
# details view with its graph (Enter on a row): the first frame neither builds nor styles their widgets.
COMPOSED_ON_FIRST_USE = ("past", "trace", "trace-body", "details", "details-graph", "details-why")


async def test_the_first_frame_composes_only_what_it_shows_and_each_view_opens_at_its_first_use(tmp_path,
                                                                                                monkeypatch):
    from textual.app import App

    from tests.support.tui import running_app, submit_steps

    at_first_frame: list[set[str]] = []
    display = App._display

    def first_display(self, screen, renderable):
        if renderable is not None and not self._batch_count and not at_first_frame:
            at_first_frame.append({widget.id for widget in screen.walk_children() if widget.id})
        display(self, screen, renderable)

    monkeypatch.setattr(App, "_display", first_display)

    def composed(widget_id: str) -> bool:
        return bool(app.query(f"#{widget_id}"))

    async with running_app(tmp_path, (120, 40)) as (app, pilot, recorder):
        await pilot.pause()
        shown = at_first_frame[0]
        assert {"log", "input", "tensors", "status"} <= shown, shown
        assert not shown & set(COMPOSED_ON_FIRST_USE), shown
        assert not any(composed(widget_id) for widget_id in COMPOSED_ON_FIRST_USE)  # nor since, unopened
        await submit_steps(pilot, recorder, "x = torch.tensor(2.0, requires_grad=True)", "y = x ** 2", "%trace y")
        trace = app.query_one("#trace")
        assert trace.display and trace.has_focus  # opened with the step's reply, on its first use
        assert "node 0 of" in app.query_one("#trace-body").render().plain
        await pilot.press("escape")
        assert not trace.display and app.query_one("#input").has_focus
        assert not composed("past") and not composed("details")
        await pilot.press("f2", "f3")  # the keys on the panel, then one step back
        past = app.query_one("#past")
        assert past.display and past.has_focus and not app.query_one("#tensors").display
        await pilot.press("f4", "f4")  # the present again
        assert not past.display and app.query_one("#tensors").has_focus
        assert not composed("details")
        await pilot.press("down", "enter")  # y's row: its details
        details = app.query_one("#details")
        assert details.display and app.details_name == "y"
        assert composed("details-graph") and composed("details-why")
        await pilot.press("escape")
        assert not details.display and app.details_name is None
        children = [child.id for child in app.query_one("#inspector").children]
        assert children == ["tensors", "past", "trace", "details"], children  # each in its place down the panel
