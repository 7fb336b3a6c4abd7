"""Quiz mode: which questions to ask, in what order, and what an answer does to the schedule.

One FSRS card per question id (fsrs package). A wrong answer rates Again, a right
one Good, a right one after a hint Hard. Due cards come first, the least likely
to be remembered first; then questions never asked. A fixed clock and a seed
make every choice here reproducible.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Awaitable, Callable, Iterable

from fsrs import Card, Rating, Scheduler, State

from gradrepl.client.options import KernelOptions
from gradrepl.session import KernelState, Session
from gradrepl.tutor.asking import answer_text
from gradrepl.tutor.grading import Grade
from gradrepl.tutor.keys import KeyKernel
from gradrepl.tutor.lesson import Course, Question
from gradrepl.tutor.progress import ProgressStore, Review

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The current time in UTC (the default clock)."""
    return datetime.now(timezone.utc)


def rating_for(correct: bool, hinted: bool) -> Rating:
    """How an answer rates a card: wrong = Again, right after a hint = Hard, right = Good."""
    if not correct:
        return Rating.Again
    return Rating.Hard if hinted else Rating.Good


def lesson_of(question_id: str) -> str:
    """The lesson part of a `lesson_id/question_id` id."""
    return question_id.rpartition("/")[0] or question_id


def card_id_for(question_id: str) -> int:
    """A stable card id derived from the question id (fsrs would otherwise use the clock)."""
    return int.from_bytes(hashlib.sha256(question_id.encode()).digest()[:6], "big")


@dataclass
class QuizPlan:
    """The questions a quiz will ask, in order, and why they were chosen."""

    question_ids: list[str]
    due: int            # how many of them were due reviews
    new: int            # how many were never asked before
    next_due: datetime | None  # the earliest due date among cards not drawn (None if none)


class SpacedRepetition:
    """FSRS scheduling over the progress store: cards in, ratings out, every review committed."""

    def __init__(self, store: ProgressStore, *, clock: Clock = utc_now, fuzzing: bool = True):
        self.store = store
        self.clock = clock
        self.scheduler = Scheduler(enable_fuzzing=fuzzing)

    def now(self) -> datetime:
        return self.clock().astimezone(timezone.utc)

    def card(self, question_id: str) -> Card:
        """The question's card: the stored one, or a new card due now."""
        stored = self.store.card(question_id)
        if stored is not None:
            return Card.from_json(stored.card_json)
        return Card(card_id=card_id_for(question_id), state=State.Learning, due=self.now())

    def retrievability(self, card: Card, at: datetime | None = None) -> float:
        """FSRS's estimate that the learner recalls the card now (0 for a card never reviewed)."""
        return self.scheduler.get_card_retrievability(card, at or self.now())

    def review(self, question_id: str, correct: bool, hinted: bool, answer: str,
               duration_ms: int | None = None) -> Card:
        """Rate the answer, reschedule the card, and commit both before returning the new card."""
        now = self.now()
        rating = rating_for(correct, hinted)
        card, _ = self.scheduler.review_card(self.card(question_id), rating, now, duration_ms)
        review = Review(question_id, lesson_of(question_id), now, int(rating), correct, hinted, answer, duration_ms)
        self.store.record_review(review, card.to_json(), card.due, card.last_review)
        return card

    def _failed_last(self) -> set[str]:
        """The questions whose latest review was a wrong answer."""
        latest: dict[str, bool] = {}
        for review in self.store.reviews():  # oldest first
            latest[review.question_id] = review.correct
        return {question_id for question_id, correct in latest.items() if not correct}

    def plan(self, question_ids: Iterable[str], count: int | None = None, seed: int | None = None) -> QuizPlan:
        """Order the quiz: due cards (those last answered wrong first, then the lowest retrievability
        first), then new questions. Right after a wrong answer FSRS's estimate is near 100%, so a failed
        card is put first by its last review, not by its estimate.

        Ties and the new questions are shuffled by `seed` (random when None);
        cards not yet due are left out.
        """
        rng = random.Random(seed)
        now = self.now()
        stored = self.store.cards()
        failed = self._failed_last()
        candidates = list(dict.fromkeys(question_ids))
        due: list[tuple[float, float, str]] = []
        new: list[str] = []
        later: list[datetime] = []
        for question_id in candidates:
            if question_id not in stored:
                new.append(question_id)
                continue
            card = Card.from_json(stored[question_id].card_json)
            if card.due <= now:
                urgency = -1.0 if question_id in failed else self.retrievability(card, now)
                due.append((urgency, rng.random(), question_id))
            else:
                later.append(card.due)
        due.sort()
        rng.shuffle(new)
        ordered = [question_id for _, _, question_id in due] + new
        chosen = ordered if count is None else ordered[:max(count, 0)]
        due_chosen = sum(1 for question_id in chosen if question_id in stored)
        left_out = later + [Card.from_json(stored[q].card_json).due for q in ordered[len(chosen):] if q in stored]
        return QuizPlan(chosen, due_chosen, len(chosen) - due_chosen, min(left_out, default=None))


