"""What each reply may hold: one schema per op, checked where the client decodes a reply.

Learner code runs in the kernel and can rewrite the worker's own reply writer, so a reply
with the right id can still have any shape (`duration_ms: "soon"`, `notes: 7`, an error with
keys no ErrorInfo has). `check(op, message)` holds a decoded reply against the schema of the op
it answers: types, known keys, sizes. A reply that does not fit raises `Violation`, which the
reply channel treats as a broken protocol (the kernel is killed and replaced, the learner told).

Every string of a reply that fits comes back made visible (terminal_text.visible), carets moved
with the lines they point into: text from the kernel is made safe for a terminal once, here, so
no view has to remember it.

The shapes are those the kernel's op_* handlers (kernel/requests.py) send; the sizes are the
kernel's own caps (a few repeated here: this module must not import what imports torch), with
room for the words a cap appends.
"""

from __future__ import annotations

from typing import Any, Callable

from gradrepl.protocol import shapes
from gradrepl.protocol.messages import HELP_CAP, REPLY_CAP, RESULT_CAP, TEXT_CAP
from gradrepl.terminal_text import moved_column, visible

Spec = Callable[[Any, tuple], Any]  # (value, where) -> the value checked, its text visible

# String sizes, in characters.
SHORT = 64 << 10             # names, dtypes, kinds, statuses, titles
WORDS = 4 * TEXT_CAP         # messages, notes, tracebacks: capped at TEXT_CAP bytes, plus the words around
LONG = REPLY_CAP             # source lines, help pages, formulas: bounded by the reply line itself
MANY = 1 << 20               # a list with no cap of its own in the kernel
# The kernel's own list caps (kept equal by tests/protocol/test_reply_schema.py).
MAX_ALIASES = 16 + 1         # inspect/snapshot.py MAX_ALIASES, and the "(+N more)" entry
SMALL_VALUES = 64            # inspect/summary.py SMALL: values shown in full
MAX_GRAPH_NODES = 200        # inspect/graph.py MAX_NODES
MAX_TRACE_NODES = 500        # inspect/trace.py MAX_NODES
MAX_SERIES = 512             # inspect/series.py MAX_POINTS
MAX_PASSES = 3               # inspect/trace.py MAX_PASSES
MAX_TRACE_TERMS = 4          # inspect/formulas.py: a rule names at most this many saved values
MAX_CAUSES = 8               # tracebacks.py MAX_CAUSES
COMPLETION_LIMIT = 200       # requests.py COMPLETION_LIMIT
TASK_ENTRIES = 2048          # inspect/reads.py ENTRY_CAP
TASK_VALUES = 100_000        # inspect/reads.py VALUE_CAP
TASK_NUMBERS = 200_000       # inspect/backward_log.py LOG_NUMBERS
MAX_DIMS = 1024


class Violation(ValueError):
    """A reply that does not fit its op's schema; the message says where, in words."""

    def __init__(self, where: tuple, what: str):
        self.where, self.what = where, what
        super().__init__(f"{_path(where) or 'the reply'} {what}")


def _path(where: tuple) -> str:
    parts = []
    while where:
        where, key = where
        parts.append(f"[{key}]" if isinstance(key, int) else f".{key}")
    return "".join(reversed(parts)).lstrip(".")


def _kind(value: Any) -> str:
    return {str: "text", bool: "true/false", int: "a whole number", float: "a number", list: "a list",
            dict: "an object", type(None): "null"}.get(type(value), type(value).__name__)


# -- building blocks ------------------------------------------------------------------------

def text(limit: int = WORDS) -> Spec:
    def check(value, where):
        if type(value) is not str:
            raise Violation(where, f"is {_kind(value)}, not text")
        if len(value) > limit:
            raise Violation(where, f"is {len(value):,} characters long, more than {limit:,}")
        return visible(value)
    return check


def raw_text(limit: int) -> Spec:
    """Text checked but left as it is: a line whose carets move when it is made visible."""
    def check(value, where):
        if type(value) is not str:
            raise Violation(where, f"is {_kind(value)}, not text")
        if len(value) > limit:
            raise Violation(where, f"is {len(value):,} characters long, more than {limit:,}")
        return value
    return check


# No honest reply holds a whole number beyond 64 bits (shapes, counts, versions, times); JSON allows
# any, and float() of 10**4000 raises OverflowError where the frontend reads it.
_INT_BOUND = 1 << 63


