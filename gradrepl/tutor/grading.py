"""Answer keys computed in the kernel, and grades for learners' answers.

Nothing here knows torch: keys come from running the lesson's own code in a
fresh kernel through a Session and describing the asked value
(``Session.inspect``); symbolic answers are compared by the kernel
(``Session.equivalent``). A ``task``'s key is its reference: the solution run
from the task's start in a kernel the learner never touched (tutor/tasks.py);
an attempt is judged by the state it leaves against that reference, and a
wrong attempt restores the namespace it started from by restarting the kernel
and replaying the lesson so far (never by pickling).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from gradrepl.protocol.messages import StepResult
from gradrepl.session.session import LOST
from gradrepl.tutor.answers import (Value, decimals_of, formula_text, matches, read_answer, read_key, same_name,
                                    show, tensor_value, wrong_form)
from gradrepl.tutor import tasks
from gradrepl.tutor.replay import OnStep, prepare, run_sources  # noqa: F401 (callers import them from here)
from gradrepl.tutor.lesson import Question
from gradrepl.tutor.tasks import Reference, Start
from gradrepl.views.numbers import shape_text
from gradrepl.views.why import grad_none_cause, grad_none_words

STATE_LABELS = {
    "requires_grad": "requires_grad", "is_leaf": "is_leaf", "grad_fn": "grad_fn", "grad": ".grad",
    "retains_grad": "retains_grad", "dtype": "dtype", "shape": "shape",
}


@dataclass
class Key:
    """The right answer to one question, as the kernel computed it."""

    question_id: str
    text: str                                   # shown to the learner after answering
    value: Value | None = None                  # predict, numeric, choice with ask
    fields: dict[str, Value] = field(default_factory=dict)  # predict_state
    field_text: dict[str, str] = field(default_factory=dict)
    correct_options: list[int] = field(default_factory=list)  # choice
    steps: list[StepResult] = field(default_factory=list)     # what the question's own code printed
    problems: list[str] = field(default_factory=list)         # lesson bugs met while computing
    raw: dict[str, Any] = field(default_factory=dict)
    reference: Reference | None = None          # task: the solution's start and end states

    def signature(self) -> tuple:
        """What must not change between two runs of the same lesson."""
        fields = tuple(sorted((k, v) for k, v in self.fields.items()))
        return (self.value, fields, tuple(self.correct_options))


@dataclass
class Grade:
    """The verdict on one answer."""

    correct: bool
    feedback: str
    expected: str = ""                          # shown after answering
    misconception: str | None = None            # the named misconception a wrong answer shows
    fields: dict[str, bool] = field(default_factory=dict)  # predict_state: per field
    restored: bool = False                      # task: the namespace was put back after a wrong attempt
    steps: list[StepResult] = field(default_factory=list)  # task: what the attempt printed
    # The answer was not in the form asked for (a sentence for a number, a list for a dtype):
    # feedback names the form; not counted as an attempt, wrong or right.
    retry: bool = False
    failed_check: str = ""                      # task: the first named check that did not hold
    start: Start | None = None                  # task: where the next attempt starts (after an undo, anew)

    def to_json(self) -> dict[str, Any]:
        return {"correct": self.correct, "feedback": self.feedback, "expected": self.expected,
                "misconception": self.misconception, "fields": self.fields, "restored": self.restored,
                "retry": self.retry, "failed_check": self.failed_check}


# -- keys --------------------------------------------------------------------------

async def compute_key(question: Question, session, fresh: bool = True) -> Key:
    """Run the question's code and describe what it asks about.

    ``fresh`` restarts the kernel and replays the lesson first; a caller that
    knows the namespace is already the lesson's (tutor/keys.py) passes False, and
    then the question's setup is its own job.
    """
    # Keys the author wrote or the kernel checks on demand need no namespace.
    if question.type == "choice" and not question.ask:
        index = next(i for i, o in enumerate(question.options) if o.correct)
        return Key(question.uid, question.options[index].text, correct_options=[index])
    if question.type == "derive":
        return Key(question.uid, question.solution.strip())
    problems = await prepare(question, session) if fresh else []
    if question.type == "task":
        reference = await tasks.reference(question, session)
        return Key(question.uid, question.solution.strip(), problems=problems + reference.problems,
                   reference=reference)
    steps = []
    error = None
    if question.code:
        result = await session.execute(question.code)
        steps.append(result)
        if result.kernel_event:
            problems.append(f"{question.path}:{question.line}: {result.error.message}")
        error = result.error
    if question.type == "predict_state":
        key = await _state_key(question, session, problems)
        key.steps = steps
        return key
    if error is not None:
        raw = {"kind": "error", "type": error.type, "message": error.message}
        text = f"raises {error.type}: {error.message}"
    else:
        raw = await _inspected(session, question.ask, question, problems)
        text = _key_text(raw)
    value = read_key(raw)
    key = Key(question.uid, text, value=value, steps=steps, problems=problems, raw=raw)
    if question.type == "choice":
        key.correct_options = [i for i, o in enumerate(question.options)
                               if matches(value, read_answer(o.answer or ""), question.tolerance)]
        if len(key.correct_options) == 1:
            key.text = question.options[key.correct_options[0]].text
    if question.type in ("numeric", "predict") and question.tolerance and value.kind == "numbers" \
            and len(value.numbers) == 1 and 0 < float(question.tolerance) < 1:
        # Shown to the precision asked for ("to one decimal": tolerance 0.1 shows 3.0, not 2.9837).
        decimals = decimals_of(float(question.tolerance))
        key.text = f"{round(value.numbers[0], decimals):.{decimals}f}"
    if question.type == "numeric" and value.kind != "numbers":
        key.problems.append(f"{question.path}:{question.line}: numeric question {question.id!r}: "
                            f"{question.ask} is {text}, not a number")
    return key


async def _state_key(question: Question, session, problems: list[str]) -> Key:
    described = await _inspected(session, question.ask, question, problems)
    if described.get("kind") != "tensor":
        problems.append(f"{question.path}:{question.line}: predict_state {question.id!r}: "
                        f"{question.ask} is {_key_text(described)}, not a tensor")
        return Key(question.uid, _key_text(described), problems=problems, raw=described)
    fields: dict[str, Value] = {}
    texts: dict[str, str] = {}
    for name in question.fields:
        if name == "grad":
            # .grad is kept only on leaves and on tensors that called retain_grad().
            grad = await _inspected(session, f"({question.ask}).grad if ({question.ask}).is_leaf or "
                                    f"({question.ask}).retains_grad else None", question, problems)
            fields[name], texts[name] = read_key(grad), _key_text(grad)
        elif name == "grad_fn":
            fn = described.get("grad_fn")
            fields[name] = Value("none") if fn is None else Value("name", name=str(fn))
            texts[name] = "None" if fn is None else str(fn)
        elif name == "retains_grad":
            flag = await _inspected(session, f"({question.ask}).retains_grad", question, problems)
            fields[name], texts[name] = read_key(flag), _key_text(flag)
        elif name == "shape":
            fields[name] = Value("numbers", numbers=tuple(float(n) for n in described["shape"]),
                                 shape=(len(described["shape"]),))
            texts[name] = str(tuple(described["shape"]))
        elif name == "dtype":
            fields[name], texts[name] = Value("name", name=described["dtype"]), described["dtype"]
        else:
            fields[name] = Value("bool", flag=bool(described.get(name)))
            texts[name] = str(bool(described.get(name)))
    text = ", ".join(f"{STATE_LABELS[n]}={texts[n]}" for n in question.fields)
    return Key(question.uid, text, fields=fields, field_text=texts, problems=problems, raw=described)


async def _inspected(session, expr: str, question: Question, problems: list[str]) -> dict:
    """session.inspect(expr); a kernel lost while answering (it died, or broke the protocol: lesson code
    can do both) is a problem of the lesson, in the kernel's words."""
    described = await session.inspect(expr)
    if described.get("kind") == "error" and described.get("type") == LOST:
        problems.append(f"{question.path}:{question.line}: {described.get('message')}")
    return described


