"""Keys a lesson writes by hand agree with torch: a wrong option's answer is what that option would give,
and a misconception's feedback goes with the answer it names (issue 22 §5)."""

from gradrepl.tutor.answers import matches, read_answer
from gradrepl.tutor.grading import grade
from tests.support.course import COURSE


async def test_update_without_no_grad_options_hold_the_values_the_update_would_give(session):
    """'w moves as intended' and 'w becomes a non-leaf' both describe w after one step of lr * w.grad
    from the lesson's start: the value the update makes under no_grad (and out of place)."""
    lesson = COURSE.get("training-loop")
    question = COURSE.question("training-loop/update-without-no-grad")
    first_cell = next(step.text for step in lesson.steps if step.kind == "code")
    done = await session.execute(first_cell + "\nwith torch.no_grad():\n    _moved = w - lr * w.grad\n"
                                 "_moved.tolist()")
    assert done.error is None, done.error
    moved = read_answer(done.result)
    for option in question.options[1:]:
        assert matches(moved, read_answer(option.answer), 1e-3), (option.text, option.answer, done.result)


async def test_each_misconception_gets_its_own_feedback(session):
    question = COURSE.question("dtypes/int-requires-grad")
    for wrong in question.misconceptions:
        graded = await grade(question, wrong.answer, session)
        assert not graded.correct and wrong.feedback in graded.feedback, (wrong.answer, graded.feedback)
    spelled = await grade(question, "tensor([1.0, 2.0, 3.0], requires_grad=True)", session)
    assert question.misconceptions[1].feedback in spelled.feedback, spelled.feedback