def integer(value, where):
    if type(value) is not int:
        raise Violation(where, f"is {_kind(value)}, not a whole number")
    if not -_INT_BOUND <= value < _INT_BOUND:
        raise Violation(where, "is a whole number beyond 64 bits")
    return value


def count(value, where):
    if type(value) is not int or value < 0:
        raise Violation(where, f"is {_kind(value) if type(value) is not int else 'negative'}, not a count")
    return integer(value, where)


def exit_status(value, where):
    """A process's exit status: `run` exits with it, and no process can exit with another."""
    if type(value) is not int or not 0 <= value <= 255:
        raise Violation(where, "is not a valid exit status (a process's is a whole number from 0 to 255)")
    return value


def number(value, where):
    if type(value) is not int and type(value) is not float:
        raise Violation(where, f"is {_kind(value)}, not a number")
    return integer(value, where) if type(value) is int else value


def boolean(value, where):
    if type(value) is not bool:
        raise Violation(where, f"is {_kind(value)}, not true/false")
    return value


def literal(*allowed) -> Spec:
    def check(value, where):
        if not any(type(value) is type(one) and value == one for one in allowed):  # True is not 1 here
            raise Violation(where, f"is not {' or '.join(map(repr, allowed))}")
        return value
    return check


def maybe(spec: Spec) -> Spec:
    def check(value, where):
        return None if value is None else spec(value, where)
    return check


def items(spec: Spec, limit: int = MANY) -> Spec:
    def check(value, where):
        if type(value) is not list:
            raise Violation(where, f"is {_kind(value)}, not a list")
        if len(value) > limit:
            raise Violation(where, f"holds {len(value):,} items, more than {limit:,}")
        return [spec(item, (where, index)) for index, item in enumerate(value)]
    return check


def pair(spec: Spec) -> Spec:
    inner = items(spec, 2)

    def check(value, where):
        checked = inner(value, where)
        if len(checked) != 2:
            raise Violation(where, "is not a pair")
        return checked
    return check


def mapping(value_spec: Spec, limit: int = 256, key_limit: int = SHORT) -> Spec:
    """An object whose keys are names (layers, variables), each value of one shape."""
    def check(value, where):
        if type(value) is not dict:
            raise Violation(where, f"is {_kind(value)}, not an object")
        if len(value) > limit:
            raise Violation(where, f"holds {len(value):,} entries, more than {limit:,}")
        out = {}
        for key, item in value.items():
            if len(key) > key_limit:
                raise Violation(where, f"has a key {len(key):,} characters long")
            out[visible(key)] = value_spec(item, (where, visible(key)))
        return out
    return check


def record(required: dict[str, Spec], optional: dict[str, Spec] | None = None) -> Spec:
    """An object with these keys and no others."""
    known = {**required, **(optional or {})}
    needed = frozenset(required)

    def check(value, where):
        if type(value) is not dict:
            raise Violation(where, f"is {_kind(value)}, not an object")
        missing = needed.difference(value)
        if missing:
            raise Violation(where, f"has no {', '.join(sorted(missing))}")
        out = {}
        for key, item in value.items():
            spec = known.get(key)
            if spec is None:
                raise Violation(where, f"has a key no reply has ({visible(repr(key)[:40])})")
            out[key] = spec(item, (where, key))
        return out
    return check


def shaped(shape: type, specs: dict[str, Spec]) -> Spec:
    """record() of a piece described in shapes.py: which keys it has, and which are required, come from
    the shape; `specs` says what each holds. The two disagreeing is a mistake found at import."""
    required, optional = shape.__required_keys__, shape.__optional_keys__
    if set(specs) != required | optional:
        raise TypeError(f"the schema of {shape.__name__} has {sorted(set(specs) - required - optional)} that "
                        f"shapes.{shape.__name__} lacks, and lacks {sorted((required | optional) - set(specs))}")
    return record({key: spec for key, spec in specs.items() if key in required},
                  {key: spec for key, spec in specs.items() if key in optional})


