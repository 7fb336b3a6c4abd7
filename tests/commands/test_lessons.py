"""`gradrepl lessons`: the course with the learner's progress from the store."""

import json
import subprocess

from tests.support.paths import GRADREPL

from gradrepl.tutor.lesson import load_course
from gradrepl.tutor.progress import LessonProgress, ProgressStore


def lessons_json():
    proc = subprocess.run([*GRADREPL, "lessons", "--json"], capture_output=True, text=True, check=True)
    return {row["id"]: row for row in json.loads(proc.stdout)}


def test_listing_shows_progress_kept_in_the_store(gradrepl_home):
    course = {lesson.id: lesson for lesson in load_course().lessons}
    first, second = course["first-gradient"], course["accumulation"]
    with ProgressStore.open() as store:
        store.save_lesson(LessonProgress(first.id, first.version, current_step=len(first.steps) - 1,
                                         finished=list(range(len(first.steps)))))
        store.save_lesson(LessonProgress(second.id, second.version, current_step=2, finished=[0, 1]))
    rows = lessons_json()
    assert {"id", "title", "path"} <= set(rows["tracking"])
    assert rows["tracking"]["progress"]["state"] == "new"
    assert rows["first-gradient"]["progress"]["state"] == "done"
    assert rows["accumulation"]["progress"] == {"state": "started", "steps": len(second.steps),
                                                "finished_steps": 2, "current_step": 2}
    text = subprocess.run([*GRADREPL, "lessons"], capture_output=True, text=True, check=True).stdout
    assert f"step 3 of {len(second.steps)}" in text and "done" in text


def test_progress_of_an_older_lesson_version_is_not_shown(gradrepl_home):
    with ProgressStore.open() as store:
        store.save_lesson(LessonProgress("tracking", "0-old", current_step=3, finished=[0, 1, 2]))
    assert lessons_json()["tracking"]["progress"]["state"] == "new"
