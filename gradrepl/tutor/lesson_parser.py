"""Reading a lesson file: front matter, prose, ```python cells and ```question blocks (docs/LESSONS.md).

Nothing here runs lesson code: code is only parsed (``ast.parse`` for syntax), so a broken
lesson is reported with file and line, every problem at once.
"""

from __future__ import annotations

import ast
import re
from typing import Any

import yaml
from markdown_it import MarkdownIt

from gradrepl.session import magic_names
from gradrepl.terminal_text import first_control, visible
from gradrepl.tutor.language import DEFAULT as DEFAULT_LANGUAGE, in_language, primary
from gradrepl.tutor.lesson_model import (
    DEFAULT_STATE_FIELDS,
    Claim,
    Lesson,
    LessonFormatError,
    Misconception,
    Option,
    Problem,
    Question,
    Step,
    replay_sources,
)
from gradrepl.tutor.task_checks import Check, parse_checks

QUESTION_TYPES = ("choice", "predict", "predict_state", "task", "derive", "numeric")
STATE_FIELDS = ("requires_grad", "is_leaf", "grad_fn", "grad", "retains_grad", "dtype", "shape")
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]*$")

# Keys each question type needs, and keys it may carry besides the common ones.
_REQUIRED = {
    "choice": ("options",),
    "predict": ("ask",),
    "predict_state": ("ask",),
    "task": ("solution", "checks"),
    "derive": ("function", "variable", "solution"),
    "numeric": ("ask", "tolerance"),
}
_COMMON = {"id", "type", "prompt", "hints", "setup", "code", "explanation", "given"}
_EXTRA = {
    "choice": {"options", "ask", "tolerance"},
    "predict": {"ask", "tolerance", "misconceptions", "compare"},
    "predict_state": {"ask", "fields"},
    "task": {"check", "checks", "solution", "starter"},
    "derive": {"function", "variable", "solution"},
    "numeric": {"ask", "tolerance", "misconceptions", "compare"},
}
_FRONT_KEYS = {"id", "title", "version", "requires", "language", "skippable", "summary", "setup"}
MAX_YAML_DEPTH = 50          # YAML nested deeper than this would exhaust the parser's recursion


def parse_lesson(text: str, path: str = "<lesson>") -> Lesson:
    """Parse lesson text (see load_lesson); ``path`` is used in problems."""
    problems: list[Problem] = []
    meta, body, offset = _front_matter(text, path, problems)
    if meta is None:
        raise LessonFormatError(problems)
    lesson_id = _front_field(meta, "id", path, problems)
    title = _front_field(meta, "title", path, problems)
    language = str(meta.get("language", "en"))
    titles = _titles(title, language, path, problems)
    if lesson_id and not ID_PATTERN.match(str(lesson_id)):
        problems.append(Problem(path, 2, f"lesson id {lesson_id!r}: use lowercase letters, digits, - and _"))
    for key in sorted(set(meta) - _FRONT_KEYS):
        problems.append(Problem(path, 2, f"unknown front matter key {key!r}"))
    requires = meta.get("requires") or []
    if isinstance(requires, str):
        requires = [requires]
    setup = str(meta.get("setup") or "")
    _check_syntax(setup, path, 2, "front matter setup", problems)
    claims: list[Claim] = []
    steps = _steps(body, offset, path, str(lesson_id or ""), problems, claims)
    if not any(s.question for s in steps):
        problems.append(Problem(path, offset + 1, "a lesson needs at least one question"))
    if problems:
        raise LessonFormatError(problems)
    own_title = in_language(titles, DEFAULT_LANGUAGE, (language,)) if titles else str(title)  # English first
    lesson = Lesson(id=str(lesson_id), title=own_title, version=str(meta.get("version", "1")), path=path,
                    steps=steps, requires=[str(r) for r in requires], language=language,
                    skippable=bool(meta.get("skippable", True)), summary=str(meta.get("summary", "")),
                    setup=setup, claims=claims, titles=titles)
    problems = _control_characters(lesson)
    if problems:
        raise LessonFormatError(problems)
    _attach_context(lesson)
    return lesson