def either(*specs: Spec, what: str) -> Spec:
    """The first of `specs` the value fits. When none does, the words are those of the alternative
    that fitted furthest (a step's reply with one bad field names that field), else `what`."""
    def check(value, where):
        failed = []
        for spec in specs:
            try:
                return spec(value, where)
            except Violation as violation:
                failed.append(violation)
        deepest = max(failed, key=lambda violation: _depth(violation.where))
        raise deepest if _depth(deepest.where) > _depth(where) else Violation(where, f"is not {what}")
    return check


def _depth(where: tuple) -> int:
    depth = 0
    while where:
        where, depth = where[0], depth + 1
    return depth


def tagged(tag: str, shapes: dict[str, Spec]) -> Spec:
    """An object whose `tag` key says which of `shapes` it has (a value's "kind")."""
    def check(value, where):
        spec = shapes.get(value.get(tag)) if type(value) is dict and type(value.get(tag)) is str else None
        if spec is None:
            raise Violation((where, tag), f"is not {' or '.join(map(repr, shapes))}")
        return spec(value, where)
    return check


def nested(leaf: Spec, limit: int) -> Spec:
    """A value or nested lists of values (a tensor's tolist()), at most `limit` values in all."""
    def check(value, where):
        seen = [0]

        def walk(item, at, depth):
            if type(item) is not list:
                seen[0] += 1
                return leaf(item, at)
            if depth > MAX_DIMS:
                raise Violation(at, "nests too deep")
            if all(type(inner) in _PLAIN for inner in item):  # a row of numbers: nothing to look into
                seen[0] += len(item)
                checked = item
            else:  # (an empty row counts nothing: torch.zeros(100, 0) holds no value)
                checked = [walk(inner, (at, index), depth + 1) for index, inner in enumerate(item)]
            if seen[0] > limit:
                raise Violation(where, f"holds more than {limit} values")
            return checked
        return walk(value, where, 0)
    return check


_PLAIN = frozenset((int, float, bool))


def scalar(value, where):
    """One value of a tensor: a number, true/false, null, or text ("nan", "(1+2j)", a subclass's own)."""
    kind = type(value)
    if kind is float or kind is int or kind is bool or value is None:
        return value
    return _SCALAR_TEXT(value, where)


# -- the pieces replies are made of ---------------------------------------------------------

NAME = text(SHORT)
NOTE = text(WORDS)
NOTES = items(NOTE)
# Why the kernel could not read a learner's text (guard.NoValue's reason; views/remarks.py words it).
REASON = record({"why": literal("timed_out", "raised", "interrupted", "not_run")},  # not_run: task_state's rerun
                {"seconds": number, "error": NAME, "type": NAME})
DIMS = items(either(integer, text(SHORT), what="a dimension"), MAX_DIMS)
_NAMES = mapping(either(number, NOTE, REASON, DIMS, what="a name, a number, a reason or a shape"), 16)
# The names a diagnosis or a check's problem needs: the learner's names, and shapes as their sizes
# (views/templates.filled writes a shape 2×3).
_SHAPED_NAMES = mapping(either(NOTE, DIMS, what="a name or a shape"), 16)
# A note as data (snapshot's panel notes, a cut stream, an unreadable warning): views/remarks.REMARKS.
REMARK = record({"code": NAME}, {"names": _NAMES})
STEP_NOTES = items(either(NOTE, REMARK, what="a note (torch's words) or a remark (a code and names)"))
# A request's error as data (kernel/requests.py _error): views/remarks.REQUEST_ERRORS.
ERROR_CODE = record({"code": NAME}, {"names": _NAMES})
CODED_NOTE = either(NOTE, ERROR_CODE, what="an error (words, or a code and names)")
_SCALAR_TEXT = text(SHORT)
SCALAR = scalar
SUMMARY = shaped(shapes.Summary, {
    "shape": maybe(DIMS), "values": nested(SCALAR, SMALL_VALUES), "norm": maybe(SCALAR), "min": maybe(SCALAR),
    "max": maybe(SCALAR), "mean": maybe(SCALAR)})
ROW = shaped(shapes.Row, {
    "name": NAME, "aliases": items(NAME, MAX_ALIASES), "shape": maybe(DIMS), "dtype": NAME, "device": NAME,
    "requires_grad": boolean, "is_leaf": boolean, "grad_fn": maybe(NAME), "retains_grad": boolean,
    "version": integer, "changed": boolean, "grad": maybe(SUMMARY), "value": maybe(SUMMARY),
    "saved_bytes": count, "inspect_error": NOTE})
