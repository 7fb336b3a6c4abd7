"""The learner's progress in one SQLite file: quiz cards, the review log, lesson steps.

Every write commits at once, so a quiz killed mid-way loses nothing answered.
WAL mode and a busy timeout let two gradrepl processes (a quiz and a lesson)
share the file. A file that is damaged or belongs to another program is moved
aside with a notice and a fresh store started: progress is never silently emptied.
A file that merely cannot be written (full disk, read-only folder, a lock held)
is kept as it is and the failure is a StoreError in words.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from gradrepl import paths
from gradrepl.terminal_text import visible
from gradrepl.tutor import export_schema

APPLICATION_ID = 0x67726164  # b"grad": marks the file as ours in its SQLite header
BUSY_TIMEOUT_S = 15.0
EXPORT_FORMAT = "gradrepl-progress"
_SQLITE_CORRUPT, _SQLITE_NOTADB = 11, 26   # the only errors that mean the file itself is bad

# MIGRATIONS[i] takes the schema from version i to version i + 1.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        "CREATE TABLE schema_version (version INTEGER NOT NULL)",
        """CREATE TABLE cards (
            question_id TEXT PRIMARY KEY,
            lesson_id   TEXT NOT NULL,
            card        TEXT NOT NULL,  -- fsrs Card.to_json()
            due         TEXT NOT NULL,  -- copied from the card so SQL can order by it
            last_review TEXT
        )""",
        """CREATE TABLE reviews (
            id          INTEGER PRIMARY KEY,
            review_id   TEXT NOT NULL UNIQUE,  -- random: recognises a review again on import
            question_id TEXT NOT NULL,
            lesson_id   TEXT NOT NULL,
            reviewed_at TEXT NOT NULL,
            rating      INTEGER NOT NULL,  -- fsrs Rating: 1 Again, 2 Hard, 3 Good, 4 Easy
            correct     INTEGER NOT NULL,
            hinted      INTEGER NOT NULL,
            answer      TEXT NOT NULL,
            duration_ms INTEGER
        )""",
        "CREATE INDEX reviews_by_lesson ON reviews (lesson_id, question_id)",
        """CREATE TABLE lessons (
            lesson_id    TEXT PRIMARY KEY,
            version      TEXT NOT NULL,
            current_step INTEGER NOT NULL,
            finished     TEXT NOT NULL,  -- JSON list of step indexes
            hints        TEXT NOT NULL,  -- JSON {step index: hints shown}
            updated_at   TEXT NOT NULL
        )""",
        "INSERT INTO schema_version (version) VALUES (0)",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)


class StoreError(Exception):
    """The store cannot be used as it is (for example a newer gradrepl made it)."""


class _Unusable(Exception):
    """The file is not a gradrepl store we can read: move it aside."""


@dataclass
class Review:
    """One answer to one question, as the review log keeps it."""

    question_id: str
    lesson_id: str
    reviewed_at: datetime
    rating: int
    correct: bool
    hinted: bool
    answer: str
    duration_ms: int | None = None
    review_id: str = field(default_factory=lambda: uuid.uuid4().hex)


@dataclass
class StoredCard:
    """A question's FSRS card as JSON (fsrs.Card.to_json), with its lesson."""

    question_id: str
    lesson_id: str
    card_json: str


@dataclass
class LessonProgress:
    """Where the learner is in one lesson; steps are indexes into the lesson's steps."""

    lesson_id: str
    version: str
    current_step: int = 0
    finished: list[int] = field(default_factory=list)
    hints: dict[int, int] = field(default_factory=dict)
    notice: str | None = None  # said once when a new lesson version reset the progress


def lesson_state(progress: LessonProgress | None, step_count: int) -> str:
    """"new", "started" or "done" (its last step finished) for one lesson."""
    if progress is None or (progress.current_step == 0 and not progress.finished):
        return "new"
    return "done" if step_count - 1 in progress.finished else "started"


def utc_iso(moment: datetime) -> str:
    """A datetime as ISO-8601 in UTC, so text order is time order."""
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds")