def _key_text(described: dict) -> str:
    if described.get("kind") == "number":
        return show(read_key(described))  # 7, not 6.999999999999673
    if described.get("kind") == "error":
        return f"raises {described.get('type')}: {described.get('message')}"
    if described.get("kind") == "tensor" and (described.get("value") or {}).get("values") is None:
        return str(described.get("repr") or show(tensor_value(described.get("value") or {})))
    return str(described.get("repr", ""))


def key_answer(question: Question, key: Key) -> Any:
    """The answer that the key itself gives: what `play --auto` and lint answer with."""
    if question.type == "choice":
        return key.correct_options[0] if key.correct_options else -1
    if question.type == "predict_state":
        return dict(key.field_text)
    if question.type in ("task", "derive"):
        return question.solution
    return key.text if key.value is None or key.value.kind in ("error", "text", "name") else _answer_text(key)


def _answer_text(key: Key) -> str:
    described = key.raw
    if described.get("kind") == "tensor" and (described.get("value") or {}).get("values") is not None:
        return str(described.get("repr"))  # the kernel's own repr: the parser must read it back
    return show(key.value)


# -- grades ------------------------------------------------------------------------

async def grade(question: Question, answer: Any, session, key: Key | None = None) -> Grade:
    """Grade one answer.

    choice: the option's index (as listed in the lesson) or its text.
    predict / numeric: what the learner typed. predict_state: {field: text}.
    derive: an expression. task: code to run from the task's start, rebuilt here.
    Keys not given are computed in a fresh kernel.
    """
    if question.type == "task":
        return await grade_task(question, str(answer), session, key)
    if question.type == "derive":
        return await _grade_derive(question, str(answer), session)
    if key is None:
        key = await compute_key(question, session)
    if question.type == "choice":
        return _grade_choice(question, answer, key)
    if question.type == "predict_state":
        return _grade_state(question, answer if isinstance(answer, dict) else {}, key)
    return _grade_value(question, str(answer), key)