def result_word(correct: bool, hinted: bool) -> str:
    """How an answer is reported: "right", "right after a hint" or "wrong"."""
    if not correct:
        return "wrong"
    return "right after a hint" if hinted else "right"


def due_in_words(due: datetime, now: datetime) -> str:
    """How far away a due date is, in the words a learner reads at a glance."""
    seconds = (due - now).total_seconds()
    if seconds <= 0:
        return "now"
    if seconds < 3600:
        return f"in {max(1, round(seconds / 60))} min"
    if seconds < 86400:
        return f"in {round(seconds / 3600)} h"
    if seconds < 60 * 86400:
        days = round(seconds / 86400)
        return f"in {days} day" + ("s" if days != 1 else "")
    return due.strftime("on %Y-%m-%d")


def review_stats(spaced: SpacedRepetition, course_questions: dict[str, list[str]] | None = None) -> dict:
    """Per lesson and per question: reviews, last result, due date, retrievability; and totals.

    `course_questions` maps lesson id -> question ids of the course, so questions never
    asked are counted as new; questions only the store knows are listed too.
    """
    now = spaced.now()
    store = spaced.store
    by_lesson: dict[str, list[str]] = {lesson: list(ids) for lesson, ids in (course_questions or {}).items()}
    cards = store.cards()
    for question_id, stored in cards.items():
        known = by_lesson.setdefault(stored.lesson_id, [])
        if question_id not in known:
            known.append(question_id)
    history: dict[str, list] = {}
    for review in store.reviews():
        history.setdefault(review.question_id, []).append(review)
    lesson_progress = store.lessons()
    lessons = []
    for lesson_id, question_ids in by_lesson.items():
        rows = [_question_row(spaced, question_id, cards, history.get(question_id, []), now)
                for question_id in question_ids]
        progress = lesson_progress.get(lesson_id)
        lessons.append({
            "lesson_id": lesson_id,
            "totals": _totals(rows),
            "steps_finished": len(progress.finished) if progress else 0,
            "questions": rows,
        })
    every_row = [row for lesson in lessons for row in lesson["questions"]]
    return {"now": now.isoformat(), "totals": _totals(every_row), "lessons": lessons}


def _question_row(spaced: SpacedRepetition, question_id: str, cards: dict, reviews: list, now: datetime) -> dict:
    card = Card.from_json(cards[question_id].card_json) if question_id in cards else None
    last = reviews[-1] if reviews else None
    failed = bool(last and not last.correct)
    return {
        "question_id": question_id,
        "reviews": len(reviews),
        "right": sum(1 for r in reviews if r.correct),
        "last_result": result_word(last.correct, last.hinted) if last else None,
        "last_review": last.reviewed_at.isoformat() if last else None,
        "due": card.due.isoformat() if card else None,
        "due_now": bool(card and card.due <= now),
        # Right after a failed review FSRS's estimate is 100% (no time has passed); the learner has just
        # shown they did not recall it, so no estimate is given until it is answered right again.
        "retrievability": round(spaced.retrievability(card, now), 4) if card and not failed else None,
        "relearning": failed,
    }