class ProgressStore:
    """The progress file. Open with `ProgressStore.open()`; read `notices` and tell the learner."""

    def __init__(self, connection: sqlite3.Connection, path: Path, notices: list[str]):
        self._db = connection
        self.path = path
        self.notices = notices

    @classmethod
    def open(cls, path: Path | str | None = None) -> ProgressStore:
        """Open (or create) the store; a damaged or foreign file is moved aside first."""
        path = Path(path) if path is not None else paths.progress_db()
        notices: list[str] = []
        connection = _connect(path)
        try:
            try:
                _check(connection)
            except (_Unusable, sqlite3.DatabaseError) as exc:
                if not _damaged(exc):
                    raise
                connection.close()
                aside = _move_aside(path)
                notices.append(
                    f"Your progress file {path} could not be used ({_reason(exc)}). "
                    f"It was moved to {aside} and a fresh progress file was started."
                )
                connection = _connect(path)
            _use_wal(connection)
            _migrate(connection)
        except sqlite3.Error as exc:
            connection.close()
            raise StoreError(f"your progress file {path} cannot be used now ({exc}); it was left as it is. "
                             "Free disk space or fix the folder's permissions, then try again") from None
        return cls(connection, path, notices)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> ProgressStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One committed transaction; it takes the write lock at once so it never deadlocks."""
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise StoreError(f"progress was not saved to {self.path}: {exc}") from None

    # Quiz cards and the review log.

    def card(self, question_id: str) -> StoredCard | None:
        """The stored card of a question, or None if it was never answered."""
        row = self._db.execute(
            "SELECT question_id, lesson_id, card FROM cards WHERE question_id = ?", (question_id,)
        ).fetchone()
        return StoredCard(*row) if row else None

    def cards(self, lesson_id: str | None = None) -> dict[str, StoredCard]:
        """Every stored card (of one lesson, if given) by question id."""
        query = "SELECT question_id, lesson_id, card FROM cards"
        rows = self._db.execute(query + " WHERE lesson_id = ?", (lesson_id,)) if lesson_id else self._db.execute(query)
        return {row[0]: StoredCard(*row) for row in rows}

    def record_review(self, review: Review, card_json: str, due: datetime, last_review: datetime | None) -> None:
        """Store an answer and the card it produced, together, committed before returning."""
        with self._write() as db:
            db.execute(
                "INSERT INTO reviews (question_id, lesson_id, reviewed_at, rating, correct, hinted, answer, duration_ms,"
                " review_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                _review_row(review),
            )
            db.execute(
                "INSERT INTO cards (question_id, lesson_id, card, due, last_review) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT (question_id) DO UPDATE SET lesson_id = excluded.lesson_id, card = excluded.card,"
                " due = excluded.due, last_review = excluded.last_review",
                (review.question_id, review.lesson_id, card_json, utc_iso(due),
                 utc_iso(last_review) if last_review else None),
            )

    def reviews(self, question_id: str | None = None) -> list[Review]:
        """The review log, oldest first (of one question, if given)."""
        query = ("SELECT question_id, lesson_id, reviewed_at, rating, correct, hinted, answer, duration_ms,"
                 " review_id FROM reviews")
        args: tuple[str, ...] = ()
        if question_id is not None:
            query += " WHERE question_id = ?"
            args = (question_id,)
        rows = self._db.execute(query + " ORDER BY reviewed_at, id", args)
        return [
            Review(q, lesson, datetime.fromisoformat(at), rating, bool(correct), bool(hinted), answer, duration, rid)
            for q, lesson, at, rating, correct, hinted, answer, duration, rid in rows
        ]

    # Lesson progress.

    def lesson(self, lesson_id: str, version: str | int) -> LessonProgress:
        """Progress in a lesson; if the lesson's version changed, progress restarts with a notice."""
        version = str(version)
        row = self._db.execute(
            "SELECT version, current_step, finished, hints FROM lessons WHERE lesson_id = ?", (lesson_id,)
        ).fetchone()
        if row is None:
            return LessonProgress(lesson_id, version)
        stored_version, current, finished, hints = row
        if stored_version != version:
            fresh = LessonProgress(lesson_id, version)
            self.save_lesson(fresh)
            fresh.notice = (
                f"Lesson {lesson_id!r} changed (version {stored_version} -> {version}), "
                "so your progress in it starts again."
            )
            return fresh
        return LessonProgress(
            lesson_id, version, current, json.loads(finished), {int(k): v for k, v in json.loads(hints).items()}
        )

    def save_lesson(self, progress: LessonProgress, updated_at: datetime | None = None) -> None:
        """Store where the learner is in a lesson, committed before returning."""
        moment = updated_at or datetime.now(timezone.utc)
        with self._write() as db:
            db.execute(
                "INSERT OR REPLACE INTO lessons (lesson_id, version, current_step, finished, hints, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (progress.lesson_id, str(progress.version), progress.current_step,
                 json.dumps(sorted(set(progress.finished))),
                 json.dumps({str(k): v for k, v in sorted(progress.hints.items())}), utc_iso(moment)),
            )

    def lessons(self) -> dict[str, LessonProgress]:
        """Progress of every lesson the learner started, by lesson id."""
        rows = self._db.execute("SELECT lesson_id, version FROM lessons ORDER BY lesson_id").fetchall()
        return {lesson_id: self.lesson(lesson_id, version) for lesson_id, version in rows}

    # Moving progress between machines.

    def export_data(self) -> dict[str, Any]:
        """Everything in the store as plain JSON-able data."""
        db = self._db
        return {
            "format": EXPORT_FORMAT,
            "schema": SCHEMA_VERSION,
            "cards": [
                {"question_id": q, "lesson_id": lesson, "card": json.loads(card)}
                for q, lesson, card in db.execute("SELECT question_id, lesson_id, card FROM cards ORDER BY question_id")
            ],
            "reviews": [
                {"review_id": r.review_id, "question_id": r.question_id, "lesson_id": r.lesson_id,
                 "reviewed_at": utc_iso(r.reviewed_at),
                 "rating": r.rating, "correct": r.correct, "hinted": r.hinted, "answer": r.answer,
                 "duration_ms": r.duration_ms}
                for r in self.reviews()
            ],
            "lessons": [
                {"lesson_id": lesson, "version": version, "current_step": current, "finished": json.loads(finished),
                 "hints": json.loads(hints), "updated_at": updated}
                for lesson, version, current, finished, hints, updated in db.execute(
                    "SELECT lesson_id, version, current_step, finished, hints, updated_at FROM lessons"
                    " ORDER BY lesson_id")
            ],
        }

    def import_data(self, data: dict[str, Any]) -> dict[str, int]:
        """Merge exported data in: reviews are added once, newer cards and lesson rows win.

        Returns how many reviews, cards and lessons were taken. Raises StoreError on data
        that is not a gradrepl export; nothing is written then.
        """
        if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
            raise StoreError("this file is not a gradrepl progress export")
        if not isinstance(data.get("schema"), int) or data["schema"] > SCHEMA_VERSION:
            raise StoreError("this export was made by a newer gradrepl; update gradrepl to import it")
        found = export_schema.problems(data)
        if found:
            raise StoreError(f"this progress export is damaged: {export_schema.describe(found)}; nothing was imported")
        taken = {"reviews": 0, "cards": 0, "lessons": 0}
        try:
            with self._write() as db:
                for item in data.get("reviews", []):
                    review = Review(item["question_id"], item["lesson_id"], datetime.fromisoformat(item["reviewed_at"]),
                                    int(item["rating"]), bool(item["correct"]), bool(item["hinted"]),
                                    str(item["answer"]), item.get("duration_ms"), str(item["review_id"]))
                    cursor = db.execute(
                        "INSERT OR IGNORE INTO reviews (question_id, lesson_id, reviewed_at, rating, correct, hinted,"
                        " answer, duration_ms, review_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", _review_row(review))
                    taken["reviews"] += cursor.rowcount
                for item in data.get("cards", []):
                    card = item["card"]
                    last = card.get("last_review")
                    cursor = db.execute(
                        "INSERT INTO cards (question_id, lesson_id, card, due, last_review) VALUES (?, ?, ?, ?, ?)"
                        " ON CONFLICT (question_id) DO UPDATE SET lesson_id = excluded.lesson_id,"
                        " card = excluded.card, due = excluded.due, last_review = excluded.last_review"
                        " WHERE coalesce(cards.last_review, '') < coalesce(excluded.last_review, '')",
                        (item["question_id"], item["lesson_id"], json.dumps(card),
                         utc_iso(datetime.fromisoformat(card["due"])),
                         utc_iso(datetime.fromisoformat(last)) if last else None))
                    taken["cards"] += cursor.rowcount
                for item in data.get("lessons", []):
                    cursor = db.execute(
                        "INSERT INTO lessons (lesson_id, version, current_step, finished, hints, updated_at)"
                        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (lesson_id) DO UPDATE SET version = excluded.version,"
                        " current_step = excluded.current_step, finished = excluded.finished,"
                        " hints = excluded.hints, updated_at = excluded.updated_at"
                        " WHERE lessons.updated_at < excluded.updated_at",
                        (item["lesson_id"], str(item["version"]), int(item["current_step"]),
                         json.dumps(sorted(int(step) for step in item["finished"])),
                         json.dumps({str(k): int(v) for k, v in item["hints"].items()}),
                         utc_iso(datetime.fromisoformat(item["updated_at"]))))
                    taken["lessons"] += cursor.rowcount
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise StoreError(f"this progress export is damaged ({exc!r}); nothing was imported") from exc
        return taken