def _grade_choice(question: Question, answer: Any, key: Key) -> Grade:
    index = _option_index(question, answer)
    right = key.correct_options
    expected = question.options[right[0]].text if right else key.text
    if index is None:
        return Grade(False, "That is not one of the options.", expected)
    option = question.options[index]
    if index in right:
        return Grade(True, _join("Right.", question.explanation), expected)
    feedback = option.feedback or f"Not this one: the answer is {expected}."
    return Grade(False, _join(feedback, question.explanation), expected, misconception=option.feedback or None)


def _option_index(question: Question, answer: Any) -> int | None:
    if isinstance(answer, int) and not isinstance(answer, bool):
        return answer if 0 <= answer < len(question.options) else None
    text = " ".join(str(answer).split()).lower()
    return next((i for i, o in enumerate(question.options) if " ".join(o.text.split()).lower() == text), None)


def _grade_value(question: Question, answer: str, key: Key) -> Grade:
    given = read_answer(answer)
    if key.value is not None and matches(key.value, given, question.tolerance, question.compare):
        return Grade(True, _join("Right.", question.explanation), key.text)
    wrong = _misconception(question, answer, given)
    if wrong is not None:
        return Grade(False, _join(wrong.feedback, question.explanation), key.text, misconception=wrong.feedback)
    form = wrong_form(key.value, given)
    if form is not None:
        return Grade(False, form, "", retry=True)
    return Grade(False, _join(_why_wrong(question, key, given), question.explanation), key.text)


def _misconception(question: Question, answer: str, given: Value):
    """The misconception an answer shows: the one spelled the same, else one whose numbers are written
    the same way (`[1., 2.]` floats, `[1, 2]` integers: equal values, different misconceptions), else the
    first whose value matches."""
    found = [wrong for wrong in question.misconceptions if _same_text(wrong.answer, answer) or
             matches(read_answer(wrong.answer), given, question.tolerance, question.compare)]
    return next((w for w in found if _same_text(w.answer, answer)), None) or \
        next((w for w in found if _written_as(w.answer) == _written_as(answer)), None) or \
        next(iter(found), None)


def _written_as(text: str) -> str:
    """"float" when some number in ``text`` is written with a point or an exponent, else "int"."""
    return "float" if re.search(r"\d\.|\.\d|\d[eE][-+]?\d", text) else "int"


def _why_wrong(question: Question, key: Key, given: Value) -> str:
    """What a wrong answer misses, in words, when the author named no misconception for it."""
    expected = key.value
    asks_grad = question.ask.replace(" ", "").endswith(".grad")
    if expected is None:
        return "The key could not be computed."
    if expected.kind == "error" and given.kind == "error":
        return f"It does raise, but {expected.name}, not {given.name}."
    if expected.kind == "error":
        message = str(key.raw.get("message", "")).splitlines()[0] if key.raw.get("message") else ""
        return f"It raises {expected.name}" + (f": {message}" if message else ".")
    if given.kind == "error":
        return "It does not raise: the code runs."
    zeros = (given.kind == "numbers" and not any(given.numbers)) or \
        (given.kind == "name" and given.name.lower().startswith("zero"))
    # Not "no backward pass has run": zero_grad() (set_to_none=True) and `x.grad = None` empty a .grad too.
    if expected.kind == "none" and asks_grad and zeros:
        return ".grad is None here, not zeros: it holds no tensor until a backward pass writes one, and " \
               "emptying it (zero_grad()'s default, or x.grad = None) makes it None again."
    if expected.kind == "none" and asks_grad:
        return ".grad is None here: no gradient is in it (none was written yet, or it was emptied: " \
               "zero_grad()'s default and x.grad = None both do that)."
    if expected.kind == "none":
        return "It is None."
    if given.kind == "none" and asks_grad:
        return "It is not None: a backward pass reached this tensor and wrote its gradient."
    if given.kind == "none":
        what = {"bool": "a bool (True or False)", "numbers": "a value: a number or a tensor"}.get(expected.kind,
                                                                                               "a value")
        return f"It is not None: it gives {what}."
    if expected.kind == "numbers" and given.kind == "numbers" and len(given.numbers) != len(expected.numbers):
        return (f"The shape differs: it has {len(expected.numbers)} element(s), "
                f"shape {shape_text(list(expected.shape))}.")
    return "Not quite."


