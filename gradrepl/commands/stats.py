"""`gradrepl stats`: what the learner has reviewed, how it went, and when it comes back.

Also moves progress between machines: `--export FILE` writes the whole store as
JSON, `--import FILE` merges such a file in.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime

from gradrepl.commands.common import exit_codes, open_store, USAGE_EXIT
from gradrepl.terminal_text import visible_data
from gradrepl.tutor.progress import ProgressStore, StoreError
from gradrepl.tutor.quiz import SpacedRepetition, due_in_words, review_stats


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "stats", help="quiz reviews per lesson and question; export or import progress",
        description="Per lesson and per question: reviews, last result, due date and retrievability "
                    "(FSRS's estimate that you still remember it), with totals.",
        epilog=exit_codes("0 the statistics were printed, exported or imported",
                          USAGE_EXIT + " (an --import file that is no progress export: nothing is imported)"))
    parser.add_argument("--json", action="store_true", help="print the statistics as one JSON object")
    moves = parser.add_mutually_exclusive_group()
    moves.add_argument("--export", metavar="FILE", help="write all progress to FILE as JSON ('-' for stdout)")
    moves.add_argument("--import", dest="import_file", metavar="FILE",
                       help="merge progress exported on another machine into this one")


def run(args: argparse.Namespace) -> int:
    with open_store() as store:
        if args.export:
            return _export(store, args.export)
        if args.import_file:
            return _import(store, args.import_file)
        stats = review_stats(SpacedRepetition(store), _course_questions())
    if args.json:
        print(json.dumps(stats, indent=2))
    else:
        print(render(stats))
    return 0


def _course_questions() -> dict[str, list[str]]:
    """Lesson id -> question ids of the course, so unasked questions count as new."""
    from gradrepl.tutor.lesson import load_course

    course = load_course()
    return {lesson.id: [q.uid for q in lesson.questions] for lesson in course.lessons}


def _export(store: ProgressStore, target: str) -> int:
    data = store.export_data()
    text = json.dumps(data, indent=1) + "\n"
    if target == "-":
        sys.stdout.write(text)
        return 0
    with open(target, "w", encoding="utf-8") as handle:
        handle.write(text)
    print(f"Exported {len(data['reviews'])} reviews, {len(data['cards'])} cards and "
          f"{len(data['lessons'])} lessons to {target}.")
    return 0


def _import(store: ProgressStore, source: str) -> int:
    from gradrepl.errors import UsageError
    from gradrepl.commands.common import read_source

    try:
        data = visible_data(json.loads(read_source(source)))  # ids and answers are shown by stats and quiz
        taken = store.import_data(data)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{source}: not JSON ({exc.msg} at line {exc.lineno}); nothing was imported") from None
    except RecursionError:
        raise UsageError(f"{source}: nested too deeply to be a progress export; nothing was imported") from None
    except StoreError as exc:
        raise UsageError(f"{source}: {exc}") from None
    print(f"Imported {taken['reviews']} new reviews, {taken['cards']} cards and {taken['lessons']} lessons "
          f"from {source}.")
    return 0


def render(stats: dict) -> str:
    """The statistics as plain text: the totals first, then a line per lesson and a table of the questions
    it has asked (never-asked ones are only counted), its columns as wide as its longest id."""
    now = datetime.fromisoformat(stats["now"])
    totals = stats["totals"]
    if not stats["lessons"]:
        return "No lessons and no reviews yet. Start with `gradrepl quiz` or a lesson."
    lines = [f"Total: {_summary(totals)}", _next_words(totals, now), ""]
    for lesson in stats["lessons"]:
        lines.append(f"{lesson['lesson_id']}: {_summary(lesson['totals'])}")
        asked = [row for row in lesson["questions"] if row["reviews"] or row["due"]]
        if not asked:
            continue
        width = max(36, *(len(row["question_id"]) for row in asked))
        lines.append(f"  {'question':<{width}} {'reviews':>7}  {'last result':<18} {'due':<18} {'recall':>6}")
        for row in asked:
            # Right after a wrong answer there is no recall estimate (FSRS's would read 100%): "-".
            recall = "-" if row["retrievability"] is None else f"{row['retrievability']:.0%}"
            lines.append(f"  {row['question_id']:<{width}} {row['reviews']:>7}  {row['last_result'] or '-':<18}"
                         f" {_when(row['due'], now):<18} {recall:>6}")
        lines.append("")
    return "\n".join(lines).rstrip("\n")


def _next_words(totals: dict, now: datetime) -> str:
    """When to come back: the reviews due now, or else the next due date (one of them, never both)."""
    if totals["due_now"]:
        return f"{totals['due_now']} due now: `gradrepl quiz` asks them, the ones answered wrong first."
    if totals["next_due"]:
        return f"Next review due {_when(totals['next_due'], now)}."
    return "Nothing reviewed yet: `gradrepl quiz` starts with new questions."


def _summary(counts: dict) -> str:
    return (f"{counts['questions']} questions, {counts['new']} new, {counts['due_now']} due now, "
            f"{counts['reviews']} reviews ({counts['right']} right)")


def _when(iso: str | None, now: datetime) -> str:
    """A due date in words: "-", "now", "in 10 min", "in 3 days", or the date."""
    if iso is None:
        return "-"
    return due_in_words(datetime.fromisoformat(iso), now)

