"""Keys a lesson writes by hand agree with torch: a wrong option's answer is what that option would give,
and a misconception's feedback goes with the answer it names (issue 22 §5)."""

from gradrepl.tutor.grading import grade
from tests.support.course import COURSE


async def test_each_misconception_gets_its_own_feedback(session):
    question = COURSE.question("dtypes/int-requires-grad")
    for wrong in question.misconceptions:
        graded = await grade(question, wrong.answer, session)
        assert not graded.correct and wrong.feedback in graded.feedback, (wrong.answer, graded.feedback)
    spelled = await grade(question, "tensor([1.0, 2.0, 3.0], requires_grad=True)", session)
    assert question.misconceptions[1].feedback in spelled.feedback, spelled.feedback


async def test_the_likeliest_wrong_answers_get_words_that_name_the_mistake(session):
    """Issue 22 (round three): 12 (the exact derivative) for the central difference got only "Not quite.",
    and None for gradcheck's result only "It is not None."."""
    central = await grade(COURSE.question("gradient-check/central-difference"), "12", session)
    assert not central.correct and "h²" in central.feedback, central.feedback
    checked = await grade(COURSE.question("gradient-check/gradcheck-passes"), "None", session)
    assert not checked.correct and "bool" in checked.feedback, checked.feedback
