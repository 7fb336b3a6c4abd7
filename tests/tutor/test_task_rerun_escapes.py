"""A task's check runs the learner's function again (the `transformed` and `at_moved_inputs` facts): a
function that behaves at the attempt and then, run again, never returns, stops its own kernel, raises
KeyboardInterrupt or SystemExit, or ends the process, must get a verdict in words (not passed, counted),
and the lesson goes on in a kernel that answers. Found by a blind attacker (issue: sandbox holes).

The frontend's deadline is shrunk for these tests (REQUEST_DEADLINE is longer than the kernel's own
limit); a loop forever, or a stopped process, is past any deadline at any machine speed.
"""

import dataclasses

import pytest

from gradrepl.tutor.grading import grade
from tests.support.course import question

DEADLINE = 8.0
TASK = "func-jvp/detach-the-constant"  # its checks run shifted again, at x and at moved inputs


def shifted_that(then: str) -> str:
    """The right fix, which does `then` from its second call on (the check's runs, not the attempt's)."""
    imports = "".join(f"import {name}\n" for name in ("os", "signal") if f"{name}." in then)
    return (f"{imports}calls = []\n"
            "def shifted(t):\n"
            "    calls.append(1)\n"
            "    if len(calls) > 1:\n"
            f"        {then}\n"
            "    return net(t) + (net(t) * 10).detach()\n"
            "out, tangent = torch.func.jvp(shifted, (x,), (torch.ones(3),))")


@pytest.fixture
async def hurried(session):
    """The shared session with a short frontend deadline on requests."""
    kept = session.options
    session.options = dataclasses.replace(kept, request_deadline=DEADLINE)
    try:
        yield session
    finally:
        session.options = kept


async def assert_kernel_answers(session) -> None:
    result = await session.execute("6 * 7")
    assert result.error is None and result.result == "42", result


@pytest.mark.parametrize("then", [
    "while True:\n            try:\n                while True:\n                    pass\n"
    "            except BaseException:\n                pass",
    "signal.signal(signal.SIGALRM, signal.SIG_IGN)\n        while True:\n            pass",
    "os.kill(os.getpid(), signal.SIGSTOP)",
], ids=["catches-the-alarm", "ignores-the-alarm", "stops-itself"])
async def test_a_function_that_never_returns_in_the_check_is_told_and_counted(hurried, then):
    graded = await grade(question(TASK), shifted_that(then), hurried)
    assert not graded.correct and not graded.retry, graded.feedback
    assert f"did not return within {DEADLINE:g} s" in graded.feedback, graded.feedback
    assert "during the check" in graded.feedback, graded.feedback
    await assert_kernel_answers(hurried)


async def test_a_loop_the_kernels_alarm_stops_is_told_once_and_the_other_runs_are_not_tried(session):
    """A plain loop: the kernel's own limit on one run again (RERUN_SECONDS) stops it, and the check's other
    runs of the same function are skipped rather than each waited for."""
    from gradrepl.kernel.inspect.transforms import RERUN_SECONDS

    graded = await grade(question(TASK), shifted_that("while True:\n            pass"), session)
    assert not graded.correct and not graded.retry, graded.feedback
    assert f"did not return within {RERUN_SECONDS:g} s during the check" in graded.feedback, graded.feedback


@pytest.mark.parametrize("raised", ["KeyboardInterrupt", "SystemExit"])
async def test_a_function_that_raises_a_base_exception_in_the_check_is_told_and_counted(session, raised):
    graded = await grade(question(TASK), shifted_that(f"raise {raised}"), session)
    assert not graded.correct and not graded.retry, graded.feedback
    assert f"raised {raised}" in graded.feedback, graded.feedback
    assert "restarted" not in graded.feedback, graded.feedback
    await assert_kernel_answers(session)


async def test_a_function_that_ends_the_kernel_in_the_check_is_told_and_counted(session):
    graded = await grade(question(TASK), shifted_that("os._exit(0)"), session)
    assert not graded.correct and not graded.retry, graded.feedback
    assert "your function ended the kernel during the check" in graded.feedback, graded.feedback
    await assert_kernel_answers(session)