def _grade_state(question: Question, answer: dict, key: Key) -> Grade:
    if not key.fields:
        return Grade(False, "The key could not be computed.", key.text)
    verdicts = {}
    wrong = []
    off_form = []
    for name in question.fields:
        given = read_answer(str(answer.get(name, "")))
        expected = key.fields[name]
        if name == "grad_fn" and expected.kind == "name":
            ok = given.kind == "name" and same_name(expected.name, given.name)
        else:
            ok = matches(expected, given, question.tolerance, ("shape",) if name == "shape" else ("value",))
        verdicts[name] = ok
        if not ok and given.kind == "text":
            off_form.append(STATE_LABELS[name])
        elif not ok:
            wrong.append(f"{STATE_LABELS[name]} is {key.field_text[name]}{_state_reason(question.ask, name, key)}")
    if off_form:
        return Grade(False, f"Give every field: {', '.join(off_form)} could not be read (True/False, None, "
                     "a grad_fn name such as MulBackward0, or a value).", "", fields=verdicts, retry=True)
    if not wrong:
        return Grade(True, _join("Right on every field.", question.explanation), key.text, fields=verdicts)
    return Grade(False, _join("; ".join(wrong) + ".", question.explanation), key.text, fields=verdicts)


def _state_reason(name: str, field_name: str, key: Key) -> str:
    """Why a predict_state field has its value, from the tensor's own state (after a colon)."""
    state = key.raw
    leaf, tracked = bool(state.get("is_leaf")), bool(state.get("requires_grad"))
    fn = state.get("grad_fn")
    if field_name == "requires_grad":
        if tracked and leaf:
            # said of any tracked leaf: made with the flag (requires_grad=True, nn.Parameter) or switched on later
            return (f": {name} is a leaf whose flag was set on it, not spread from an input (requires_grad=True, "
                    "requires_grad_(), or nn.Parameter, which switches it on)")
        if tracked:
            return f": an input of the operation that made {name} requires grad, and the flag spreads to results"
        return f": nothing recorded {name} (no tracked input, or made under no_grad / by detach())"
    if field_name == "is_leaf":
        if leaf and not tracked:
            return f": {name} has no recorded history, and every untracked tensor counts as a leaf"
        if leaf:
            return f": {name} was created directly, not computed from tracked tensors"
        return f": {name} was computed by {fn or 'an operation'} from a tracked tensor"
    if field_name == "grad_fn":
        return f": {name} has no recorded history" if fn is None else f": the operation that made {name}"
    if field_name == "grad":
        if key.fields.get("grad", Value("none")).kind == "none":  # the words the details view says too
            return ": " + grad_none_words(grad_none_cause(state), name, fn)
        return ": backward wrote d(output)/d(this tensor) into .grad"
    return ""


async def _grade_derive(question: Question, answer: str, session) -> Grade:
    reply = await session.equivalent(formula_text(answer), question.solution)
    if reply.error:  # a form error: asked again, never recorded as a wrong answer
        return Grade(False, f"Could not read that expression: {reply.error}. Write a formula in "
                     f"{question.variable or 'x'}, such as 2*x + 3.", "", retry=True)
    if "equivalent" not in reply.data:
        return Grade(False, "The symbolic checker gave no verdict, so this answer could not be graded.",
                     question.solution.strip())
    if reply.data["equivalent"]:
        return Grade(True, _join("Right.", question.explanation), question.solution.strip())
    return Grade(False, _join("Not equivalent to the derivative.", question.explanation), question.solution.strip())