ROWS = items(ROW)

_FRAME = record({"filename": text(LONG), "lineno": integer, "name": NAME, "line": raw_text(LONG),
                 "origin": literal("learner", "library")}, {"col": maybe(count), "end_col": maybe(count)})


def frame(value, where):
    """A traceback frame, its line made visible and the caret's columns moved with it."""
    checked = _FRAME(value, where)
    line = checked["line"]
    for key in ("col", "end_col"):
        if checked.get(key) is not None:
            checked[key] = moved_column(line, checked[key])
    checked["line"] = visible(line)
    return checked


FRAMES = items(frame)
CAUSE = record({"type": NAME, "message": NOTE, "frames": FRAMES, "link": NOTE}, {"unshown": REASON})
_ERROR_INFO = record({"type": NAME, "message": NOTE}, {
    "explanation": maybe(NOTE), "diagnosis": maybe(NAME), "diagnosis_names": maybe(_SHAPED_NAMES),
    "traceback": NOTE, "frames": FRAMES, "causes": items(CAUSE, MAX_CAUSES),
    "offset": maybe(integer), "end_offset": maybe(integer), "text": maybe(raw_text(LONG)), "unshown": REASON})


def error_info(value, where):
    """ErrorInfo's fields (protocol.ErrorInfo): a SyntaxError's line made visible, its offsets moved along."""
    checked = _ERROR_INFO(value, where)
    line = checked.get("text")
    if line is not None:
        for key in ("offset", "end_offset"):
            if checked.get(key) is not None:
                checked[key] = moved_column(line, checked[key], base=1)
        checked["text"] = visible(line)
    return checked


# symbolic/expr.py ExprError.to_json, crosscheck.PointError, checks._error: views/remarks.PARSE_ERRORS words it.
_PARSE_FIELDS = {"code": NAME, "names": mapping(either(number, NOTE, what="a name or a number"), 16),
                 "column": maybe(integer)}
PARSE_ERROR = record(_PARSE_FIELDS, {"key": record(_PARSE_FIELDS)})
_PAGE_TEXT = text(HELP_CAP + SHORT)
# obj?'s fields (kernel/helptext.inspect_fields): views/help_page.py lays them out.
HELP_FIELDS = record({"type": NAME}, {"string_form": text(LONG), "repr_failed": NOTE, "signature": text(LONG),
                                      "file": text(LONG), "docstring": maybe(_PAGE_TEXT), "source": _PAGE_TEXT,
                                      "no_source": text(LONG)})
_ONE_PAGE = either(
    record({"kind": literal("help"), "title": text(LONG), "text": _PAGE_TEXT}),        # help(obj): pydoc's text
    record({"kind": literal("help"), "title": text(LONG), "fields": HELP_FIELDS}),     # obj?, obj??
    record({"kind": literal("help"), "title": text(LONG), "code": literal("help_usage")}),  # a bare help()
    what="a help page (text, fields or a code)")
HELP_PAGE = either(_ONE_PAGE, record({"kind": literal("help"), "title": text(LONG), "pages": items(_ONE_PAGE, 64)}),
                   what="a help page, or several of one step")
DISPLAY = either(text(LONG), HELP_PAGE, what="a display (text or a help page)")

MADE_BY = shaped(shapes.MadeBy, {"step": integer, "line": integer, "source": text(LONG), "tensor": maybe(NAME),
                                 "module": NAME})
CONTRIBUTION = shaped(shapes.Contribution, {"from": NAME, "values": maybe(SUMMARY)})
TRACE_NODE = shaped(shapes.TraceNode, {
    "order": maybe(count), "id": NAME, "name": NAME, "next": items(NAME),
    "grad_outputs": maybe(items(maybe(SUMMARY))), "grad_inputs": maybe(items(maybe(SUMMARY))), "leaf": NAME,
    "made_by": maybe(MADE_BY), "formulas": maybe(items(maybe(text(LONG)))), "label": text(LONG),
    "inputs": items(text(LONG)),
    "in_table": boolean, "derivatives": items(maybe(text(LONG))), "terms": mapping(SUMMARY, MAX_TRACE_TERMS, LONG),
    "contributions": items(CONTRIBUTION, MAX_TRACE_NODES)})
