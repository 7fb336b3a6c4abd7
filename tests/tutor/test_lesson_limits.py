"""Hostile lesson files get a clear error naming the file, and every command that reads the course survives."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from tests.support.paths import GRADREPL, ROOT

from gradrepl.tutor.lesson import MAX_LESSON_BYTES, LessonFormatError, load_course, load_lesson

GOOD = (ROOT / "lessons" / "01-tracking.md").read_text()


def deep_front_matter(depth: int) -> str:
    return f"---\nid: deep\ntitle: Deep\nversion: 1\nextra: {'[' * depth}{']' * depth}\n---\n\nProse.\n"


def deep_question(depth: int) -> str:
    return GOOD + f"\n```question\nid: deep\ntype: choice\nprompt: x\noptions: {'[' * depth}{']' * depth}\n```\n"


def test_an_oversized_lesson_is_refused_without_reading_it_all(tmp_path: Path):
    path = tmp_path / "03-huge.md"
    with open(path, "wb") as handle:
        handle.write(GOOD.encode())
        handle.truncate(50 << 20)
    with pytest.raises(LessonFormatError) as caught:
        load_lesson(path)
    assert "larger than" in str(caught.value.problems[0]) and str(path) in str(caught.value.problems[0])


@pytest.mark.parametrize("command", [["lessons"], ["stats"], ["lint"], ["quiz", "--plain"]])
def test_commands_that_read_the_course_survive_a_hostile_lesson(tmp_path: Path, command: list[str]):
    course = tmp_path / "course"
    course.mkdir()
    (course / "01-tracking.md").write_text(GOOD)
    (course / "02-deep.md").write_text(deep_front_matter(5000))
    env = {**os.environ, "GRADREPL_LESSONS": str(course)}
    args = [*command, str(course)] if command == ["lint"] else command
    done = subprocess.run([*GRADREPL, *args], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env,
                          input="")
    assert "RecursionError" not in done.stderr and "Traceback" not in done.stderr, done.stderr[-2000:]
    if command in (["lessons"], ["lint"]):
        assert "02-deep.md" in done.stdout + done.stderr


def test_the_shipped_course_still_loads():
    course = load_course()
    assert course.lessons and not course.problems
    assert all(Path(lesson.path).stat().st_size < MAX_LESSON_BYTES for lesson in course.lessons)


ESCAPED = [
    ("prose", GOOD.replace("# ", "# \x1b]0;PWNED\x07", 1)),                          # raw, in the Markdown
    ("prompt", GOOD.replace('prompt: "`a` requires', 'prompt: "\\e[2J`a` requires', 1)),  # YAML's own escape
]


@pytest.mark.parametrize("where, text", ESCAPED, ids=[where for where, _ in ESCAPED])
def test_a_lesson_holding_a_terminal_escape_is_refused_and_named_visibly(tmp_path: Path, where: str, text: str):
    path = tmp_path / "01-escape.md"
    path.write_text(text)
    with pytest.raises(LessonFormatError) as caught:
        load_lesson(path)
    problem = str(caught.value.problems[0])
    assert "control character \\x1b" in problem and "\x1b" not in problem
    # From outside: lint names it, and nothing the terminal would act on reaches it.
    done = subprocess.run([*GRADREPL, "lint", str(tmp_path)], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode != 0 and "01-escape.md" in done.stdout + done.stderr
    assert "\x1b" not in done.stdout + done.stderr and "control character" in done.stdout + done.stderr


def aliased_hints(aliases: int, size: int) -> str:
    """A question whose hints are one anchored string and aliases of it: a small file, a huge expansion."""
    hints = ", ".join([f'&s "{"A" * size}"', *["*s"] * aliases])
    return GOOD + f"\n```question\nid: repeated\ntype: choice\nprompt: x\nhints: [{hints}]\n" \
                  "options:\n  - text: a\n    correct: true\n  - text: b\n    feedback: not this one\n```\n"


ALIASED_FRONT = deep_front_matter(1).replace("[]", "&a [1, 2]\nmore: *a")
UNREADABLE_YAML = [("deep-front", deep_front_matter(5000), "nested more than"),
                   ("deep-question", deep_question(5000), "nested more than"),
                   ("alias-question", aliased_hints(1, 1), "anchors and aliases"),
                   ("alias-front", ALIASED_FRONT, "anchors and aliases")]


@pytest.mark.parametrize("name, text, says", UNREADABLE_YAML, ids=[name for name, _, _ in UNREADABLE_YAML])
def test_yaml_too_deep_or_aliased_is_a_problem_naming_the_file(tmp_path: Path, name: str, text: str, says: str):
    path = tmp_path / f"02-{name}.md"
    path.write_text(text)
    with pytest.raises(LessonFormatError) as caught:
        load_lesson(path)
    assert any(str(path) in str(problem) and says in str(problem) for problem in caught.value.problems)


@pytest.mark.parametrize("command", [["lint"], ["lessons", "--lessons"]])
def test_an_alias_bomb_is_an_error_for_its_file_only(tmp_path: Path, command: list[str]):
    # ~720 KB on disk that expands to 42 GB of hints: refused, not expanded (once, this ran for >300 s).
    course = tmp_path / "course"
    course.mkdir()
    (course / "01-tracking.md").write_text(GOOD)
    (course / "02-bomb.md").write_text(aliased_hints(140_000, 300_000))
    assert (course / "02-bomb.md").stat().st_size < MAX_LESSON_BYTES
    done = subprocess.run([*GRADREPL, *command, str(course)], capture_output=True, text=True, timeout=600, cwd=ROOT,
                          input="")
    out = done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "02-bomb.md" in out and "anchors and aliases" in out, out[-2000:]
    if command[0] == "lessons":  # the other lesson is still listed
        assert done.returncode == 0 and "tracking" in done.stdout.lower(), out[-2000:]
    else:
        assert done.returncode != 0