def _totals(rows: list[dict]) -> dict:
    dues = [row["due"] for row in rows if row["due"] and not row["due_now"]]
    return {
        "questions": len(rows),
        "new": sum(1 for row in rows if row["due"] is None),
        "due_now": sum(1 for row in rows if row["due_now"]),
        "reviews": sum(row["reviews"] for row in rows),
        "right": sum(row["right"] for row in rows),
        "next_due": min(dues, key=datetime.fromisoformat, default=None),
    }


@dataclass
class QuizResult:
    """What one answer did: right or not, the key, the feedback, when it comes back."""

    question: Question
    answer: str
    correct: bool
    hinted: bool
    expected: str        # the right answer in words
    feedback: str        # the misconception the answer shows, or why the key is right
    due: datetime        # when the question is due again
    retry: bool = False  # the answer was not in the form asked for: nothing recorded, ask again
    explanation: str = ""  # after a wrong answer: what the lesson says next, unless the feedback holds it

    @property
    def word(self) -> str:
        return result_word(self.correct, self.hinted)


@dataclass
class QuizSummary:
    """The end of a quiz: score, what to review, when the next reviews are due."""

    asked: int
    right: int
    hinted: int
    to_review: list[QuizResult]
    next_due: datetime | None
    now: datetime

    @property
    def score(self) -> str:
        return f"{self.right}/{self.asked}"


Grader = Callable[[Question, str], Awaitable[Any]]


class QuizRun:
    """One quiz, for any frontend: `next_question()`, `hint()`, `await answer(text)`, `summary()`.

    Each answer is graded by the lessons' grading code and committed to the store
    before `answer` returns, so stopping at any point loses nothing answered.
    """

    def __init__(self, questions: list[Question], spaced: SpacedRepetition, grade: Grader,
                 pool: Iterable[str] = (), plan: QuizPlan | None = None, seed: int | None = None,
                 explanations: dict[str, str] | None = None):
        self.questions = questions
        self.explanations = explanations or {}  # uid -> the lesson's words after the question
        self.seed = seed  # the order options are shown in (None: a new order each quiz)
        self.spaced = spaced
        self._grade = grade
        self.pool = list(pool) or [q.uid for q in questions]
        self.plan = plan or QuizPlan([q.uid for q in questions], 0, len(questions), None)
        self.results: list[QuizResult] = []
        self.current: Question | None = None
        self._index = -1
        self._hints_shown = 0
        self._shown_at = 0.0

    @property
    def position(self) -> int:
        """1-based number of the current question."""
        return self._index + 1

    @property
    def total(self) -> int:
        return len(self.questions)

    def next_question(self) -> Question | None:
        """Move to the next question; None when the quiz is over."""
        self._index += 1
        self._hints_shown = 0
        self._shown_at = time.monotonic()
        self.current = self.questions[self._index] if self._index < len(self.questions) else None
        return self.current

    def hint(self) -> str | None:
        """The next hint for the current question (a right answer then rates Hard); None when out."""
        if self.current is None:
            return None
        text = self.current.hint(self._hints_shown)
        if text is not None:
            self._hints_shown += 1
        return text

    @property
    def hinted(self) -> bool:
        return self._hints_shown > 0

    def order(self, question: Question) -> list[int]:
        """The order a choice's options are shown in; a typed number counts in this order (tutor/asking.py)."""
        return question.option_order(self.seed)

    async def answer(self, answer: Any) -> QuizResult:
        """Grade the answer to the current question and commit the review; returns what happened.

        The answer is what grading takes: an option index or text for a choice,
        {field: text} for predict_state, text (or code, for a task) otherwise.
        """
        question = self.current
        if question is None:
            raise RuntimeError("the quiz has no current question; call next_question() first")
        grade = await self._grade(question, answer)
        duration = round((time.monotonic() - self._shown_at) * 1000)
        text = answer_text(question, answer)
        if grade.retry:
            due = self.spaced.card(question.uid).due
            return QuizResult(question, text, False, self.hinted, grade.expected, grade.feedback, due, retry=True)
        card = self.spaced.review(question.uid, grade.correct, self.hinted, text, duration)
        # The quiz says right or wrong itself (a mark and a word): the grade's own "Right." is not repeated.
        feedback = without_verdict(grade.feedback) if grade.correct else grade.feedback
        explanation = "" if grade.correct else self.explanations.get(question.uid, "")
        if explanation and " ".join(explanation.split()) in " ".join(feedback.split()):
            explanation = ""
        result = QuizResult(question, text, grade.correct, self.hinted, grade.expected, feedback, card.due,
                            explanation=explanation)
        self.results.append(result)
        return result

    def summary(self) -> QuizSummary:
        """Score, the questions to review (wrong or hinted), and the next due date in the pool."""
        cards = self.spaced.store.cards()
        dues = [Card.from_json(cards[q].card_json).due for q in self.pool if q in cards]
        return QuizSummary(
            asked=len(self.results),
            right=sum(1 for r in self.results if r.correct),
            hinted=sum(1 for r in self.results if r.correct and r.hinted),
            to_review=[r for r in self.results if not r.correct or r.hinted],
            next_due=min(dues, default=None),
            now=self.spaced.now(),
        )


