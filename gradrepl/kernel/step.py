"""One step's pieces: compiling it (a final expression apart, to echo its value), %timeit, the
echo's repr, and the codes of its errors and warnings. requests.Kernel runs the step; the words
are the frontend's (views/remarks.py, views/diagnosis.py)."""

from __future__ import annotations

import ast
import timeit
import types

from gradrepl.kernel import sandbox
from gradrepl.kernel.guard import NoValue, bounded, safe_text
from gradrepl.kernel.inspect import made_by
from gradrepl.kernel.inspect.diagnose import Scene, diagnose, explain, explain_warning
from gradrepl.kernel.tracebacks import chain
from gradrepl.protocol import messages as protocol

RESULT_CAP = protocol.RESULT_CAP   # characters of an echoed repr
TIMEIT_RUNS = 7  # as IPython's %timeit
TIMEIT_FILE = "<timeit-src>"  # the name timeit compiles a statement under


def split_last_expression(source: str, filename: str, first_line: int = 1):
    """Compile a step; a final expression is compiled apart so its value can be echoed.

    Compiled at line 1 and then moved to `first_line` (code objects hold their lines relative to
    their first): cheaper than renumbering every node of the tree. Each assignment to a name is
    followed by a mark of the autograd nodes made so far (inspect/made_by.py)."""
    try:
        tree = ast.parse(source, filename, "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            final = ast.Expression(tree.body.pop().value)
            last = _moved(compile(made_by.marked_expression(final, source, first_line), filename, "eval"),
                          first_line - 1)
        made_by.instrument(tree, source, first_line)
        return _moved(compile(tree, filename, "exec"), first_line - 1), last
    except SyntaxError as exc:
        if exc.lineno:  # the script's line, not the step's
            exc.lineno += first_line - 1
            exc.end_lineno = exc.end_lineno + first_line - 1 if exc.end_lineno else None
        raise


def _moved(code: types.CodeType, lines: int) -> types.CodeType:
    """`code` and the code nested in it (functions, classes, comprehensions), `lines` lines further down."""
    if not lines:
        return code
    consts = tuple(_moved(const, lines) if isinstance(const, types.CodeType) else const for const in code.co_consts)
    return code.replace(co_firstlineno=code.co_firstlineno + lines, co_consts=consts)


def short_repr(value) -> tuple[str, dict | None]:
    """(the repr, capped, None), or ("", why it could not be had, with the value's type): a broken
    __repr__ must not break the step, and the frontend says so in words (views/remarks.py)."""
    try:
        text = bounded(lambda: repr(value))
    except NoValue as failed:
        return "", {**failed.reason, "type": type(value).__name__}
    return _capped(text), None


def _capped(text: str) -> str:
    if len(text) > RESULT_CAP:
        text = text[:RESULT_CAP] + f"... ({len(text) - RESULT_CAP:,} more characters)"
    return text


def time_statement(source: str, namespace: dict) -> dict:
    """%timeit as IPython does it: loops until a run takes 0.2 s, 7 runs; the mean and standard deviation
    per loop in seconds (views/remarks.timeit_text says them)."""
    timer = timeit.Timer(source, globals=namespace)
    loops, _ = timer.autorange()
    per_loop = [total / loops for total in timer.repeat(TIMEIT_RUNS, loops)]
    mean = sum(per_loop) / len(per_loop)
    std = (sum((t - mean) ** 2 for t in per_loop) / len(per_loop)) ** 0.5
    return {"mean": mean, "std": std, "runs": TIMEIT_RUNS, "loops": loops}


def error_words(exc: BaseException, scene: Scene | None = None) -> tuple[str | None, dict | None]:
    """(the diagnosis code, the names its words need) of an error: an autograd cause, or what the
    sandbox refused; for the nearest error of its chain that has one (a ValueError raised from
    autograd's RuntimeError is explained by the RuntimeError). Explaining reads the exception, which
    may misbehave too. With the `scene` of the error, a cause that names the learner's tensors comes
    first (diagnose). The words are the frontend's (views/diagnosis.py, views/refusals.py)."""
    for candidate in [exc] + [earlier for earlier, _ in reversed(chain(exc))]:
        try:
            found = bounded(lambda: diagnose(candidate, scene)) if scene is not None else None
            if found:
                return found[0], found[1]
            code = bounded(lambda: explain(candidate))
            if code:
                return code, None
            refused = bounded(lambda: sandbox.refusal(candidate))
        except NoValue:
            return None, None
        if refused:
            return refused
    return None, None


def warning_notes(caught) -> tuple[list, list[dict]]:
    """Each warning as a note in torch's words (or, when its message cannot be read, a remark saying
    why), and the diagnosis of those autograd explains (the frontend puts its words under the note)."""
    notes, diagnoses = [], []
    for warning in caught:
        message, unshown = safe_text(lambda: warning.message)
        if unshown:
            notes.append({"code": "warning_unshown", "names": {"category": warning.category.__name__, "why": unshown}})
            continue
        code = explain_warning(message)
        if code:
            diagnoses.append({"code": code, "note": len(notes)})
        notes.append(f"{warning.category.__name__}: {message}")
    return notes, diagnoses