TRACE_NOTE = maybe(either(NOTE, REMARK, what="a note (words, or a code and names)"))  # views/remarks.word_trace
TRACE = shaped(shapes.Trace, {"root": text(LONG), "nodes": items(TRACE_NODE, MAX_TRACE_NODES), "capped": boolean,
                              "note": TRACE_NOTE, "preview": boolean})
STEP_TRACES = record({"traces": items(TRACE, MAX_PASSES), "note": TRACE_NOTE})

SAVED = shaped(shapes.Saved, {"name": NAME, "shape": maybe(DIMS), "freed": boolean, "tensor": NAME, "value": NAME})
GRAPH_NODE = shaped(shapes.GraphNode, {"id": count, "grad_fn": NAME, "shapes": items(DIMS), "leaf": maybe(NAME),
                                       "saved": items(SAVED), "saved_bytes": count})
GRAPH = shaped(shapes.Graph, {"root": NAME, "kind": literal("graph", "leaf", "constant"),
                              "nodes": items(GRAPH_NODE, MAX_GRAPH_NODES), "edges": items(pair(count)),
                              "truncated": boolean, "freed": boolean})

SERIES = shaped(shapes.Series, {"length": count, "values": items(maybe(number), MAX_SERIES), "every": count})

_TENSOR_FACTS = {"shape": DIMS, "dtype": NAME, "device": NAME, "requires_grad": boolean, "is_leaf": boolean,
                 "grad_fn": maybe(NAME), "value": SUMMARY}
_UNSHOWN = {"unshown": REASON}  # a repr or message the kernel could not read ("" beside it)
DESCRIBED = tagged("kind", {  # requests.describe, and op_inspect's error
    "tensor": record({"kind": NAME, "repr": text(RESULT_CAP + SHORT), **_TENSOR_FACTS},
                     {"grad": maybe(SUMMARY), **_UNSHOWN}),
    "none": record({"kind": NAME, "repr": NAME}),
    "bool": record({"kind": NAME, "repr": NAME, "value": boolean}),
    "number": record({"kind": NAME, "repr": text(RESULT_CAP + SHORT), "value": number}),
    "str": record({"kind": NAME, "repr": text(RESULT_CAP + SHORT), "value": text(RESULT_CAP)}, _UNSHOWN),
    "other": record({"kind": NAME, "repr": text(RESULT_CAP + SHORT), "type": NAME}, _UNSHOWN),
    "error": record({"kind": NAME, "type": NAME, "message": NOTE, "repr": text(WORDS + SHORT)}, _UNSHOWN)})

ELEMENT = shaped(shapes.CheckElement, {"index": items(integer, MAX_DIMS), "symbol": NAME, "symbolic": text(LONG),
                                       "expected": maybe(number), "grad": maybe(number)})
_NOTE_DATA = {"note_code": maybe(NAME), "note_names": maybe(mapping(NOTE, 16))}  # worded by views/check.py
LEAF = shaped(shapes.CheckLeaf, {"name": NAME, "shape": DIMS, "grad": maybe(items(number)), "elements": items(ELEMENT),
                                 "status": NAME, **_NOTE_DATA})
CHECK_TENSOR = either(  # symbolic/crosscheck.py check_live: data only (views/check.py words it)
    record({"error": PARSE_ERROR}),
    record({"name": NAME, "kind": literal("tensor"), "problem_code": NAME,  # worded by views/check.py
            "problem_names": maybe(_SHAPED_NAMES)}, {"shape": DIMS}),
    shaped(shapes.Check, {"name": NAME, "kind": literal("tensor"), "shape": DIMS,
                          "formula": either(text(LONG), items(text(LONG)), what="a formula or a list of them"),
                          "of": maybe(NOTE), "leaves": items(LEAF), "remarks": items(record(_NOTE_DATA)),
                          "agree": maybe(boolean)}),
    what="a %check result (an error, a problem, or the leaves' gradients)")
TOLERANCE = record({"autograd": record({"rtol": number, "atol": number}),
                    "numeric": record({"rtol": number, "atol": number, "step": number})})
GRADIENT = record({"symbolic": text(LONG), "symbolic_value": maybe(number), "autograd": maybe(number),
                   "numeric": maybe(number), "agree": maybe(boolean), "status": NAME, "exists": boolean,
                   **_NOTE_DATA})
