"""Escape sequences from learner code and lessons never reach the terminal raw.

The text comes from a real kernel (or a lesson file) and is followed to where a terminal
would get it: --plain's and `run`'s printed lines, the TUI console log and panel, `play`'s prose.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.support.paths import GRADREPL, ROOT
from rich.text import Text
from textual.app import App

from gradrepl.plain.repl import print_result
from gradrepl.terminal_text import visible
from gradrepl.tui.console.console_log import ConsoleLog
from gradrepl.tui.tensors.cells import row_cells

ATTACK = ('print("\\x1b[2J\\x1b]0;owned\\x07\\x1b]52;c;ZXZpbA==\\x07[bold]markup[/bold]")\n'
          'globals()["\\x1b]0;X\\x07"] = torch.ones(1)\n'
          'raise ValueError("\\x1b[31mred\\x9b")')


def raw_controls(text: str) -> list[str]:
    return [ch for ch in text if (ord(ch) < 32 and ch not in "\n\t") or 0x7F <= ord(ch) < 0xA0]


def test_visible_shows_every_control_but_newline_and_tab():
    assert visible("a\x1b[2Jb\tc\nd\re\x00\x7f\x9b") == "a\\x1b[2Jb\tc\nd\\x0de\\x00\\x7f\\x9b"
    assert visible(visible("\x1b]52;c;x\x07")) == "\\x1b]52;c;x\\x07"
    assert visible("[bold]ünïcode ✓[/bold]") == "[bold]ünïcode ✓[/bold]"


async def test_plain_repl_prints_kernel_text_visibly(session, capsys):
    result = await session.execute(ATTACK)
    print_result(result)
    out = capsys.readouterr().out
    assert raw_controls(out) == []
    assert "\\x1b]52;c;ZXZpbA==\\x07" in out and "[bold]markup[/bold]" in out
    assert "\\x1b]0;X\\x07" in out and "\\x1b[31mred\\x9b" in out


def test_run_prints_output_and_table_names_visibly(tmp_path: Path):
    script = tmp_path / "attack.py"
    script.write_text(ATTACK.replace("raise ValueError", "print") + "\nx = 1  # \x1b]0;source\x07\n")
    done = subprocess.run([*GRADREPL, "run", str(script)], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert raw_controls(done.stdout) == [], done.stdout
    assert "\\x1b]52;c;ZXZpbA==\\x07" in done.stdout and "\\x1b]0;X\\x07" in done.stdout
    assert "\\x1b]0;source\\x07" in done.stdout


class LogApp(App):
    def compose(self):
        yield ConsoleLog()


async def test_tui_console_log_and_panel_show_kernel_text_visibly(session):
    result = await session.execute(ATTACK)
    app = LogApp()
    async with app.run_test() as pilot:
        log = app.query_one(ConsoleLog)
        log.write_source("print('\x1b]0;cell\x07')")     # a lesson cell's source is lesson text
        log.write_result(result)
        await pilot.pause(0.1)
        text = "\n".join(line.text for line in log.lines)
    assert raw_controls(text) == [] and "\\x1b]52;c;ZXZpbA==" in text and "[bold]markup[/bold]" in text
    assert "\\x1b]0;cell\\x07" in text
    (row,) = [row for row in result.tensors if "X" in row["name"]]
    assert row_cells(row)["name"].plain == "\\x1b]0;X\\x07"


def test_play_refuses_a_lesson_holding_escapes_and_names_them_visibly(tmp_path: Path):
    lesson = tmp_path / "01-evil.md"
    lesson.write_text("---\nid: evil\ntitle: \"Evil \\e]0;title\\a\"\n---\n\n"
                      "Prose with \x1b[2J a clear screen and \x1b]52;c;ZXZpbA==\x07 a clipboard write.\n\n"
                      "```python\nprint('\\x1b]0;cell\\x07')\n```\n\n"
                      "```question\nid: two\ntype: numeric\nprompt: \"\\e[5mOne plus one?\"\nask: 1 + 1\n"
                      "tolerance: 0\n```\n")
    done = subprocess.run([*GRADREPL, "play", str(lesson), "--auto"], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    said = done.stdout + done.stderr
    assert done.returncode == 2 and raw_controls(said) == [], said
    # The title, the prose and the prompt are named; the cell's Python escape is plain text, and fine.
    assert "01-evil.md:2: title" in said and "01-evil.md:6: the prose" in said
    assert "prompt of question 'two' holds the control character \\x1b" in said and "cell" not in said


async def test_a_question_card_shows_kernel_quoted_text_visibly():
    from gradrepl.tui.question import QuestionCard
    from gradrepl.tutor.lesson import Question

    question = Question(id="q", lesson_id="t", type="predict", prompt="s?", path="t.md", line=1, ask="s")
    card = QuestionCard(question, [])

    class CardApp(App):
        def compose(self):
            yield card

    async with CardApp().run_test() as pilot:
        card.show_verdict(False, "Not quite: s is `'\x1b]0;X\x07'`")   # a key or an answer, as the kernel wrote it
        card.finish(Text("answer: \x1b[2J", style="green"))
        await pilot.pause(0.2)
        shown = "\n".join(widget.render_line(y).text for widget in card.query("*") if widget.display
                          for y in range(widget.size.height))
    assert raw_controls(shown) == [] and "\\x1b]0;X\\x07" in shown and "answer: \\x1b[2J" in shown


async def test_carets_stay_under_the_failing_code_when_a_line_is_made_visible(session):
    failed = await session.execute('s = "\x1b[1m" + str(1 / 0)')  # made visible where the reply is read
    (frame,) = [frame for frame in failed.error.frames if frame["origin"] == "learner"]
    assert raw_controls(frame["line"]) == [] and frame["line"][frame["col"]:frame["end_col"]] == "1 / 0"
    bad = await session.execute('t = "\x1b[1m" + )')
    assert bad.error.type == "SyntaxError" and raw_controls(bad.error.text) == []
    assert bad.error.text[bad.error.offset - 1] == ")"  # 1-based, as Python gives it


# A tensor subclass whose tolist() and dtype are escape sequences, and an autograd Function whose
# class name is one: their text reaches rows, cells, the details view, traces and JSON.
SHAPESHIFTERS = (
    'class Shouty(torch.Tensor):\n'
    '    def tolist(self):\n'
    '        return ["\\x1b[2J\\x9b"]\n'
    '    @property\n'
    '    def dtype(self):\n'
    '        return "\\x1b]0;dt\\x07"\n'
    's = torch.ones(2).as_subclass(Shouty)\n'
    'Fn = type("\\x1b]0;fn\\x07", (torch.autograd.Function,), {"forward": staticmethod(lambda ctx, x: x * 2),\n'
    '                                                           "backward": staticmethod(lambda ctx, g: g * 2)})\n'
    'x = torch.ones(1, requires_grad=True)\n'
    'z = Fn.apply(x)\n'
    'y = z.sum()\n'
    'print("\\x9b2J C1 \\x1b[31m")\n'
)


def test_run_trace_and_run_json_show_subclass_and_function_text_visibly(tmp_path: Path):
    script = tmp_path / "shifty.py"
    script.write_text(SHAPESHIFTERS)
    ran = subprocess.run([*GRADREPL, "run", str(script)], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert raw_controls(ran.stdout) == [], ran.stdout
    assert "\\x1b]0;dt\\x07" in ran.stdout and "\\x1b[2J\\x9b" in ran.stdout and "\\x1b]0;fn\\x07Backward" in ran.stdout
    traced = subprocess.run([*GRADREPL, "trace", str(script), "y"], capture_output=True, text=True, timeout=120,
                            cwd=ROOT)
    assert traced.returncode == 0 and raw_controls(traced.stdout) == [], traced.stdout + traced.stderr
    assert "\\x1b]0;fn\\x07Backward" in traced.stdout
    as_json = subprocess.run([*GRADREPL, "run", "--json", str(script)], capture_output=True, timeout=120, cwd=ROOT)
    text = as_json.stdout.decode()
    assert raw_controls(text) == [], [line for line in text.splitlines() if raw_controls(line)][:2]
    lines = [json.loads(line) for line in text.splitlines()]
    assert any(step.get("stdout") == "\\x9b2J C1 \\x1b[31m\n" for step in lines), lines[-2]


async def test_plain_repl_shows_subclass_cells_visibly(session, capsys):
    result = await session.execute(SHAPESHIFTERS)
    print_result(result)
    out = capsys.readouterr().out
    assert raw_controls(out) == [] and "\\x1b]0;dt\\x07" in out, out


async def test_tui_details_and_trace_view_show_kernel_text_visibly(tmp_path: Path):
    from tests.support.tui import Recorder, screen_text, until

    from gradrepl.history import History
    from gradrepl.tui.app import GradReplApp
    from gradrepl.tui.messages import DetailsLoaded, StepFinished
    from gradrepl.tui.tensors.trace_view import TraceView

    recorder = Recorder()
    app = GradReplApp(history=History(tmp_path / "h.jsonl"))
    async with app.run_test(size=(150, 45), message_hook=recorder) as pilot:
        for source in (SHAPESHIFTERS, "%trace y"):
            done = len(recorder.of(StepFinished))
            app.submit(source)
            await until(pilot, lambda: len(recorder.of(StepFinished)) > done, f"step {source[:20]!r}")
        view = app.query_one(TraceView)
        await until(pilot, lambda: view.display, "the trace view")
        await pilot.press("right", "right")
        await pilot.pause()
        traced = screen_text(app)
        await pilot.press("escape")
        for name in ("s", "z"):
            loaded = len(recorder.of(DetailsLoaded))
            await app.show_details(name)
            await until(pilot, lambda: len(recorder.of(DetailsLoaded)) > loaded, f"details of {name}")
            await pilot.pause(0.2)
            shown = screen_text(app)
            assert raw_controls(shown) == [], (name, [line for line in shown.splitlines() if raw_controls(line)])
    assert raw_controls(traced) == [] and "\\x1b]0;fn\\x07Backward" in traced, traced
    assert "\\x1b]0;dt\\x07" in shown or "\\x1b]0;fn\\x07" in shown


def test_stats_after_importing_ids_holding_escapes_shows_them_visibly(tmp_path: Path, gradrepl_home):
    evil = "tracking/\x1b]0;owned\x07\x9b"
    data = {"format": "gradrepl-progress", "schema": 1,
            "cards": [{"question_id": evil, "lesson_id": "tracking\x1b[2J", "card": {
                "card_id": 1, "state": 2, "step": None, "stability": 2.3, "difficulty": 5.0,
                "due": "2026-01-05T09:10:00+00:00", "last_review": "2026-01-05T09:00:00+00:00"}}],
            "reviews": [{"review_id": "r1", "question_id": evil, "lesson_id": "tracking\x1b[2J",
                         "reviewed_at": "2026-01-05T09:00:00+00:00", "rating": 3, "correct": True, "hinted": False,
                         "answer": "\x1b[5m2", "duration_ms": 1000}],
            "lessons": []}
    export = tmp_path / "export.json"
    export.write_text(json.dumps(data))
    env = {**os.environ, "GRADREPL_HOME": str(gradrepl_home)}
    imported = subprocess.run([*GRADREPL, "stats", "--import", str(export)], capture_output=True, text=True,
                              timeout=60, cwd=ROOT, env=env)
    assert imported.returncode == 0, imported.stderr
    shown = subprocess.run([*GRADREPL, "stats"], capture_output=True, text=True, timeout=60, cwd=ROOT, env=env)
    assert shown.returncode == 0 and raw_controls(shown.stdout) == [], shown.stdout
    assert "tracking/\\x1b]0;owned\\x07\\x9b" in shown.stdout, shown.stdout
    stats = json.loads(subprocess.run([*GRADREPL, "stats", "--json"], capture_output=True, text=True, timeout=60,
                                      cwd=ROOT, env=env).stdout)
    ids = [row["question_id"] for lesson in stats["lessons"] for row in lesson["questions"]]
    assert "tracking/\\x1b]0;owned\\x07\\x9b" in ids and not any(raw_controls(i) for i in ids), ids


LONE_SURROGATES = '''
import warnings
globals()["a\\ud800b"] = torch.ones(1)
class Odd:
    def __repr__(self):
        return "odd\\udcff"
warnings.warn("careful\\ud801")
print("out\\udfff")
Odd()
'''


def test_lone_surrogates_from_the_kernel_print_as_escapes_in_run_and_run_json(tmp_path: Path):
    """A name, a repr, a warning and output holding lone surrogates (a JSON "\\ud800" decodes to one):
    printing one raises UnicodeEncodeError, which once ended `run` and `--plain` with a traceback."""
    script = tmp_path / "surrogates.py"
    script.write_text(LONE_SURROGATES)
    for flags in ([], ["--json"]):
        ran = subprocess.run([*GRADREPL, "run", *flags, str(script)], capture_output=True, timeout=120, cwd=ROOT)
        out = ran.stdout.decode()  # strict UTF-8: a surrogate could not have been encoded
        assert ran.returncode == 0, ran.stderr.decode()[-2000:]
        assert "Traceback" not in ran.stderr.decode()
        for shown in ("a\\ud800b", "odd\\udcff", "careful\\ud801"):
            assert shown in out or json.dumps(shown)[1:-1] in out, (shown, out[-1500:])


async def test_plain_repl_prints_lone_surrogates_as_escapes(session, capsys):
    result = await session.execute(LONE_SURROGATES)
    print_result(result)
    out = capsys.readouterr().out
    out.encode()  # would raise on a lone surrogate
    assert "odd\\udcff" in out and "a\\ud800b" in out, out