def _control_characters(lesson: Lesson) -> list[Problem]:
    """Every text of the lesson that holds a control character (YAML's "\\x1b" escapes included).

    A lesson's words and code reach the terminal; an escape sequence there would clear the
    screen, retitle the window or write the clipboard. Code that needs one writes it as
    Python's escape (`"\\x1b"`), which stays plain text."""
    problems: list[Problem] = []

    def walk(value: Any, line: int, owner: str, field: str = "") -> None:
        if isinstance(value, str):
            char = first_control(value.replace("\r\n", "\n"))
            if char is not None:
                where = " ".join(part for part in (field, owner) if part)
                problems.append(Problem(lesson.path, line, f"{where} holds the control character {visible(char)}; "
                                                           "a terminal would act on it (in code, write it as an "
                                                           f"escape: '{visible(char)}')"))
        elif isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                walk(item, line, owner, f"{field}[{index}]")
        elif isinstance(value, dict):  # a lesson's titles by language
            for key, item in value.items():
                walk(item, line, owner, f"{field}[{key}]")
        elif hasattr(value, "__dataclass_fields__"):
            for name in value.__dataclass_fields__:
                if name not in ("path", "context", "steps"):
                    walk(getattr(value, name), line, owner, f"{field}.{name}" if field else name)

    walk(lesson, 2, "of the front matter")
    for step in lesson.steps:
        if step.question is not None:
            walk(step.question, step.question.line, f"of question {step.question.id!r}")
        else:
            walk(step.text, step.line, f"the {step.kind} at this line")
    return problems


def _attach_context(lesson: Lesson) -> None:
    for index, step in enumerate(lesson.steps):
        if step.question is not None:
            step.question.context = replay_sources(lesson, index)


# -- front matter ---------------------------------------------------------------

