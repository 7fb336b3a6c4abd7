"""The course as a list to pick from: each lesson with its progress, broken files with their line."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table
from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from gradrepl.tutor.language import learner_language
from gradrepl.tutor.lesson import Course, Lesson
from gradrepl.tutor.progress import LessonProgress, lesson_state


def progress_words(lesson: Lesson, progress: LessonProgress | None) -> tuple[str, str, str]:
    """(mark, words, style) for one lesson's progress."""
    state = lesson_state(progress, len(lesson.steps))
    if state == "new":
        return "○", "not started", "dim"
    if state == "done":
        return "✓", "done", "green"
    return "◐", f"step {progress.current_step + 1} of {len(lesson.steps)}", "yellow"


class LessonPicker(OptionList):
    """One option per lesson (its id is the lesson id); files that did not load are listed, disabled."""

    # OptionList measures each option's height once, at the width it has then: a scrollbar that appears
    # afterwards narrows the text, which then wraps onto a line that was never counted, and a
    # description loses its last words. With the gutter kept, the width never changes.
    DEFAULT_CSS = """
    LessonPicker {
        scrollbar-gutter: stable;
    }
    """

    def show_course(self, course: Course, progress: dict[str, LessonProgress]) -> None:
        self.clear_options()
        options: list[Option] = []
        language = learner_language()  # a lesson titled in several languages shows the learner's only
        for n, lesson in enumerate(course.lessons, 1):
            mark, words, style = progress_words(lesson, progress.get(lesson.id))
            body = Text.assemble((lesson.title_in(language), "bold"), (f"  {words}", style))
            if lesson.summary:
                body.append(f"\n{lesson.summary}", style="dim")
            options.append(Option(_row(Text(f"{mark} {n:>2}.", style=style), body), id=lesson.id))
        by_file: dict[str, list[str]] = {}
        for problem in course.problems:
            by_file.setdefault(problem.path, []).append(str(problem))
        for path, problems in by_file.items():
            body = Text.assemble((Path(path).name, "bold red"), ("  not loaded", "red"))
            for problem in problems:
                body.append(f"\n{problem}", style="red")
            options.append(Option(_row(Text("✕", style="bold red"), body), id=f"broken:{path}", disabled=True))
        self.add_options(options)
        if course.lessons:
            self.highlighted = 0


def _row(margin: Text, body: Text) -> Table:
    """A mark in the margin and wrapped text beside it, so long summaries keep their indent."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=5, no_wrap=True)
    grid.add_column(ratio=1)
    grid.add_row(margin, body)
    return grid
