"""The shipped course, loaded once for the tests that grade answers to its questions."""

from gradrepl.tutor.lesson import load_course
from tests.support.paths import ROOT

COURSE = load_course(ROOT / "lessons")


def question(uid: str):
    """The course's question `uid` ("lesson/question"); a uid the course lost fails the test by name."""
    found = COURSE.question(uid)
    assert found is not None, uid
    return found



async def refusal(session, uid: str, attempt: str, what: str = "") -> str:
    """The words `attempt` gets at the course's question `uid`, graded as play grades it (the solution in
    one kernel, the attempt from the same start in `session`); fails the test if it is accepted."""
    from gradrepl.tutor.grading import grade

    graded = await grade(question(uid), attempt, session)
    assert not graded.correct, f"{uid} accepted{' ' + what if what else ''}: {attempt!r}"
    return graded.feedback


async def accepted(session, uid: str, attempt: str) -> None:
    """Fail the test unless the course's question `uid` accepts `attempt`, saying what it said instead."""
    from gradrepl.tutor.grading import grade

    graded = await grade(question(uid), attempt, session)
    assert graded.correct, f"{uid} refused: {attempt!r}: {graded.feedback}"
