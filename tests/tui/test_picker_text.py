"""The lesson picker at 80x24 and 120x40: every lesson's description is shown whole, never cut
mid-sentence (an option's height must be measured at the width it is drawn at)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.geometry import Region
from tests.support.tui import until

from gradrepl.history import History
from gradrepl.tui.app import GradReplApp
from gradrepl.tui.lesson.picker import LessonPicker
from gradrepl.tutor.lesson import load_course


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_every_description_is_shown_to_its_last_word(size, tmp_path: Path):
    course = load_course()
    app = GradReplApp(learn=True, history=History(tmp_path / "h.jsonl"), start_kernel=False)
    async with app.run_test(size=size) as pilot:
        picker = app.query_one(LessonPicker)
        await until(pilot, lambda: picker.option_count >= len(course.lessons), "the course in the picker")
        for index, lesson in enumerate(course.lessons):
            picker.highlighted = index  # scrolled into view
            await pilot.pause(0.05)
            shown = picker.render_lines(Region(0, 0, picker.size.width, picker.size.height))
            screen = " ".join(" ".join("".join(segment.text for segment in strip) for strip in shown).split())
            tail = " ".join(lesson.summary.split()[-2:])
            assert tail in screen, f"{lesson.id}: the description ends {tail!r}, not in the picker at {size}: {screen}"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
@pytest.mark.parametrize("locale, shown, hidden", [("en_GB.UTF-8", "Quick check: a second backward()", "त्वरित"),
                                                   ("hi_IN.UTF-8", "त्वरित जाँच", "Quick check")],
                         ids=["english", "hindi"])
async def test_a_title_given_in_two_languages_shows_in_the_learners_only(size, locale, shown, hidden,
                                                                         monkeypatch, tmp_path: Path):
    for key in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("LANG", locale)
    course = load_course()
    index = [lesson.id for lesson in course.lessons].index("accumulation")
    app = GradReplApp(learn=True, history=History(tmp_path / "h.jsonl"), start_kernel=False)
    async with app.run_test(size=size) as pilot:
        picker = app.query_one(LessonPicker)
        await until(pilot, lambda: picker.option_count >= len(course.lessons), "the course in the picker")
        picker.highlighted = index
        await pilot.pause(0.05)
        shown_lines = picker.render_lines(Region(0, 0, picker.size.width, picker.size.height))
        screen = " ".join("".join(segment.text for segment in strip) for strip in shown_lines)
        assert shown in screen and hidden not in screen, screen