def _review_row(review: Review) -> tuple:
    return (review.question_id, review.lesson_id, utc_iso(review.reviewed_at), review.rating,
            int(review.correct), int(review.hinted), review.answer, review.duration_ms, review.review_id)


def _connect(path: Path) -> sqlite3.Connection:
    if path.is_dir():  # sqlite would say only "unable to open database file"
        raise StoreError(f"{path} is a folder, not a progress file: move it away, or set GRADREPL_HOME "
                         "to another folder")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: transactions are explicit (see ProgressStore._write).
        connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        # The file may have been written by anything: every text read from it is made visible.
        connection.text_factory = _visible_text
        connection.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    except (OSError, sqlite3.Error) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise StoreError(f"the progress file {path} cannot be opened or created ({reason}); "
                         "check that its folder exists and can be written, or set GRADREPL_HOME") from None
    return connection


def _visible_text(data: bytes) -> str:
    return visible(data.decode("utf-8", "replace"))


def _damaged(exc: Exception) -> bool:
    """Whether the file itself is bad (move it aside), rather than not writable now (keep it)."""
    if isinstance(exc, _Unusable):
        return True
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)


def _use_wal(connection: sqlite3.Connection) -> None:
    """Switch the file to WAL once; retried, since SQLite skips the busy timeout for this switch."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while connection.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        try:
            connection.execute("PRAGMA journal_mode=WAL")
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc):
                raise
        if time.monotonic() > deadline:
            raise StoreError("the progress file stayed locked by another gradrepl; try again")
        time.sleep(0.01)


def _check(connection: sqlite3.Connection) -> None:
    """Raise _Unusable unless the file is empty or a readable gradrepl store."""
    # One read transaction: a store another process is creating is seen whole or not at all.
    connection.execute("BEGIN")
    try:
        application_id = connection.execute("PRAGMA application_id").fetchone()[0]
        tables = connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if application_id == 0 and tables == 0:
            return
        if application_id != APPLICATION_ID:
            raise _Unusable("it was not made by gradrepl")
        verdict = connection.execute("PRAGMA quick_check").fetchone()[0]
        if verdict != "ok":
            raise _Unusable(f"it is damaged: {verdict}")
        (version,) = connection.execute("SELECT version FROM schema_version").fetchone()
    finally:
        if connection.in_transaction:
            connection.execute("COMMIT")
    if version > SCHEMA_VERSION:
        connection.close()
        raise StoreError(
            f"the progress file was made by a newer gradrepl (schema {version}, this one knows {SCHEMA_VERSION}); "
            "update gradrepl to use it"
        )


def _migrate(connection: sqlite3.Connection) -> None:
    """Bring the schema up to SCHEMA_VERSION, one committed step per migration."""
    while True:
        connection.execute("BEGIN IMMEDIATE")
        try:
            has_table = connection.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'").fetchone()
            version = connection.execute("SELECT version FROM schema_version").fetchone()[0] if has_table else 0
            if version >= SCHEMA_VERSION:
                connection.execute("COMMIT")
                return
            for statement in MIGRATIONS[version]:
                connection.execute(statement)
            connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            connection.execute("UPDATE schema_version SET version = ?", (version + 1,))
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise


def _move_aside(path: Path) -> Path:
    """Rename the file (and its WAL companions) to a free `.unusable-<time>` name."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    aside = path.with_name(f"{path.name}.unusable-{stamp}")
    counter = 1
    while aside.exists():
        counter += 1
        aside = path.with_name(f"{path.name}.unusable-{stamp}-{counter}")
    path.rename(aside)
    for suffix in ("-wal", "-shm"):
        companion = path.with_name(path.name + suffix)
        if companion.exists():
            companion.rename(aside.with_name(aside.name + suffix))
    return aside


def _reason(exc: Exception) -> str:
    if isinstance(exc, _Unusable):
        return str(exc)
    return f"it is damaged or not a database: {exc}"