SUBCLASS = ("class Odd(torch.Tensor):\n"
            "    @property\n"
            "    def is_leaf(self):\n"
            "        raise {raised}\n"
            "odd = torch.ones(2).as_subclass(Odd)")


@pytest.mark.parametrize("raised", ["KeyboardInterrupt", "SystemExit"])
async def test_an_inspected_object_that_raises_a_base_exception_is_an_error_value(session, raised):
    """What grading reads with `inspect` (a key's value) may reach a learner's property: a BaseException
    there is that value's error, in the same kernel."""
    await session.execute(SUBCLASS.format(raised=raised))
    pid = session.kernel_info["pid"]
    value = await session.inspect("odd")
    assert value["kind"] == "error" and value["type"] == raised, value
    assert session.kernel_info["pid"] == pid


async def test_an_inspected_object_that_never_returns_is_given_up_on(hurried):
    await hurried.execute("class Stuck:\n    def __repr__(self):\n"
                          "        while True:\n            try:\n                while True:\n                    pass\n"
                          "            except BaseException:\n                pass\n"
                          "stuck = Stuck()")
    value = await hurried.inspect("stuck")
    assert value["kind"] == "error" and f"within {DEADLINE:g} s" in value["message"], value
    await assert_kernel_answers(hurried)


async def test_any_request_that_reaches_a_base_exception_answers_with_words(session):
    """One backstop for every op other than a step: %plot's read of a list whose items raise SystemExit."""
    await session.execute("class Ends(float):\n    def __float__(self):\n        raise SystemExit\n"
                          "    def __index__(self):\n        raise SystemExit\nlosses = [Ends(1.0), Ends(2.0)]")
    pid = session.kernel_info["pid"]
    series = await session.series("losses")
    assert not series.ok and "raised SystemExit" in str(series.error), series
    assert session.kernel_info["pid"] == pid


async def test_play_counts_the_attempt_and_the_lesson_goes_on(hurried):
    """As `play` meets it: the hanging attempt is a counted wrong one, and the next attempt is judged."""
    from gradrepl.session import Session
    from gradrepl.tutor.keys import KeyKernel
    from gradrepl.tutor.lesson import load_lesson
    from gradrepl.tutor.lesson_run import Graded, LessonRun
    from tests.support.paths import ROOT

    lesson = load_lesson(ROOT / "lessons" / "22-func-jvp.md")
    index = next(i for i, step in enumerate(lesson.steps) if step.question and step.question.id == "detach-the-constant")
    events = []
    async with Session() as own:
        run = LessonRun(lesson, hurried, KeyKernel(own, owned=False), events.append)
        await run.resume(index - 1)
        await run.enter(index - 1)
        assert run.advance() and run.question.id == "detach-the-constant"
        await run.enter(index)
        assert await run.act("answer", shifted_that("os.kill(os.getpid(), signal.SIGSTOP)")) is False
        assert await run.act("answer", "def shifted(t):\n    return net(t) + net(t).detach() * 10\n"
                                       "out, tangent = torch.func.jvp(shifted, (x,), (torch.ones(3),))") is True
    graded = [event for event in events if isinstance(event, Graded)]
    assert [(g.grade.correct, g.counts) for g in graded] == [(False, True), (True, True)], graded
    assert "did not return within" in graded[0].grade.feedback


# A blind attacker's finding: the verdict on a function that stops its own kernel dropped why it never returned.
async def test_a_function_that_stops_its_kernel_in_the_check_is_told_it_stopped_itself(hurried):
    graded = await grade(question(TASK), shifted_that("os.kill(os.getpid(), signal.SIGSTOP)"), hurried)
    assert not graded.correct and not graded.retry, graded.feedback
    assert "stopped itself" in graded.feedback, graded.feedback
    await assert_kernel_answers(hurried)
