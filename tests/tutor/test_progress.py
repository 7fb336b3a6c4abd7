"""The progress store: durable, shared by two processes, never silently emptied."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from gradrepl import paths
from gradrepl.tutor.progress import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    LessonProgress,
    ProgressStore,
    Review,
    StoreError,
)

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv(paths.HOME_ENV, str(tmp_path / "home"))
    return tmp_path / "home"


def _review(question_id: str, at: datetime, correct: bool = True, answer: str = "2") -> Review:
    return Review(question_id, question_id.split("/")[0], at, 3 if correct else 1, correct, False, answer, 1200)


def _record(store: ProgressStore, question_id: str, at: datetime, correct: bool = True) -> None:
    card = {"card_id": 1, "state": 1, "step": 1, "stability": 2.3, "difficulty": 2.1,
            "due": (at + timedelta(minutes=10)).isoformat(), "last_review": at.isoformat()}
    store.record_review(_review(question_id, at, correct), json.dumps(card), at + timedelta(minutes=10), at)


def test_store_lives_in_gradrepl_home_with_wal_and_schema_version(home):
    with ProgressStore.open() as store:
        assert store.path == home / "progress.sqlite3"
        assert store.notices == []
    raw = sqlite3.connect(home / "progress.sqlite3")
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert raw.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert raw.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]


def test_every_review_is_visible_to_another_connection_at_once(home):
    writer = ProgressStore.open()
    reader = ProgressStore.open()
    _record(writer, "basics/q1", T0, correct=False)
    _record(writer, "basics/q1", T0 + timedelta(minutes=1))
    assert [(r.correct, r.reviewed_at) for r in reader.reviews("basics/q1")] == [
        (False, T0), (True, T0 + timedelta(minutes=1))]
    assert reader.card("basics/q1").lesson_id == "basics"
    writer.close()
    reader.close()


def test_reopening_does_not_migrate_or_lose_anything(home):
    with ProgressStore.open() as store:
        _record(store, "basics/q1", T0)
    with ProgressStore.open() as store:
        assert store.notices == []
        assert len(store.reviews()) == 1


WRITER = """
import sys
from datetime import datetime, timedelta, timezone
from gradrepl.tutor.progress import ProgressStore, Review
name, count = sys.argv[1], int(sys.argv[2])
store = ProgressStore.open()
start = datetime(2026, 1, 5, tzinfo=timezone.utc)
for i in range(count):
    at = start + timedelta(seconds=i)
    store.record_review(Review(f"{name}/q{i % 7}", name, at, 3, True, False, str(i)), '{"due": 0}', at, at)
