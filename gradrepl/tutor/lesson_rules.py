"""Rules a lesson's questions must keep to be worth asking, checked by `gradrepl lint`.

Static: every question has at least two hints. With keys (after a run): nothing
the learner has seen before a question (tutor/seen_before.py: prose, prompts,
cell outputs, the previous question's explanation, the answer box's
placeholder) may state its answer in any spelling the grader accepts. Nothing
here runs code; the kernel's work (keys, cell outputs) is handed in.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace

from gradrepl.protocol.messages import StepResult
from gradrepl.tutor import code_rules
from gradrepl.tutor.answers import Value, matches, read_answer
from gradrepl.tutor.lesson import Lesson, Question
from gradrepl.tutor.seen_before import Seen, seen_before

MIN_HINTS = 2
MIN_SOLUTION_LINE = 8  # shorter solution lines (`y = 1`) say too little to give a task away
MIN_OPTION_TEXT = 12   # an option's text shorter than this matches prose by chance
# A number as prose and output write it; a letter may follow (the 3 of "y = 3x + 2"), a digit may not.
_NUMBER = r"(?<![\w.])-?\d+(?:\.\d+)?(?:e-?\d+)?(?![\d]|\.\d)"
# A number spelled out ("six"); not "one", an article and a pronoun more often than the number.
NUMBER_WORDS = {word: str(n) for n, word in enumerate(
    "zero _ two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split()) if word != "_"}
_NUMBER_WORD = r"(?<![\w-])(?:" + "|".join(NUMBER_WORDS) + r")(?![\w-])"
# Words too common to name an option: a title or heading sharing one says nothing of which is right.
_COMMON_WORDS = set("""with that this from into what when then than them they their there these those have
has does will would could should about only""".split()) - {"only"}


def hint_problems(lesson: Lesson) -> list[str]:
    """Questions with fewer than two hints: hints are progressive, so one is a give-away or nothing."""
    return [f"{q.path}:{q.line}: question {q.id!r}: {len(q.hints)} hint(s); give at least {MIN_HINTS}, "
            "each a step further, the last giving the idea but not the solution"
            for q in lesson.questions if len(q.hints) < MIN_HINTS]


def giveaway_problems(lesson: Lesson, keys: dict, outputs: dict[int, StepResult]) -> list[str]:
    """Questions whose answer, in any spelling the grader accepts, was seen before they are asked.

    ``keys`` maps a question's uid to its computed Key; ``outputs`` maps a cell's step
    index to its result. What was seen is tutor/seen_before.py's; the message names where.
    """
    problems = []
    for index, step in enumerate(lesson.steps):
        question = step.question
        if question is None or question.uid not in keys:
            continue
        key = keys[question.uid]
        for seen in seen_before(lesson, index, outputs, keys):
            said = stated_in(question, key, seen)
            if said is not None:
                problems.append(f"{question.path}:{question.line}: question {question.id!r}: {seen.where} gives "
                                f"the answer away ({said!r}); ask first, explain after the question")
                break
    return problems


def stated_in(question: Question, key, seen: Seen) -> str | None:
    """The text in ``seen`` that answers ``question`` (a spelling its grader accepts), or None."""
    if question.type == "task":
        lines = [line.strip() for line in question.solution.splitlines() if len(line.strip()) >= MIN_SOLUTION_LINE]
        code = "\n".join(lines)
        if seen.where == "the prompt":
            return None
        return code if lines and states(seen.text, code) else _fix_named(question, seen)
    if question.type == "choice" and not question.ask:
        return _right_option_stated(question, key, seen)
    if question.type == "derive":
        formula = "".join(question.solution.split())
        return question.solution.strip() if formula and formula in "".join(seen.text.split()) else None
    if question.type == "predict_state":
        for name, value in key.fields.items():
            said = _accepted(seen, value, question.tolerance, ("shape",) if name == "shape" else ("value",))
            if said is not None:
                return f"{name}: {said}"
        return None
    value = key.value
    if question.type == "choice" and key.correct_options:
        value = read_answer(question.options[key.correct_options[0]].answer or "")
    return _accepted(seen, value, question.tolerance, question.compare) or _flag_stated(question, value, seen)


def _fix_named(question: Question, seen: Seen) -> str | None:
    """A task's fix named above it: a keyword flag the solution passes and its starter does not
    (``retain_graph=True``), or, for a fix-the-code task, a call the solution makes and the starter does
    not (``h.retain_grad()``). Anywhere in what the kernel printed (torch's "Specify retain_graph=True", a
    why-line's "wrap it in `with torch.no_grad():`"); in prose, a call in a code span above a fix-the-code
    task ("ask with `retain_grad()`"). The learner then copies the fix instead of finding it. A prompt (this
    one or the previous question's) names the code it asks about, so prompts are not read here."""
    if seen.where.startswith("the prompt") or seen.where.startswith("the answer"):
        return None
    shown = seen.text if seen.code else " ".join(re.findall(r"`([^`]+)`", seen.text))
    # Prose teaching a recipe (`create_graph=True`) above the task applying it is the same give-away.
    flags = code_rules.keyword_flags(question.solution) - code_rules.keyword_flags(question.starter)
    flat = re.sub(r"\s*=\s*", "=", shown)
    flag = next((flag for flag in sorted(flags) if _has_token(flat, flag)), None)
    if flag or not question.starter.strip():
        return flag
    fixes = code_rules.called_names(question.solution) - code_rules.called_names(question.starter)
    return next((f"{name}()" for name in sorted(fixes) if name in _called_words(shown)), None)


def _called_words(text: str) -> set[str]:
    """The names text shows called (``retain_grad`` in "`retain_grad()`" or "`h.retain_grad()`")."""
    return {name.rsplit(".", 1)[-1] for name in re.findall(r"([A-Za-z_][\w.]*)\s*\(", text)}


def _right_option_stated(question: Question, key, seen: Seen) -> str | None:
    """The right option's text, or a name in it that no wrong option has (``MeanBackward0``
    printed first by the ``%trace`` just above)."""
    if not key.correct_options:
        return None
    right = question.options[key.correct_options[0]].text
    if len(right) >= MIN_OPTION_TEXT and states(seen.text, right):
        return right
    wrong_options = [option.text for index, option in enumerate(question.options)
                     if index not in key.correct_options]
    if seen.titles:
        named = _named_by_heading(seen.text, right, [*wrong_options, question.prompt])
        if named:
            return named
    wrong = {token for text in wrong_options for token in _code_tokens(text)}
    if seen.where == "the prompt":
        return None  # a prompt names the code its options talk about ("after `%trace loss.backward()`")
    seen_tokens = set(_code_tokens(seen.text))
    return next((token for token in _code_tokens(right) if token not in wrong and token in seen_tokens), None)


def _named_by_heading(heading: str, right: str, wrong: list[str]) -> str | None:
    """A word of the right option that no wrong option (nor the prompt) has, in a title or heading ("Give
    the optimizer *only* what you train" above "Only the parameters that still require grad"): a heading
    names what its section teaches, so it names the answer; a word the prompt uses names the topic."""
    theirs = {word for text in wrong for word in _plain_words(text)}
    mine = [word for word in _plain_words(right) if word not in theirs and word not in _COMMON_WORDS]
    said = set(_plain_words(heading))
    return next((word for word in mine if word in said), None)


def _plain_words(text: str) -> list[str]:
    """The words of four letters and more, lowercase, a plural's s dropped (``tensors`` is ``tensor``)."""
    return [word.removesuffix("s") for word in re.findall(r"[a-z]{4,}", text.lower())]


def _code_tokens(text: str) -> list[str]:
    """Words that read as code (``MeanBackward0``, ``x.grad``, ``retain_graph``); not numbers, since
    an option's "0 B" or "2 steps" would match every table and count above it."""
    return [w.rstrip(".") for w in re.findall(r"[A-Za-z_][\w.]*", text) if _reads_as_code(w)]


def _flag_stated(question: Question, value: Value | None, seen: Seen) -> str | None:
    """True, False or None stated for the very expression asked about (``y.requires_grad`` ... ``True``
    on one line): those words are in every paragraph, the pair is not."""
    if value is None or value.kind not in ("bool", "none") or not question.ask.strip():
        return None
    word = "None" if value.kind == "none" else str(value.flag)
    asked = question.ask.strip()
    for line in seen.text.splitlines():
        if _has_token(line, asked) and re.search(rf"\b{word}\b", line):
            return line.strip()
    return None


def states(text: str, spelling: str) -> bool:
    """Does ``text`` contain ``spelling`` as a whole token (every line of it, for code)?"""
    if not text or not spelling:
        return False
    return all(_has_token(text, line) for line in spelling.splitlines())


def _accepted(seen: Seen, value: Value | None, tolerance: float | None, compare: tuple[str, ...]) -> str | None:
    """The first spelling in ``seen`` that the grader would take as ``value``."""
    if value is None or value.kind in ("none", "bool", "text") or (value.kind == "error" and not value.name):
        return None  # None, True and False are in every paragraph; "an error" names nothing
    # The text gives the numbers away whatever the form they are printed in (10 for a list holding 10).
    value = replace(value, grad_fn="", requires_grad=None, listed=False)
    for candidate in spellings(seen):
        given = read_answer(NUMBER_WORDS.get(candidate.lower(), candidate))
        if given.kind == "error" and not given.name:
            continue  # the word "error" alone is no give-away of which one
        if matches(value, given, tolerance, compare):
            return candidate
    return None


def spellings(seen: Seen) -> list[str]:
    """Every piece of ``seen`` a learner could type back as an answer: numbers, bracketed values
    (lists, shapes, ``tensor(...)``), and names. In prose, a plain word counts as a name only inside
    a code span or when it reads as code (a digit, ``_``, ``.`` or an inner capital: ``MulBackward0``),
    so "add" or "long" in a sentence is not the grad_fn AddBackward0 or the dtype int64."""
    text = seen.text
    found = re.findall(_NUMBER, text)
    found.extend(re.findall(_NUMBER_WORD, text, re.I))
    found.extend(_bracketed(text))
    code = text if seen.code else " ".join(re.findall(r"`([^`]+)`", text))
    found.extend(re.findall(r"[A-Za-z_][\w.]*", code))
    if not seen.code:
        found.extend(word for word in re.findall(r"[A-Za-z_][\w.]*", text) if _reads_as_code(word))
    return found


def _reads_as_code(word: str) -> bool:
    return any(c.isdigit() or c in "_." for c in word.rstrip(".")) or any(c.isupper() for c in word[1:])


def _bracketed(text: str, longest: int = 400) -> list[str]:
    """Balanced ``[...]``, ``(...)`` and ``name(...)`` pieces of ``text`` (``tensor([1., 2.])``, ``(2, 3)``)."""
    pieces = []
    for match in re.finditer(r"(?:[A-Za-z_][\w.]*)?[\[(]", text):
        depth = 0
        for end in range(match.end() - 1, min(len(text), match.start() + longest)):
            depth += {"[": 1, "(": 1, "]": -1, ")": -1}.get(text[end], 0)
            if depth == 0:
                pieces.append(text[match.start():end + 1])
                if match.group(0)[:-1]:
                    pieces.append(text[match.end() - 1:end + 1])  # the bare bracket too
                break
    return pieces


def _has_token(text: str, needle: str) -> bool:
    pattern = r"(?<![\w.])" + re.escape(needle.strip()) + r"(?![\w]|\.\d)"
    return re.search(pattern, text) is not None


def hidden_setup_problems(lesson: Lesson) -> list[str]:
    """Tasks whose hidden setup binds a name the learner was shown otherwise, or not at all: each name a
    task's setup binds must be bound last, in what the lesson showed before it (code cells, questions'
    code), by that very statement (issue 22: a task whose ``net`` was not the ``net`` on screen). A
    statement that binds nothing (``w.grad = None``) is not checked: the prompt says what it does."""
    problems, last = [], {}
    for step in lesson.steps:
        question = step.question
        if question is not None and question.type == "task" and question.setup.strip():
            for statement in _statements(question.setup):
                names = _bound(statement)
                text = ast.unparse(statement)
                unshown = [name for name in names if last.get(name) != text]
                if unshown:
                    problems.append(f"{question.path}:{question.line}: task {question.id!r}: its hidden setup "
                                    f"binds {', '.join(unshown)} by {text!r}, which the lesson did not show before "
                                    "it (shown otherwise, or not at all): show it in a code cell before the task")
        code = step.text if step.kind == "code" else (question.code if question is not None else "")
        for statement in _statements(code):
            text = ast.unparse(statement)
            for name in _bound(statement):
                last[name] = text
    return problems


def _statements(code: str) -> list:
    try:
        return ast.parse(code).body
    except SyntaxError:  # a cell of magics (%at -1): it binds nothing
        return []


def _bound(statement) -> list[str]:
    """The names a top-level statement binds (an assignment's, a def's or an import's)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [statement.name]
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return [(alias.asname or alias.name).partition(".")[0] for alias in statement.names]
    targets = statement.targets if isinstance(statement, ast.Assign) else \
        [statement.target] if isinstance(statement, (ast.AnnAssign, ast.AugAssign)) else []
    return [node.id for target in targets for node in ast.walk(target)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)]
