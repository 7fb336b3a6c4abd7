"""FSRS scheduling of quiz questions, with a fixed clock and fuzzing off."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from fsrs import Rating

from gradrepl.tutor.progress import ProgressStore
from gradrepl.tutor.quiz import SpacedRepetition, rating_for, review_stats

T0 = datetime(2026, 3, 2, 8, 30, tzinfo=timezone.utc)


class FixedClock:
    """A clock the test moves by hand."""

    def __init__(self, now: datetime):
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T0)


@pytest.fixture
def spaced(tmp_path, clock) -> SpacedRepetition:
    store = ProgressStore.open(tmp_path / "progress.sqlite3")
    yield SpacedRepetition(store, clock=clock, fuzzing=False)
    store.close()


def test_answers_map_to_fsrs_ratings():
    assert rating_for(correct=False, hinted=False) == Rating.Again
    assert rating_for(correct=False, hinted=True) == Rating.Again
    assert rating_for(correct=True, hinted=True) == Rating.Hard
    assert rating_for(correct=True, hinted=False) == Rating.Good


def test_a_wrong_answer_comes_back_sooner_than_a_hinted_one_and_a_right_one_latest(spaced):
    wrong = spaced.review("basics/wrong", correct=False, hinted=False, answer="0")
    hinted = spaced.review("basics/hinted", correct=True, hinted=True, answer="2")
    right = spaced.review("basics/right", correct=True, hinted=False, answer="2")
    assert wrong.due - T0 == timedelta(minutes=1)
    assert hinted.due - T0 == timedelta(minutes=5, seconds=30)
    assert right.due - T0 == timedelta(minutes=10)
    stored = {r.question_id: (r.rating, r.correct, r.hinted, r.reviewed_at) for r in spaced.store.reviews()}
    assert stored == {
        "basics/wrong": (Rating.Again, False, False, T0),
        "basics/hinted": (Rating.Hard, True, True, T0),
        "basics/right": (Rating.Good, True, False, T0),
    }
    assert spaced.card("basics/right").due == right.due


def test_right_answers_on_later_days_spread_reviews_out(spaced, clock):
    dues = []
    for _ in range(4):
        card = spaced.review("chain/q1", correct=True, hinted=False, answer="6")
        dues.append(card.due - clock.now)
        clock.now = card.due
    assert dues[0] < dues[1] < dues[2] < dues[3]
    assert dues[3] > timedelta(days=3)


def test_without_fuzzing_the_same_history_gives_the_same_schedule(tmp_path):
    dues = []
    for name in ("a", "b"):
        clock = FixedClock(T0)
        with ProgressStore.open(tmp_path / name / "p.sqlite3") as store:
            spaced = SpacedRepetition(store, clock=clock, fuzzing=False)
            for correct in (True, True, True, False, True, True):
                clock.now = spaced.review("chain/q1", correct, False, "x").due
            dues.append(clock.now)
    assert dues[0] == dues[1]


def test_plan_puts_due_cards_first_lowest_retrievability_first_then_new(spaced, clock):
    for question_id in ("l/strong", "l/weak", "l/not-due"):
        spaced.review(question_id, True, False, "x")
    clock.now = T0 + timedelta(days=30)
    spaced.review("l/strong", True, False, "x")
    clock.now = T0 + timedelta(days=120)
    spaced.review("l/not-due", True, False, "x")
    clock.now = T0 + timedelta(days=120, minutes=30)
    assert spaced.card("l/not-due").due > clock.now
    strong = spaced.retrievability(spaced.card("l/strong"))
    weak = spaced.retrievability(spaced.card("l/weak"))
    assert weak < strong

    plan = spaced.plan(["l/new1", "l/strong", "l/not-due", "l/weak", "l/new2"], seed=1)
    assert plan.question_ids[:2] == ["l/weak", "l/strong"]
    assert sorted(plan.question_ids[2:]) == ["l/new1", "l/new2"]
    assert (plan.due, plan.new) == (2, 2)
    assert plan.next_due == spaced.card("l/not-due").due


def test_count_keeps_the_most_urgent(spaced, clock):
    spaced.review("l/old", False, False, "x")
    clock.now = T0 + timedelta(hours=1)
    plan = spaced.plan(["l/new1", "l/new2", "l/old"], count=2, seed=0)
    assert plan.question_ids[0] == "l/old"
    assert (plan.due, plan.new) == (1, 1)


def test_a_seed_makes_the_order_reproducible(spaced):
    questions = [f"l/q{i}" for i in range(12)]
    first = spaced.plan(questions, seed=7).question_ids
    assert spaced.plan(questions, seed=7).question_ids == first
    assert sorted(first) == sorted(questions)
    orders = {tuple(spaced.plan(questions, seed=seed).question_ids) for seed in range(5)}
    assert len(orders) > 1


def test_nothing_due_plans_an_empty_quiz_and_says_when_next(spaced, clock):
    card = spaced.review("l/q1", True, False, "x")
    plan = spaced.plan(["l/q1"], seed=0)
    assert plan.question_ids == []
    assert plan.next_due == card.due


def test_stats_per_lesson_and_question_with_totals(spaced, clock):
    spaced.review("chain/q1", False, False, "0")
    spaced.review("chain/q1", True, True, "6")
    spaced.review("basics/q1", True, False, "2")
    clock.now = T0 + timedelta(days=3)
    stats = review_stats(spaced, {"chain": ["chain/q1", "chain/q2"], "basics": ["basics/q1"]})

    rows = {row["question_id"]: row for lesson in stats["lessons"] for row in lesson["questions"]}
    assert rows["chain/q1"]["reviews"] == 2
    assert rows["chain/q1"]["last_result"] == "right after a hint"
    assert rows["chain/q2"] == {"question_id": "chain/q2", "reviews": 0, "right": 0, "last_result": None,
                                "last_review": None, "due": None, "due_now": False, "retrievability": None,
                                "relearning": False}
    assert rows["basics/q1"]["due"] == (T0 + timedelta(minutes=10)).isoformat()
    assert rows["basics/q1"]["due_now"] is True
    assert 0 < rows["basics/q1"]["retrievability"] < 1
    chain = next(lesson for lesson in stats["lessons"] if lesson["lesson_id"] == "chain")
    assert chain["totals"] == {"questions": 2, "new": 1, "due_now": 1, "reviews": 2, "right": 1, "next_due": None}
    assert stats["totals"]["questions"] == 3 and stats["totals"]["reviews"] == 3 and stats["totals"]["right"] == 2


def test_questions_only_the_store_knows_are_still_listed(spaced):
    spaced.review("removed-lesson/q9", True, False, "x")
    stats = review_stats(spaced, {"chain": ["chain/q1"]})
    assert [lesson["lesson_id"] for lesson in stats["lessons"]] == ["chain", "removed-lesson"]


def test_a_card_just_failed_shows_no_recall_estimate_until_answered_right(spaced, clock):
    from gradrepl.commands.stats import render

    spaced.review("chain/q1", False, False, "0")
    stats = review_stats(spaced, {"chain": ["chain/q1"]})
    row = stats["lessons"][0]["questions"][0]
    assert row["relearning"] is True and row["retrievability"] is None
    assert "100%" not in render(stats) and render(stats).splitlines()[-1].split()[-1] == "-"
    clock.now = T0 + timedelta(minutes=15)
    spaced.review("chain/q1", True, False, "6")
    row = review_stats(spaced, {"chain": ["chain/q1"]})["lessons"][0]["questions"][0]
    assert row["relearning"] is False and 0 < row["retrievability"] <= 1


def test_a_failed_card_is_asked_before_every_other_due_card(spaced, clock):
    """The quiz's help promises the failed ones first; right after a failure FSRS's estimate is near 100%."""
    spaced.review("l/weak", True, False, "x")
    clock.now = T0 + timedelta(days=40)
    spaced.review("l/failed", True, False, "x")
    spaced.review("l/failed", False, False, "y")
    clock.now = T0 + timedelta(days=41)
    assert spaced.card("l/failed").due <= clock.now and spaced.card("l/weak").due <= clock.now
    assert spaced.retrievability(spaced.card("l/failed")) > spaced.retrievability(spaced.card("l/weak"))
    plan = spaced.plan(["l/weak", "l/failed", "l/new"], seed=3)
    assert plan.question_ids == ["l/failed", "l/weak", "l/new"]


def _rendered(spaced, questions):
    from gradrepl.commands.stats import render

    return render(review_stats(spaced, questions))


def test_stats_on_a_fresh_home_is_a_summary_not_a_line_per_question(spaced):
    course = {f"lesson{n}": [f"lesson{n}/question-{i}" for i in range(5)] for n in range(20)}
    text = _rendered(spaced, course)
    lines = text.splitlines()
    assert lines[0].startswith("Total: 100 questions, 100 new"), text
    assert "never asked" not in text and len(lines) < 30, text


def test_stats_keeps_columns_in_line_for_long_ids_and_says_due_now_once(spaced, clock):
    long = "accumulation-on-purpose/an-unusually-long-question-id-for-a-column"
    spaced.review(long, True, False, "x")
    spaced.review("l/short", True, False, "x")
    spaced.review("l/later", True, False, "x")
    clock.now = T0 + timedelta(days=30)
    spaced.review("l/later", True, False, "x")
    spaced.review("l/failed", False, False, "x")
    text = _rendered(spaced, {"l": ["l/short", "l/later", "l/failed"], "accumulation-on-purpose": [long]})
    tables, lines = 0, text.splitlines()
    for n, header in enumerate(lines):
        if not header.startswith("  question"):
            continue
        tables += 1
        end = header.index("reviews") + len("reviews")
        for row in lines[n + 1:]:
            if not row.startswith("  "):
                break
            reviews = row.split()[1]
            assert row.index(" " + reviews + " ", len(row.split()[0]) + 2) + 1 + len(reviews) == end, text
    assert tables == 2, text
    assert " again" not in text, text
    assert "due now" in text and "Next review due" not in text, text