print("done", flush=True)
"""


def test_two_processes_writing_at_once_keep_every_review(home):
    env = {**os.environ, paths.HOME_ENV: str(home)}
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, name, "300"], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for name in ("quiz", "lesson")]
    for writer in writers:
        out, err = writer.communicate(timeout=60)
        assert writer.returncode == 0, err
        assert out.strip() == "done"
    with ProgressStore.open() as store:
        reviews = store.reviews()
        assert store.notices == []
    assert len(reviews) == 600
    assert {r.lesson_id for r in reviews} == {"quiz", "lesson"}
    raw = sqlite3.connect(home / "progress.sqlite3")
    assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_store_written_by_one_process_is_read_by_the_next(home):
    env = {**os.environ, paths.HOME_ENV: str(home)}
    subprocess.run([sys.executable, "-c", WRITER, "basics", "5"], env=env, check=True, capture_output=True)
    reader = "from gradrepl.tutor.progress import ProgressStore; print(len(ProgressStore.open().reviews()))"
    out = subprocess.run([sys.executable, "-c", reader], env=env, check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "5"


def test_a_corrupt_file_is_moved_aside_with_a_notice_and_a_fresh_store_starts(home):
    home.mkdir(parents=True)
    broken = home / "progress.sqlite3"
    garbage = b"this was progress once\x00" * 300
    broken.write_bytes(garbage)
    with ProgressStore.open() as store:
        [notice] = store.notices
        _record(store, "basics/q1", T0)
        assert len(store.reviews()) == 1
    [aside] = [p for p in home.iterdir() if ".unusable-" in p.name]
    assert aside.read_bytes() == garbage
    assert str(aside) in notice and "could not be used" in notice
    with ProgressStore.open() as store:
        assert store.notices == []
        assert len(store.reviews()) == 1


def test_a_damaged_store_is_moved_aside_not_emptied(home):
    with ProgressStore.open() as store:
        _record(store, "basics/q1", T0)
    path = home / "progress.sqlite3"
    data = bytearray(path.read_bytes())
    data[0:16] = b"not sqlite here!"
    path.write_bytes(bytes(data))
    with ProgressStore.open() as store:
        assert "moved to" in store.notices[0]
        assert store.reviews() == []
    [aside] = [p for p in home.iterdir() if p.name.startswith("progress.sqlite3.unusable-") and "-wal" not in p.name]
    assert aside.read_bytes() == bytes(data)


def test_a_foreign_sqlite_file_is_moved_aside_untouched(home):
    home.mkdir(parents=True)
    foreign = sqlite3.connect(home / "progress.sqlite3")
    foreign.execute("CREATE TABLE recipes (name TEXT)")
    foreign.execute("INSERT INTO recipes VALUES ('bread')")
    foreign.commit()
    foreign.close()
    with ProgressStore.open() as store:
        assert "not made by gradrepl" in store.notices[0]
    [aside] = [p for p in home.iterdir() if ".unusable-" in p.name]
    assert sqlite3.connect(aside).execute("SELECT name FROM recipes").fetchall() == [("bread",)]


def test_a_store_from_a_newer_gradrepl_is_refused_and_left_alone(home):
    with ProgressStore.open() as store:
        _record(store, "basics/q1", T0)
    raw = sqlite3.connect(home / "progress.sqlite3")
    raw.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))
    raw.commit()
    raw.close()
    with pytest.raises(StoreError, match="newer gradrepl"):
        ProgressStore.open()
    assert [p.name for p in home.iterdir() if ".unusable-" in p.name] == []
    raw = sqlite3.connect(home / "progress.sqlite3")
    assert raw.execute("SELECT count(*) FROM reviews").fetchone()[0] == 1


def test_lesson_progress_round_trips_and_resets_on_a_new_version(home):
    with ProgressStore.open() as store:
        progress = store.lesson("chain-rule", 1)
        assert (progress.current_step, progress.finished, progress.hints, progress.notice) == (0, [], {}, None)
        store.save_lesson(LessonProgress("chain-rule", "1", current_step=3, finished=[0, 1, 2], hints={2: 2}))
    with ProgressStore.open() as store:
        kept = store.lesson("chain-rule", 1)
        assert (kept.current_step, kept.finished, kept.hints, kept.notice) == (3, [0, 1, 2], {2: 2}, None)
        bumped = store.lesson("chain-rule", 2)
        assert (bumped.current_step, bumped.finished, bumped.hints) == (0, [], {})
        assert "version 1 -> 2" in bumped.notice
        again = store.lesson("chain-rule", 2)
        assert again.notice is None


def test_export_then_import_into_a_fresh_store_gives_the_same_progress(home, tmp_path):
    with ProgressStore.open() as store:
        _record(store, "basics/q1", T0, correct=False)
        _record(store, "basics/q1", T0 + timedelta(minutes=2))
        _record(store, "chain/q3", T0 + timedelta(hours=1))
        store.save_lesson(LessonProgress("basics", "4", 2, [0, 1], {1: 1}), updated_at=T0)
        exported = store.export_data()
    text = json.dumps(exported)
    other = ProgressStore.open(tmp_path / "other" / "progress.sqlite3")
    taken = other.import_data(json.loads(text))
    assert taken == {"reviews": 3, "cards": 2, "lessons": 1}
    assert other.export_data() == exported
    assert other.import_data(json.loads(text)) == {"reviews": 0, "cards": 0, "lessons": 0}
    assert other.export_data() == exported


def test_import_keeps_the_newer_card_and_refuses_foreign_json(home):
    with ProgressStore.open() as store:
        _record(store, "basics/q1", T0 + timedelta(days=3))
        newer = store.export_data()
    old_machine = {**newer, "reviews": [], "cards": [dict(newer["cards"][0])]}
    old_machine["cards"][0]["card"] = {**newer["cards"][0]["card"], "last_review": T0.isoformat(),
                                       "due": T0.isoformat()}
    with ProgressStore.open() as store:
        assert store.import_data(old_machine)["cards"] == 0
        assert store.export_data()["cards"] == newer["cards"]
        with pytest.raises(StoreError, match="not a gradrepl progress export"):
            store.import_data({"cards": []})
        with pytest.raises(StoreError, match="damaged"):
            store.import_data({"format": "gradrepl-progress", "schema": 1, "reviews": [{"question_id": "x"}]})
        assert len(store.reviews()) == 1
