"""The words for what the kernel says as data: a remark (a note's code and names), a text it could
not read (the guard's reason), a %timeit's numbers, a request's error code, a symbolic input error.

The kernel sends codes and the names and numbers their words need (kernel/inspect/snapshot.py's
panel notes, kernel/streams.py's cut stream, kernel/guard.py's NoValue reason, kernel/step.py's
timing, kernel/requests.py's errors, kernel/symbolic's ExprError and PointError, a trace's notes);
the session words a step's reply once as it arrives (`word_step`) and a request's in
`Session._request`, so the console, --plain, `run`, `play` and the notebook say the same.
"""

from __future__ import annotations

from gradrepl.views.help_page import worded_page
from gradrepl.views.refusals import REFUSALS
from gradrepl.views.templates import filled

# Why a read of a learner object gave no value (guard.NoValue's reason): the short form follows
# "reading it ...", the long form stands alone.
NO_VALUE = {"timed_out": "took over {seconds:g} s", "raised": "raised {error}", "interrupted": "was interrupted"}
NO_VALUE_IT = {"timed_out": "it took longer than {seconds:g} s", "raised": "it raised {error}",
               "interrupted": "it was interrupted"}

PANEL_NOT_UPDATED = ("The tensor panel was not updated: reading your variables failed ({why}). An object "
                     "whose attributes raise or hang can cause this; `del` it.")

REMARKS = {
    "panel_skips": "panel skips {name}: reading it {why}; it stays off the panel until {name} holds another object",
    "panel_not_updated": PANEL_NOT_UPDATED,
    "panel_not_updated_more": PANEL_NOT_UPDATED.replace("{why}", "more objects hung or raised; the next step reads on"),
    "panel_stopped_walk": "panel stopped after {rows:,} rows: looking through {at} took over {seconds:g} s, so "
                          "tensors past it keep what the panel last showed",
    "panel_stopped_rows": "panel stopped after {rows:,} rows: reading tensors took over {seconds:g} s; the rest are "
                          "shown after the next step",
    "warning_unshown": "{category}: <the warning could not be shown: {why}>",
    "trace_capped": "the graph has more than {nodes} nodes: the {nodes} nearest the root are traced, the rest ran "
                    "unrecorded",
    "traces_untraced": "{calls} more backward call(s) ran untraced (only the first {kept} are recorded)",
    "stream_truncated": "{stream} truncated: {dropped:,} bytes not shown (the limit is {limit_kib} KiB per step)",
}

# Why a task's checker could not read a value of the learner's (kernel/inspect/task_state.py, reads.py:
# an entry's or the state's "unreadable", a "missing" entry's code); tutor/task_checks.py quotes them.
TASK_READS = {
    "torch_mode_active": "a torch mode (TorchDispatchMode or TorchFunctionMode) is still active, and it would see "
                         "every read of your tensors",
    "tensor_subclass": "a subclass of torch.Tensor, whose methods can say anything",
    "raised": "reading it raised {error}",
    "tensor_attribute": "only .grad is read on a tensor, not .{attribute}",
    "no_attributes": "a value of type {type} has no attributes to read",
    "odd_dict": "its __dict__ is not a dict",
    "not_indexed": "a value of type {type} is not read by index",
    "no_attribute": "it has no attribute {attribute!r}",
    "no_item": "it has no item [{index}]",
    "not_defined": "{name} is not defined",
}


def task_read_words(reason) -> str:
    """Why a value could not be read for a task's check, in words ({"code", "names"} from the kernel)."""
    if not isinstance(reason, dict):
        return str(reason)
    code = reason.get("code")
    return filled(TASK_READS, code, reason.get("names")) or f"it could not be read ({code})"


# Why a script or lesson file was not read (source_file.Unreadable, read by the frontend or, for %run, by
# the kernel: op read_script): a code and the path; file_refused is the kernel's sandbox refusing it.
FILE_ERRORS = {
    "no_such_file": "{path}: no such file",
    "is_folder": "{path}: is a folder, not a file",
    "is_fifo": "{path}: is a named pipe (FIFO), not a file; it was not read (reading one waits for a writer)",
    "is_device": "{path}: is a device, not a file; it was not read",
    "is_socket": "{path}: is a socket, not a file; it was not read",
    "not_a_file": "{path}: is not a regular file; it was not read",
    "cannot_read": "{path}: cannot read it ({why})",
    "too_large": "{path}: larger than {limit_mib} MiB, too large to be a script or lesson",
    "not_utf8": "{path}: not UTF-8 text (byte {at} is {byte}); save it as UTF-8",
    "file_refused": "{path}: the kernel may not read it. " + REFUSALS["read_refused"],
}


def file_error_words(code: str, names: dict | None = None) -> str:
    return filled(FILE_ERRORS, code, names) or f"the file could not be read ({code})"