def _front_matter(text: str, path: str, problems: list[Problem]) -> tuple[dict | None, str, int]:
    """(meta, body, line offset of the body); meta is None when unusable."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        problems.append(Problem(path, 1, "a lesson starts with YAML front matter between '---' lines"))
        return None, text, 0
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        problems.append(Problem(path, 1, "front matter is not closed by a '---' line"))
        return None, text, 0
    try:
        meta = _load_yaml("".join(lines[1:end])) or {}
    except yaml.YAMLError as exc:
        problems.append(Problem(path, 2 + _yaml_line(exc), f"front matter is not valid YAML: {_yaml_message(exc)}"))
        return None, text, 0
    if not isinstance(meta, dict):
        problems.append(Problem(path, 2, "front matter must be a mapping of keys to values"))
        return None, text, 0
    return meta, "".join(lines[end + 1:]), end + 1


def _titles(title: Any, language: str, path: str, problems: list[Problem]) -> dict[str, str]:
    """`title: {en: ..., hi: ...}`: one title per language (the picker shows the learner's); a plain
    string is the title in every language, and gives {}."""
    if not isinstance(title, dict):
        return {}
    titles = {str(tag): str(text) for tag, text in title.items() if isinstance(text, str) and text.strip()}
    if len(titles) != len(title):
        problems.append(Problem(path, 2, "each title in 'title:' must be a line of text, keyed by its language"))
    elif not any(primary(tag) == primary(language) for tag in titles):
        problems.append(Problem(path, 2, f"'title:' gives no title in the lesson's language ({language})"))
    return titles


def _front_field(meta: dict, key: str, path: str, problems: list[Problem]) -> Any:
    value = meta.get(key)
    if value in (None, ""):
        problems.append(Problem(path, 2, f"front matter needs {key!r}"))
    return value


# libyaml's loader when PyYAML was built with it: `gradrepl lessons` reads every question of the course,
# and the pure-Python one took most of its time.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load_yaml(text: str) -> Any:
    """yaml.safe_load, with nesting deeper than MAX_YAML_DEPTH, and anchors and aliases, refused as a
    YAMLError before anything is built. An alias repeats its anchor's value: a file of a few hundred KB
    (`[&s "AAA...", *s, *s, ...]`) became gigabytes to check; lessons never need one."""
    too_deep = f"nested more than {MAX_YAML_DEPTH} levels deep"
    depth = 0
    try:
        for event in yaml.parse(text, Loader=SAFE_LOADER):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                raise yaml.MarkedYAMLError(problem="anchors and aliases (&name, *name) are not allowed in a "
                                           "lesson: write each value out", problem_mark=event.start_mark)
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    raise yaml.YAMLError(too_deep)
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
    except yaml.YAMLError as exc:
        if "maximum nesting depth" in str(exc):  # libyaml scans ahead and stops at its own limit first
            raise yaml.YAMLError(too_deep) from None
        raise
    return yaml.load(text, Loader=SAFE_LOADER)  # noqa: S506 (a safe loader)


def _yaml_line(exc: yaml.YAMLError) -> int:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    return mark.line if mark is not None else 0


def _yaml_message(exc: yaml.YAMLError) -> str:
    return str(getattr(exc, "problem", None) or exc).strip()


# -- body -----------------------------------------------------------------------

def _steps(body: str, offset: int, path: str, lesson_id: str, problems: list[Problem],
           claims: list[Claim]) -> list[Step]:
    """Split the body into prose, python cells and questions (lines are 1-based in the file);
    ```python claim blocks go to ``claims``, not to the steps."""
    lines = body.splitlines(keepends=True)
    steps: list[Step] = []
    prose_start = 0
    ids: dict[str, int] = {}
    for token in MarkdownIt("commonmark").parse(body):
        if token.type != "fence" or token.map is None:
            continue
        kind = token.info.strip().split()[0] if token.info.strip() else ""
        if kind not in ("python", "question"):
            continue  # any other fence is prose to read
        start, end = token.map
        _add_prose(steps, lines[prose_start:start], offset + prose_start + 1)
        prose_start = end
        fence_line = offset + start + 1
        if end - 1 <= start or not lines[end - 1].strip().startswith(token.markup):
            problems.append(Problem(path, fence_line, f"```{kind} block is not closed"))
            continue
        if kind == "python" and token.info.split()[1:2] == ["claim"]:
            if _check_syntax(token.content, path, fence_line + 1, "python claim", problems):
                claims.append(Claim(token.content, fence_line + 1, len(steps)))
            continue
        if kind == "python":
            if refused := _reads_or_runs(token.content):
                problems.append(Problem(path, fence_line + 1, f"python cell: {refused}, and a lesson's cells may not "
                                                              "read files or run programs: put the code in the cell itself"))
                continue
            if _is_magic(token.content) or _check_syntax(token.content, path, fence_line + 1, "python cell", problems):
                steps.append(Step("code", fence_line, text=token.content))
            continue
        question = _question(token.content, path, fence_line, lesson_id, problems)
        if question is None:
            continue
        if question.id in ids:
            problems.append(Problem(path, fence_line, f"question id {question.id!r} is already used on line {ids[question.id]}"))
            continue
        ids[question.id] = fence_line
        steps.append(Step("question", fence_line, question=question))
    _add_prose(steps, lines[prose_start:], offset + prose_start + 1)
    return steps


def _add_prose(steps: list[Step], lines: list[str], line: int) -> None:
    text = "".join(lines).strip("\n")
    if text.strip():
        skipped = len(lines) - len("".join(lines).lstrip("\n").splitlines(keepends=True))
        steps.append(Step("prose", line + max(skipped, 0), text=text))


def _question(content: str, path: str, fence_line: int, lesson_id: str, problems: list[Problem]) -> Question | None:
    """Build a Question from a ```question block; None (with problems) if unusable."""
    first = fence_line + 1
    try:
        data = _load_yaml(content)
    except yaml.YAMLError as exc:
        problems.append(Problem(path, first + _yaml_line(exc), f"question is not valid YAML: {_yaml_message(exc)}"))
        return None
    if not isinstance(data, dict):
        problems.append(Problem(path, fence_line, "a question block holds a YAML mapping (id: ..., type: ...)"))
        return None
    before = len(problems)

    def line_of(key: str) -> int:
        match = re.search(rf"^{re.escape(key)}\s*:", content, re.MULTILINE)
        return first + content[: match.start()].count("\n") if match else fence_line

    def code_line(key: str) -> int:
        """First line of a key's code: the next line for a block scalar (``key: |``)."""
        match = re.search(rf"^{re.escape(key)}\s*:\s*([|>][-+]?)?\s*$", content, re.MULTILINE)
        return line_of(key) + (1 if match and match.group(1) else 0)

    def complain(key: str, message: str) -> None:
        problems.append(Problem(path, line_of(key), message))

    qid, qtype = str(data.get("id") or ""), str(data.get("type") or "")
    label = f"question {qid!r}" if qid else "question"
    if not qid:
        complain("id", "a question needs an 'id'")
    elif not ID_PATTERN.match(qid):
        complain("id", f"question id {qid!r}: use lowercase letters, digits, - and _")
    if qtype not in QUESTION_TYPES:
        complain("type", f"{label}: unknown type {qtype!r} (one of {', '.join(QUESTION_TYPES)})")
        return None
    if not str(data.get("prompt") or "").strip():
        complain("prompt", f"{label} needs a 'prompt'")
    for key in _REQUIRED[qtype]:
        if data.get(key) in (None, "", []):
            complain(key, f"{label}: a {qtype} question needs {key!r}")
    for key in sorted(set(data) - _COMMON - _EXTRA[qtype]):
        complain(key, f"{label}: unknown key {key!r} for a {qtype} question")
    for key in ("setup", "code", "solution", "starter"):
        _check_syntax(str(data.get(key) or ""), path, code_line(key), f"{label} {key}", problems)
    _check_syntax(str(data.get("ask") or ""), path, code_line("ask"), f"{label} ask", problems, mode="eval")
    _check_syntax(str(data.get("given") or ""), path, code_line("given"), f"{label} given", problems)
    checks = _checks(data, label, line_of, path, problems) if qtype == "task" else []
    hints = data.get("hints") or []
    if not isinstance(hints, list) or not all(isinstance(h, str) for h in hints):
        complain("hints", f"{label}: 'hints' is a list of strings")
        hints = []
    tolerance = data.get("tolerance")
    if tolerance is not None and (not isinstance(tolerance, (int, float)) or isinstance(tolerance, bool) or tolerance < 0):
        complain("tolerance", f"{label}: 'tolerance' is a number >= 0")
        tolerance = None
    options = _options(data.get("options"), qtype, bool(data.get("ask")), label, line_of("options"), path, problems)
    misconceptions = _misconceptions(data.get("misconceptions"), label, line_of("misconceptions"), path, problems)
    fields = tuple(data.get("fields") or DEFAULT_STATE_FIELDS)
    unknown = [f for f in fields if f not in STATE_FIELDS]
    if unknown:
        complain("fields", f"{label}: unknown fields {unknown} (known: {', '.join(STATE_FIELDS)})")
    compare = data.get("compare") or ["value"]
    compare = (compare,) if isinstance(compare, str) else tuple(compare)
    if set(compare) - {"value", "shape", "dtype", "rounded"}:
        complain("compare", f"{label}: 'compare' takes value, shape, dtype and rounded")
    if "rounded" in compare and not (isinstance(tolerance, (int, float)) and 0 < tolerance < 1):
        complain("compare", f"{label}: 'compare: rounded' needs a 'tolerance' below 1 (0.1: one decimal)")
    if len(problems) > before:
        return None
    return Question(
        id=qid, lesson_id=lesson_id, type=qtype, prompt=str(data["prompt"]).strip(), path=path, line=fence_line,
        hints=hints, setup=str(data.get("setup") or ""), code=str(data.get("code") or ""),
        ask=str(data.get("ask") or "").strip(), options=options, solution=str(data.get("solution") or ""),
        tolerance=tolerance, fields=fields, checks=checks, given=str(data.get("given") or "").strip("\n"),
        starter=str(data.get("starter") or ""),
        function=str(data.get("function") or ""), variable=str(data.get("variable") or ""),
        misconceptions=misconceptions, compare=compare, explanation=str(data.get("explanation") or "").strip(),
    )


def _options(raw: Any, qtype: str, computed: bool, label: str, line: int, path: str,
             problems: list[Problem]) -> list[Option]:
    if qtype != "choice" or raw in (None, []):
        return []
    if not isinstance(raw, list) or len(raw) < 2:
        problems.append(Problem(path, line, f"{label}: 'options' is a list of at least two options"))
        return []
    options = []
    for n, item in enumerate(raw, 1):
        if isinstance(item, str):
            item = {"text": item}
        if not isinstance(item, dict) or not str(item.get("text") or "").strip():
            problems.append(Problem(path, line, f"{label}: option {n} needs a 'text'"))
            continue
        extra = set(item) - {"text", "correct", "feedback", "answer"}
        if extra:
            problems.append(Problem(path, line, f"{label}: option {n} has unknown keys {sorted(extra)}"))
        correct = item.get("correct")
        options.append(Option(text=str(item["text"]).strip(), correct=None if correct is None else bool(correct),
                              feedback=str(item.get("feedback") or "").strip(),
                              answer=None if item.get("answer") is None else str(item["answer"])))
    if computed:
        if any(o.answer is None for o in options):
            problems.append(Problem(path, line, f"{label}: with 'ask', every option needs an 'answer' to match the key"))
    elif sum(1 for o in options if o.correct) != 1:
        problems.append(Problem(path, line, f"{label}: exactly one option needs 'correct: true'"))
    for n, option in enumerate(options, 1):
        if option.correct is False or (not computed and not option.correct):
            if not option.feedback:
                problems.append(Problem(path, line, f"{label}: wrong option {n} needs a 'feedback' naming its misconception"))
    return options


def _checks(data: dict, label: str, line_of, path: str, problems: list[Problem]) -> list[Check]:
    """A task's checks: state facts compared with the solution's, or rules of the code (task_checks.py)."""
    if "check" in data:
        problems.append(Problem(path, line_of("check"), f"{label}: 'check' expressions ran in the learner's "
                                "namespace, where every name they read can be rebound; write 'checks' of "
                                "state and code instead (docs/LESSONS.md)"))
    if data.get("checks") in (None, "", []):
        return []
    checks, found = parse_checks(data.get("checks"))
    problems.extend(Problem(path, line_of("checks"), f"{label}: {message}") for message in found)
    return checks


def _misconceptions(raw: Any, label: str, line: int, path: str, problems: list[Problem]) -> list[Misconception]:
    if raw in (None, []):
        return []
    if not isinstance(raw, list) or not all(isinstance(m, dict) and "answer" in m and "feedback" in m for m in raw):
        problems.append(Problem(path, line, f"{label}: 'misconceptions' is a list of {{answer, feedback}}"))
        return []
    return [Misconception(str(m["answer"]), str(m["feedback"]).strip()) for m in raw]


def _only_line(code: str) -> str | None:
    """The cell's one non-blank line; None for a cell of several (or none)."""
    lines = [line for line in code.splitlines() if line.strip()]
    return lines[0] if len(lines) == 1 else None


def _is_magic(code: str) -> bool:
    """A cell of one %magic line (`%trace loss`, `%at -1`): the session runs it, as at the prompt."""
    line = _only_line(code)
    return line is not None and line.startswith("%")


def _reads_or_runs(code: str) -> str | None:
    """What a one-line cell does that a lesson may not (a downloaded lesson would do it on the learner's
    machine): a magic that reads a file (`%run FILE`), a `!program`; None for any other cell."""
    line = _only_line(code)
    if line is None:
        return None
    name = line.split(maxsplit=1)[0]
    if name in magic_names.READS_FILES:
        return f"{name} {magic_names.READS_FILES[name]}"
    return f"{name} runs a program" if name.startswith("!") else None


def _check_syntax(code: str, path: str, line: int, what: str, problems: list[Problem], mode: str = "exec") -> bool:
    """Parse (never run) code; a syntax error becomes a problem at its line in the file."""
    if not code.strip():
        return True
    try:
        ast.parse(code if mode == "exec" else code.strip(), mode=mode)
    except SyntaxError as exc:
        where = line + (exc.lineno or 1) - 1
        problems.append(Problem(path, where, f"{what}: syntax error: {exc.msg}"))
        return False
    return True