VERDICT_WORDS = ("Right on every field.", "Right.")  # how grading opens a right answer's feedback


def without_verdict(feedback: str) -> str:
    """A right answer's feedback without grading's opening verdict (the quiz shows its own)."""
    text = feedback.strip()
    for words in VERDICT_WORDS:
        if text.startswith(words):
            return text[len(words):].strip()
    return text


def lesson_explanations(course: Course) -> dict[str, str]:
    """Each question's explanation for a quiz: its own, else the first paragraph of the lesson's prose
    right after it (lessons ask first and explain after), headings left out."""
    found: dict[str, str] = {}
    for lesson in course.lessons:
        for n, step in enumerate(lesson.steps):
            if step.question is None:
                continue
            after = lesson.steps[n + 1] if n + 1 < len(lesson.steps) else None
            paragraph = ""
            if after is not None and after.kind == "prose":
                paragraphs = [p.strip() for p in after.text.split("\n\n") if p.strip()]
                paragraph = next((p for p in paragraphs if not p.startswith("#")), "")
            found[step.question.uid] = step.question.explanation or paragraph
    return found


def select_questions(course: Course, lesson_id: str | None = None) -> list[Question]:
    """The quiz pool: every question of the course, or of one lesson (KeyError if unknown)."""
    if lesson_id is None:
        return course.questions
    lesson = course.get(lesson_id)
    if lesson is None:
        raise KeyError(lesson_id)
    return lesson.questions


def start_quiz(course: Course, spaced: SpacedRepetition, grade: Grader, *, lesson_id: str | None = None,
               count: int | None = None, seed: int | None = None) -> QuizRun:
    """Plan a quiz over the course (or one lesson; KeyError if unknown) and return it ready to run."""
    pool = select_questions(course, lesson_id)
    plan = spaced.plan([q.uid for q in pool], count, seed)
    by_uid = {q.uid: q for q in pool}
    return QuizRun([by_uid[uid] for uid in plan.question_ids], spaced, grade, [q.uid for q in pool], plan,
                   seed if seed is not None else random.randrange(1 << 30), lesson_explanations(course))


class SessionGrader:
    """Grades quiz answers with the lessons' grading code in one kernel session.

    `start()` boots the kernel in the background, so the learner reads the first
    question while torch imports.
    """

    def __init__(self, options: KernelOptions | None = None):
        self.options = options
        self.session: Session | None = None
        self._starting: asyncio.Task | None = None

    def start(self, on_state: Callable[[KernelState], None] | None = None) -> None:
        """Start the kernel in the background; `on_state` hears its states (a TUI shows them)."""
        if self._starting is None:
            self.session = Session(self.options, on_state=on_state)
            self._starting = asyncio.get_running_loop().create_task(self.session.start())

    async def __call__(self, question: Question, answer: Any) -> Grade:
        self.start()
        await self._starting
        # The lessons' one key path: a namespace rebuilt from scratch for each question (tutor/keys.py).
        return await KeyKernel(self.session, owned=False).grade(question, answer)

    async def close(self) -> None:
        """Stop the kernel (also one still starting)."""
        if self._starting is None:
            return
        if not self._starting.done():
            self._starting.cancel()
        await self.session.close()