# A request that could not be answered: its reply's "error" is {"code", "names"} (kernel/requests.py _error,
# inspect/series.py, inspect/trace.py TraceError, worker.py's over-size reply); Session._request words it.
REQUEST_ERRORS = {
    "no_tensor": "no live tensor named {name!r} (see %tensors for the names)",
    "no_variable": "no variable named {name!r}",
    "trace_leaf": "{name} is a leaf: no operation made it, so backward from it runs no node. Trace a result computed "
                  "from {name} instead.",
    "trace_untracked": "{name} does not require grad: autograd recorded no graph behind it.",
    "trace_not_scalar": "{name} has shape {shape}, not one number: backward needs a scalar to start from. Trace a sum "
                        "instead (s = {name}.sum(), then %trace s), or trace the statement with a gradient argument: "
                        "%trace {name}.backward(torch.ones_like({name}))",
    "trace_freed": "backward already ran through {name}'s graph and freed what it saved, so it cannot run again. "
                   "Compute {name} again, or call backward(retain_graph=True) to keep the graph.",
    "trace_failed": "backward from {name} failed: {error}",
    "not_a_series": "{name} is a {type}, not a list of numbers or a tensor",
    "series_empty": "{name} is empty: nothing to plot yet",
    "series_empty_tensor": "{name} is an empty tensor: nothing to plot",
    "series_tensor_kind": "{name} is a tensor whose values cannot be plotted (complex, sparse, nested or meta)",
    "series_item": "{name} holds a {type}: only numbers (or one-number tensors) can be plotted",
    "series_too_many": "{name} has {count} elements: too many to plot (at most {limit})",
    "series_unreadable": "{name} could not be read as numbers: {error}",
    "gave_up": "the kernel gave up on {op} after {seconds:g} s: a value it had to read (perhaps an object of "
               "yours) took too long",
    "raised": "the kernel could not answer {op}: code of yours that it reached raised {error}",
    "unknown_op": "unknown op {op!r}",
    "cursor_outside": "the cursor ({cursor}) is outside the code ({length} characters)",
    "checker_memory": "the memory limit is too small for the checker: the kernel ran out of memory loading it",
    "expression_memory": "the kernel ran out of memory checking this expression (its memory limit)",
    "reply_too_large": "the kernel's answer was {mib} MiB, more than the {cap_mib} MiB a reply may hold (too many "
                       "tensors at once?)",
    **FILE_ERRORS,  # op read_script's
}


_LONG_WHY = {"panel_not_updated", "warning_unshown"}  # remarks whose {why} stands alone ("it raised ...")


# An expression or point a symbolic check cannot take (kernel/symbolic/expr.py ExprError, crosscheck.py
# PointError, checks.py): {"code", "names", "column"}.
PARSE_ERRORS = {
    "too_long": "the expression is too long ({length} characters; the limit is {limit})",
    "empty": "the expression is empty",
    "ends_early": "the expression ends too early",
    "cannot_parse": "cannot parse this: {why}",
    "not_allowed": "not allowed: {what}",
    "not_allowed_attribute": "not allowed: attribute access ('.{attr}')",
    "not_allowed_constant": "not allowed: the constant {value}",
    "too_large": "this number is too large",
    "function_name": "'{name}' is a function: call it, like {name}(x)",
    "underscore": "names starting with '_' are not allowed ('{name}')",
    "division_by_zero": "division by zero",
    "exponent_too_large": "the exponent is too large (the limit is {limit})",
    "unknown_function": "unknown function '{name}' (allowed: {allowed})",
    "keywords": "keyword arguments are not allowed",
    "arity": "{name}() takes {wanted} argument(s), got {got}",
    "point_missing": "no value for {missing}: give every variable a value, like --at {example}",
    "point_extra": "the expression does not use {extra}",
    "point_not_finite": "{name} must be a finite number, got {value}",
    "expression_not_text": "the expression must be text",
    "point_not_mapping": "the point must map variable names to numbers",
    "not_a_tensor": "{name}: no tensor; %check takes the name of a tensor",
    "not_a_tensor_of": "{name}: {type}, not a tensor; %check takes the name of a tensor",
    "key_does_not_parse": "the answer key does not parse: {key}",
}
# What a refused piece of an expression is called (its ast class, or the parser's own kind).
REFUSED_WORDS = {
    "Lambda": "lambda", "ListComp": "comprehensions", "SetComp": "comprehensions", "DictComp": "comprehensions",
    "GeneratorExp": "comprehensions", "Compare": "comparisons", "BoolOp": "'and'/'or'", "IfExp": "'if ... else'",
    "List": "lists", "Tuple": "tuples (a ',' outside a call)", "Dict": "dicts", "Set": "sets",
    "Starred": "'*' unpacking", "NamedExpr": "':='", "JoinedStr": "strings", "str": "strings", "Await": "'await'",
    "Yield": "'yield'", "Subscript": "subscripts ('[...]')", "call_result": "calling the result of an expression",
    "FloorDiv": "'//'", "Mod": "'%'", "MatMult": "'@'", "BitXor": "'^' here", "BitAnd": "'&'", "BitOr": "'|'",
    "LShift": "'<<'", "RShift": "'>>'", "Invert": "'~'", "Not": "'not'",
}


