"""Escape sequences from learner code and lessons never reach the terminal raw.

The text comes from a real kernel (or a lesson file) and is followed to where a terminal
would get it: --plain's and `run`'s printed lines, the TUI console log and panel, `play`'s prose.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import GRADREPL, ROOT
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
    from gradrepl.terminal_text import visible_step

    failed = visible_step(await session.execute('s = "\x1b[1m" + str(1 / 0)'))
    (frame,) = [frame for frame in failed.error.frames if frame["origin"] == "learner"]
    assert raw_controls(frame["line"]) == [] and frame["line"][frame["col"]:frame["end_col"]] == "1 / 0"
    bad = visible_step(await session.execute('t = "\x1b[1m" + )'))
    assert bad.error.type == "SyntaxError" and raw_controls(bad.error.text) == []
    assert bad.error.text[bad.error.offset - 1] == ")"  # 1-based, as Python gives it