CHECK_EXPR = either(  # symbolic/crosscheck.py check
    record({"error": PARSE_ERROR}),
    record({"expr": text(LONG), "formula": text(LONG), "point": mapping(number), "value": maybe(number),
            "agree": boolean, "tolerance": TOLERANCE, "grads": mapping(GRADIENT)}),
    record({"expr": text(LONG), "formula": text(LONG), "derivatives": mapping(text(LONG)),
            "needs_point": items(NAME)}),  # no point given: the symbolic derivatives only
    what="an expression check (an error, each variable's gradient, or the derivatives without a point)")
COMPLETION = record({"text": NAME, "start": integer, "kind": NAME, "signature": maybe(NOTE)})  # protocol.Completion
LAYER = record({"active": boolean, "detail": NOTE})  # sandbox/layers.py: {layer: {"active", "detail"}}

# A task's state as data (inspect/task_state.py): entries by path, each tagged by its kind.
_TASK_VALUES = maybe(nested(SCALAR, TASK_VALUES))
# How a tensor was written since the task started (task_state.py's written): None where it was made since.
_TASK_WRITES = {"writes": count, "hidden": maybe(boolean), "same_storage": maybe(boolean)}
_TASK_GRAD = record({"type": NAME, "identity": NAME}, {"unreadable": ERROR_CODE, "dtype": NAME, "shape": maybe(DIMS),
                                                      "values": _TASK_VALUES, **_TASK_WRITES})
_TASK_ENTRY = tagged("kind", {
    "tensor": record({"kind": NAME, "type": NAME, "identity": NAME}, {
        "unreadable": ERROR_CODE, "requires_grad": boolean, "is_leaf": boolean, "retains_grad": boolean,
        "grad_fn": maybe(NAME), "dtype": NAME, "shape": maybe(DIMS), "values": _TASK_VALUES,
        "grad": maybe(_TASK_GRAD), "backward": count, "root": count, "grad_by_backward": boolean,
        "graph": items(NAME), "pass_grads": maybe(items(nested(SCALAR, TASK_NUMBERS))),
        "seeds": maybe(items(nested(SCALAR, TASK_NUMBERS))), "through_grad": boolean, "by_transform": boolean,
        "by_transform_of": items(NAME), "grad_arrived": maybe(items(SCALAR)), "at_moved_inputs": _TASK_VALUES,
        "rerun": REASON, **_TASK_WRITES}),
    "module": record({"kind": NAME, "type": NAME, "identity": NAME, "training": boolean,
                      "parameters": items(NAME), "children": items(NAME)}),
    "optimizer": record({"kind": NAME, "type": NAME, "identity": NAME, "groups": items(record({
        "params": items(NAME), "hyper": mapping(nested(SCALAR, TASK_VALUES))}))},
        {"state": items(record({"param": NAME, "values": mapping(_TASK_VALUES)}))}),
    "value": record({"kind": NAME, "type": NAME, "value": nested(SCALAR, 1)}),
    "sequence": record({"kind": NAME, "type": NAME, "length": count, "identity": NAME}),
    "object": record({"kind": NAME, "type": NAME, "identity": NAME},
                     {"transformed": maybe(record({"at": items(_TASK_VALUES), "moved": items(_TASK_VALUES)})),
                      "rerun": REASON}),  # a run again that did not return (task_state.py)
    "missing": record({"kind": NAME, "code": NAME}, {"names": _NAMES}),  # worded by views/remarks.py TASK_READS
    "unreadable": record({"kind": NAME, "code": NAME}, {"names": _NAMES})})
TASK_STATE = record({"entries": mapping(_TASK_ENTRY, TASK_ENTRIES), "order": items(NAME, TASK_ENTRIES),
                     "token": NAME, "started": boolean},
                    {"names": mapping(NAME, MANY), "log_full": boolean, "unreadable": ERROR_CODE, "truncated": boolean,
                     "grad_enabled": boolean, "globals": record({"default_dtype": NAME, "anomaly": boolean}),
                     "tampered": items(NAME)})  # the reader's names learner code rebound (inspect/seal.py)

# -- replies, op by op ----------------------------------------------------------------------

_ENVELOPE = {"v": literal(1), "id": integer, "type": literal("reply"), "ok": boolean}
_OPTIONAL = {"exhausted": literal("time", "memory"), "notes": NOTES}
ERROR = either(NOTE, error_info, ERROR_CODE, what="an error (words, an ErrorInfo, or a code and names)")
# A request that failed as a whole (unknown op, interrupted, out of time or memory, too large a reply).
FAILED = record({**_ENVELOPE, "error": ERROR}, _OPTIONAL)


