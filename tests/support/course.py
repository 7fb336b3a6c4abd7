"""The shipped course, loaded once for the tests that grade answers to its questions."""

from gradrepl.tutor.lesson import load_course
from tests.support.paths import ROOT

COURSE = load_course(ROOT / "lessons")


def question(uid: str):
    """The course's question `uid` ("lesson/question"); a uid the course lost fails the test by name."""
    found = COURSE.question(uid)
    assert found is not None, uid
    return found