async def grade_task(question: Question, code: str, session, key: Key | None = None, *,
                     start: Start | None = None, on_step: OnStep | None = None, prelude: str = "") -> Grade:
    """Run an attempt from the task's start and judge the state it leaves; a wrong one is undone.

    ``start`` is where the live kernel already is (LessonRun marked it when the task opened);
    without it the start is rebuilt first. The grade's ``start`` is where the next attempt begins.
    ``prelude`` is the key kernel's hidden first code, run again before every rebuild.
    """
    reference = await _reference(question, session, key)
    if start is None:
        problems, start = await tasks.restart_at(question, session, on_step, prelude)
        if problems:
            return Grade(False, "The lesson could not rebuild this step: " + "; ".join(problems),
                         question.solution.strip(), start=start)
    moved = await _moved_start(question, session, reference, start, on_step, prelude)
    if moved is not None:
        return moved
    steps = [await session.execute(code)] if code.strip() else []
    error = next((s.error for s in steps if s.error), None)
    if error is not None:  # an attempt that raised is wrong even if what ran before the error passes
        verdict = tasks.Verdict(False, f"your code raised {error.type}: {error.message}")
    else:
        verdict = tasks.judge(question, reference, await tasks.read(question, session, start), code)
    return await _graded_task(question, session, verdict, start, steps, on_step, prelude,
                              "The namespace is back as it was before your attempt.")


async def grade_task_state(question: Question, session, key: Key | None, start: Start,
                           on_step: OnStep | None = None, prelude: str = "") -> Grade:
    """Judge a task on the namespace as the learner left it (typed at a console since ``start``).

    When it does not hold, the attempt is undone: the namespace is rebuilt to where the task
    started (restart, then the lesson so far and the task's setup replayed; never pickled), so a
    wrong attempt cannot leave the learner stuck in a broken state. ``on_step`` sees that rebuild.
    """
    reference = await _reference(question, session, key)
    moved = await _moved_start(question, session, reference, start, on_step, prelude)
    if moved is not None:
        return moved
    end = await tasks.read(question, session, start)
    verdict = tasks.judge(question, reference, end, tasks.attempt_code(session, start))
    return await _graded_task(question, session, verdict, start, [], on_step, prelude,
                              "The namespace is back to where this task started; your lines are in the history "
                              "(↑) to edit and try again.")


async def _reference(question: Question, session, key: Key | None) -> Reference:
    if key is None or key.reference is None:
        key = await compute_key(question, session)
    return key.reference


async def _moved_start(question: Question, session, reference: Reference, start: Start,
                       on_step: OnStep | None, prelude: str) -> Grade | None:
    """A live start that is not the solution's (the learner changed the lesson's variables before the
    task) cannot be judged against it: rebuild it, and ask for the code again (not counted)."""
    moved = tasks.same_start(question, start, reference)
    if moved is None:
        return None
    _problems, start = await tasks.restart_at(question, session, on_step, prelude)
    return Grade(False, f"The lesson's variables had changed before this task started ({moved}), so the "
                 "solution's state cannot be compared with yours. They are rebuilt to where the task starts: "
                 "run your code again.", "", retry=True, restored=True, start=start)


async def _graded_task(question: Question, session, verdict: tasks.Verdict, start: Start,
                       steps: list[StepResult], on_step: OnStep | None, prelude: str, undone: str) -> Grade:
    solution = question.solution.strip()
    if verdict.ok:
        return Grade(True, _join("Done: the check holds.", question.explanation), solution,
                     steps=steps, start=start)
    problems, start = await tasks.restart_at(question, session, on_step, prelude)
    if verdict.retry:
        return Grade(False, _clause(verdict.message[:1].upper() + verdict.message[1:]) + ".", "", retry=True,
                     restored=True, steps=steps, start=start)
    detail = f" ({verdict.detail})" if verdict.detail else ""
    if problems:
        return Grade(False, f"Not yet: {_clause(verdict.message)}{detail}. The lesson could not rebuild where "
                     "this task started: " + "; ".join(problems), solution, steps=steps, start=start,
                     failed_check=verdict.message)
    return Grade(False, f"Not yet: {_clause(verdict.message)}{detail}. {undone}", solution, restored=True,
                 steps=steps, failed_check=verdict.message, start=start)


def _clause(text: str) -> str:
    """A sentence (a check's message, torch's error text) to be followed by our own period: no ".."."""
    return text.rstrip().rstrip(".")


def _same_text(a: str, b: str) -> bool:
    return " ".join(a.split()).lower() == " ".join(b.split()).lower()


def _join(*parts: str) -> str:
    return " ".join(p for p in parts if p)
