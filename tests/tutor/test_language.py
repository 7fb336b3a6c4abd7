"""The learner's language from the locale, and a lesson's title picked in it (issue 23 §6)."""

from __future__ import annotations

import pytest

from gradrepl.tutor.language import learner_language
from gradrepl.tutor.lesson import LessonFormatError, parse_lesson

LESSON = """---
id: two
title:
  en: Gradients add up
  hi: ग्रेडिएंट जुड़ते हैं
language: {language}
---

Prose.

```question
id: q
type: numeric
prompt: How much?
ask: "1 + 1"
tolerance: 0
hints: [one, two]
```
"""


@pytest.mark.parametrize("environ, language", [
    ({"LANG": "hi_IN.UTF-8"}, "hi"), ({"LANGUAGE": "hi:en", "LANG": "en_US.UTF-8"}, "hi"),
    ({"LC_ALL": "C", "LANG": "hi_IN"}, "hi"), ({"LANG": "C.UTF-8"}, "en"), ({}, "en"), ({"LC_MESSAGES": "fr-CA"}, "fr")])
def test_the_learners_language_is_the_first_the_locale_names(environ, language):
    assert learner_language(environ) == language


def test_a_title_in_two_languages_gives_the_learners_else_english():
    lesson = parse_lesson(LESSON.format(language="hi"))
    assert lesson.title_in("hi") == "ग्रेडिएंट जुड़ते हैं"
    assert lesson.title_in("en") == lesson.title_in("de") == lesson.title == "Gradients add up"


def test_titles_without_one_in_the_lessons_own_language_are_refused():
    with pytest.raises(LessonFormatError, match="no title in the lesson's language"):
        parse_lesson(LESSON.format(language="fr"))