def parse_error_words(error: dict) -> str:
    """An expression's error in words, without its column (the caller shows where)."""
    code, names = error.get("code"), dict(error.get("names") or {})
    if code == "not_allowed":
        what = str(names.get("what", "?"))
        names["what"] = REFUSED_WORDS.get(what, f"'{what}'")
    if code == "arity":
        names["wanted"] = " or ".join(str(names.get("wanted", "?")).split(","))
    if code == "not_a_tensor" and "type" in names:
        code = "not_a_tensor_of"
    if code == "key_does_not_parse":
        key = error.get("key") or {}
        names["key"] = parse_error_words(key) + (f" (column {key['column']})" if key.get("column") else "")
    return filled(PARSE_ERRORS, code, names) or f"the kernel could not take this ({code})"


def worded_parse_error(error):
    """{"message", "column"} (what every face reads) for the kernel's {"code", "names", "column"}."""
    if isinstance(error, dict) and "code" in error:
        return {"message": parse_error_words(error), "column": error.get("column")}
    return error


def why_words(reason: dict | None, table: dict[str, str] = NO_VALUE) -> str:
    """A NoValue reason in words (short: after "reading it"; NO_VALUE_IT: on its own)."""
    reason = reason if isinstance(reason, dict) else {}
    return filled(table, reason.get("why"), reason) or "failed"


def unshown_text(what: str, reason: dict | None) -> str:
    """`<the error message could not be shown: it raised KeyError>`: a text of the learner's the kernel
    could not read."""
    return f"<{what} could not be shown: {why_words(reason, NO_VALUE_IT)}>"


def remark_words(remark) -> str:
    """A note as the learner reads it: torch's words pass as they are, a remark's code is worded."""
    if not isinstance(remark, dict):
        return remark
    names = dict(remark.get("names") or {})
    if isinstance(names.get("why"), dict):  # a NoValue reason inside the names
        table = NO_VALUE_IT if remark.get("code") in _LONG_WHY else NO_VALUE
        names["why"] = why_words(names["why"], table)
    code = remark.get("code")
    return filled(REMARKS, code, names) or f"(a note this version of gradrepl cannot word: {code})"


def request_error(code: str | None, names: dict | None = None) -> str:
    return filled(REQUEST_ERRORS, code, names) or f"the kernel could not answer ({code})"


def _format_time(seconds: float) -> str:
    """Three significant digits in the largest unit that keeps the number at least 1 (IPython's way)."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def timeit_text(timing: dict) -> str:
    """%timeit's line, as IPython's: `1.2 ms ± 3.4 µs per loop (mean ± std. dev. of 7 runs, 100 loops each)`."""
    loops = int(timing.get("loops", 0))
    return (f"{_format_time(float(timing.get('mean', 0.0)))} ± {_format_time(float(timing.get('std', 0.0)))} "
            f"per loop (mean ± std. dev. of {timing.get('runs', 0)} runs, {loops:,} loop{'s' if loops != 1 else ''} "
            "each)")


def word_trace(trace: dict | None) -> dict | None:
    """A trace (op `trace`) or a statement's traces (execute's `trace`) with their notes in words, in place."""
    if isinstance(trace, dict):
        for one in [trace, *(trace.get("traces") or [])]:
            if one.get("note") is not None:
                one["note"] = remark_words(one["note"])
    return trace


def word_error(error: dict | None) -> None:
    """An ErrorInfo's fields (a dict, as the reply holds them) with the texts the kernel could not read in
    words: its message (and the traceback's last line, which the kernel leaves to us) and its causes'."""
    if not isinstance(error, dict):
        return
    for cause in error.get("causes") or []:
        if cause.get("unshown"):
            cause["message"] = unshown_text("the error message", cause.pop("unshown"))
    if error.get("unshown"):
        error["message"] = unshown_text("the error message", error.pop("unshown"))
        error["traceback"] = f"{error.get('traceback') or ''}{error.get('type')}: {error['message']}\n"


def word_step(payload: dict) -> dict:
    """An execute reply's data in words, in place: remarks among its notes, an unreadable repr, a %timeit's
    timing as its display, an error's unreadable message."""
    payload["notes"] = [remark_words(note) for note in payload.get("notes") or []]
    unshown = payload.pop("result_unshown", None)
    if unshown is not None:
        payload["result"] = unshown_text(f"{unshown.get('type', '?')} object: its repr", unshown)
    timing = payload.pop("timeit", None)
    if isinstance(timing, dict):
        payload["display"] = timeit_text(timing)
    payload["display"] = worded_page(payload.get("display"))
    error = payload.get("error")
    if isinstance(error, dict) and "code" in error and "type" not in error:  # the request failed as a whole
        payload["error"] = request_error(error["code"], error.get("names"))
    word_error(payload.get("error"))
    word_trace(payload.get("trace"))
    return payload
