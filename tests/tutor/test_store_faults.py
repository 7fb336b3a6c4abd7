"""Nothing lost, whatever the disk or the input: the progress store under faults and hostile files.

Each test checks from outside what a learner would lose: is the database still there and
whole, did a claimed save reach the file, did a refused import leave the store untouched?
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from tests.support.paths import ROOT

from gradrepl.tutor import keeper as keeper_module
from gradrepl.tutor.keeper import ProgressKeeper
from gradrepl.tutor import progress
from gradrepl.tutor.progress import LessonProgress, ProgressStore


def gradrepl(*args: str, env_home: Path | str, stdin: str | None = None, limit_fsize: bool = False):
    prelude = "import resource; resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0)); " if limit_fsize else ""
    code = prelude + "import sys; from gradrepl.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, input=stdin, env={**__import__("os").environ, "GRADREPL_HOME": str(env_home)})


def stored_lessons(path: Path) -> list[tuple]:
    with sqlite3.connect(path) as raw:
        return raw.execute("SELECT lesson_id, current_step FROM lessons").fetchall()


@pytest.fixture
def quick_store(monkeypatch):
    monkeypatch.setattr(progress, "BUSY_TIMEOUT_S", 0.2)
    monkeypatch.setattr(keeper_module, "RETRY_WAITS", (0.2, 0.4))


def test_a_save_that_cannot_get_the_lock_is_reported_and_not_claimed(gradrepl_home: Path, quick_store):
    ProgressStore.open().close()
    keeper = ProgressKeeper()
    keeper._thread.submit(keeper._run, lambda store: None, None).result()   # open, as in a lesson
    blocker = sqlite3.connect(gradrepl_home / "progress.sqlite3", isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    failures: list[str] = []
    try:
        outcome = keeper.save(LessonProgress("tracking", "1", 3, [0, 1, 2]), on_failure=failures.append).result(30)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert outcome and "Not saved" in outcome and "locked" in outcome
    assert failures == [outcome] and keeper.unsaved and outcome in keeper.take_notices()
    assert stored_lessons(gradrepl_home / "progress.sqlite3") == []
    again = keeper.save(LessonProgress("tracking", "1", 3, [0, 1, 2])).result(30)
    keeper.close()
    assert again is None and not keeper.unsaved
    assert stored_lessons(gradrepl_home / "progress.sqlite3") == [("tracking", 3)]


def test_a_save_is_retried_until_the_lock_goes(gradrepl_home: Path, quick_store):
    ProgressStore.open().close()
    keeper = ProgressKeeper()
    keeper._thread.submit(keeper._run, lambda store: None, None).result()
    blocker = sqlite3.connect(gradrepl_home / "progress.sqlite3", isolation_level=None, check_same_thread=False)
    blocker.execute("BEGIN EXCLUSIVE")
    threading.Timer(0.3, lambda: (blocker.execute("ROLLBACK"), blocker.close())).start()
    outcome = keeper.save(LessonProgress("tracking", "1", 2, [0, 1])).result(30)
    keeper.close()
    assert outcome is None
    assert stored_lessons(gradrepl_home / "progress.sqlite3") == [("tracking", 2)]


def test_a_full_disk_keeps_a_valid_database_and_says_so(gradrepl_home: Path):
    with ProgressStore.open() as store:
        store.save_lesson(LessonProgress("tracking", "1", 4, [0, 1, 2, 3]))
    done = gradrepl("stats", env_home=gradrepl_home, limit_fsize=True)
    assert done.returncode == 2, done.stderr
    assert "left as it is" in done.stderr and "Traceback" not in done.stderr
    assert sorted(p.name for p in gradrepl_home.iterdir() if "unusable" in p.name) == []
    assert stored_lessons(gradrepl_home / "progress.sqlite3") == [("tracking", 4)]
    assert gradrepl("stats", env_home=gradrepl_home).returncode == 0


def test_a_database_path_that_is_a_folder_is_a_clear_error(gradrepl_home: Path):
    (gradrepl_home / "progress.sqlite3").mkdir(parents=True)
    done = gradrepl("stats", env_home=gradrepl_home)
    assert done.returncode == 2 and "is a folder" in done.stderr and "Traceback" not in done.stderr
    assert (gradrepl_home / "progress.sqlite3").is_dir()


def test_a_home_that_cannot_be_made_is_a_clear_error():
    done = gradrepl("stats", env_home="/proc/gradrepl-home")
    assert done.returncode == 2, done.stderr
    assert "cannot be created" in done.stderr and "GRADREPL_HOME" in done.stderr
    assert "Traceback" not in done.stderr


def _export(tmp_path: Path, data) -> Path:
    target = tmp_path / "export.json"
    target.write_text(data if isinstance(data, str) else json.dumps(data))
    return target


GOOD_CARD = {"card_id": 1, "state": 2, "step": None, "stability": 2.3, "difficulty": 5.0,
             "due": "2026-01-05T09:10:00+00:00", "last_review": "2026-01-05T09:00:00+00:00"}


@pytest.mark.parametrize("case, data, words", [
    ("card without card_id", {"cards": [{"question_id": "tracking/q", "lesson_id": "tracking",
                                         "card": {k: v for k, v in GOOD_CARD.items() if k != "card_id"}}]},
     "card.card_id is missing"),
    ("huge rating", {"reviews": [{"review_id": "r1", "question_id": "tracking/q", "lesson_id": "tracking",
                                  "reviewed_at": "2026-01-05T09:00:00+00:00", "rating": 10 ** 100,
                                  "correct": True, "hinted": False, "answer": "2"}]}, "rating must be"),
    ("wrong types", {"reviews": {"a": 1}, "lessons": [{"lesson_id": None, "version": [], "current_step": "3",
                                                       "finished": 5, "hints": [], "updated_at": 7}]},
     "reviews must be a list"),
    ("no lesson id", {"cards": [{"question_id": "tracking/q", "card": GOOD_CARD}]}, "lesson_id is missing"),
])
def test_a_malformed_import_is_refused_whole_and_leaves_the_store_untouched(tmp_path, gradrepl_home, case,
                                                                              data, words):
    with ProgressStore.open() as store:
        store.save_lesson(LessonProgress("tracking", "1", 1, [0]))
        before = store.export_data()
    done = gradrepl("stats", "--import", str(_export(tmp_path, {"format": "gradrepl-progress", "schema": 1, **data})),
                    env_home=gradrepl_home)
    assert done.returncode == 2, (case, done.stdout, done.stderr)
    assert words in done.stderr and "nothing was imported" in done.stderr and "Traceback" not in done.stderr
    with ProgressStore.open() as store:
        assert store.export_data() == before
    assert gradrepl("stats", env_home=gradrepl_home).returncode == 0


def test_a_deeply_nested_import_is_a_clear_error(tmp_path, gradrepl_home):
    done = gradrepl("stats", "--import", str(_export(tmp_path, "[" * 100_000 + "]" * 100_000)),
                    env_home=gradrepl_home)
    assert done.returncode == 2 and "nested too deeply" in done.stderr and "Traceback" not in done.stderr


def test_a_good_import_still_merges(tmp_path, gradrepl_home):
    data = {"format": "gradrepl-progress", "schema": 1,
            "cards": [{"question_id": "tracking/q", "lesson_id": "tracking", "card": GOOD_CARD}],
            "reviews": [{"review_id": "r1", "question_id": "tracking/q", "lesson_id": "tracking",
                         "reviewed_at": "2026-01-05T09:00:00+00:00", "rating": 3, "correct": True,
                         "hinted": False, "answer": "2", "duration_ms": 900}],
            "lessons": [{"lesson_id": "tracking", "version": "1", "current_step": 2, "finished": [0, 1],
                         "hints": {"1": 2}, "updated_at": "2026-01-05T09:00:00+00:00"}]}
    done = gradrepl("stats", "--import", str(_export(tmp_path, data)), env_home=gradrepl_home)
    assert done.returncode == 0, done.stderr
    assert "Imported 1 new reviews, 1 cards and 1 lessons" in done.stdout