def _answer(*shapes: dict[str, Spec], what: str) -> Spec:
    """A reply whose payload is one of `shapes` (each {key: spec}, every key required)."""
    fitting = [record({**_ENVELOPE, **shape}, _OPTIONAL) for shape in shapes]
    return fitting[0] if len(fitting) == 1 else either(*fitting, what=what)


# What inspect/diagnose.py recognised in a step, as data (views/diagnosis.py words it): a warning's code
# and its note's index, or an accumulation with the leaves' names and what their .grad held.
_GRAD_SEEN = maybe(record({}, {"value": number, "norm": number}))
_ACCUMULATED = record({"name": maybe(NAME), "shape": DIMS, "held": _GRAD_SEEN, "now": _GRAD_SEEN})
TIMING = record({"mean": number, "std": number, "runs": count, "loops": count})  # %timeit: views/remarks.py
DIAGNOSIS = record({"code": NAME}, {"note": count, "leaves": items(_ACCUMULATED, 3), "more": count})
_STEP = {"result": maybe(text(RESULT_CAP + SHORT)), "error": maybe(error_info), "notes": STEP_NOTES,
         "duration_ms": number, "tensors": ROWS, "removed": items(NAME)}
REPLIES: dict[str, Spec] = {
    "execute": either(
        record({**_ENVELOPE, **_STEP}, {**_OPTIONAL, "notes": STEP_NOTES, "display": maybe(DISPLAY), "trace": maybe(STEP_TRACES),
                                        "diagnoses": items(DIAGNOSIS), "exit_status": maybe(exit_status),
                                        "timeit": TIMING, "result_unshown": REASON,
                                        "grads_set": items(NAME)}),
        record({**_ENVELOPE, "skipped": literal(True)}),
        what="a step's result (result, error, notes, duration_ms, tensors, removed) or skipped"),
    "complete": _answer({"completions": items(COMPLETION, COMPLETION_LIMIT), "signature_errors": NOTES},
                        {"error": CODED_NOTE}, what="completions or an error"),
    "help": _answer({"display": HELP_PAGE}, {"error": error_info}, what="a help page or an error"),
    "graph": _answer({"graph": GRAPH}, {"error": CODED_NOTE}, what="a graph or an error"),  # data: views/graph.py draws it
    "tensors": _answer({"tensors": ROWS}, what="the table"),
    "trace": _answer({"trace": TRACE}, {"error": CODED_NOTE}, what="a trace or an error"),
    "trace_next": _answer({}, what="an empty reply"),
    "series": _answer({"series": SERIES}, {"error": CODED_NOTE}, what="numbers to plot or an error"),
    "inspect": _answer({"value": DESCRIBED}, what="a value's description"),
    "read_script": _answer({"source": text(LONG)}, {"error": ERROR_CODE}, what="a file's text or why not"),
    "task_state": _answer({"state": TASK_STATE}, what="a task's state"),
    "check": _answer({"check": CHECK_TENSOR}, what="a check"),
    "check_expr": _answer({"check": CHECK_EXPR}, what="a check"),
    "equivalent": _answer({"result": either(record({"equivalent": boolean}), record({"error": PARSE_ERROR}),
                                            what="a verdict or an error")}, what="a verdict"),
    "reset": _answer({"removed": items(NAME)}, what="the names removed"),
    "ping": _answer({"pid": count}, what="a pid"),
    "shutdown": _answer({}, what="an empty reply"),
}
READY = record({"v": literal(1), "type": literal("ready"), "pid": count, "sandbox": mapping(LAYER)},
               {"torch": NAME})  # its version; absent from the sympy-only kernel (kernel/symbolic_kernel.py)


def check(op: str | None, message: dict) -> dict:
    """`message` (a decoded reply to `op`; None: the ready line) checked against its schema, every
    string made visible. Raises Violation, whose words say what does not fit."""
    if op is None:
        return READY(message, ())
    if message.get("ok") is False:
        return FAILED(message, ())
    schema = REPLIES.get(op)
    if schema is None:
        raise Violation((), f"answers {op!r}, an op with no schema")
    return schema(message, ())
