"""Reading answers and keys as values, and comparing them tolerantly.

A learner may type ``7``, ``7.0``, ``tensor(7.)``, ``tensor([7.], grad_fn=<...>)``,
``None``, ``raises RuntimeError``, ``(2, 3)`` or ``MulBackward0``; the kernel
describes the key as JSON. Both become a :class:`Value` and :func:`matches`
compares them. Text is read by walking a whitelisted Python ``ast`` (never
evaluated): numbers, lists, tuples, ``tensor(...)``/``Size(...)``/``zeros(...)``/``ones(...)`` calls, names.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, replace

from gradrepl.views.numbers import number_text, shape_text

MAX_ANSWER = 4000  # characters: longer answers are read as plain text
MAX_FILL = 10_000  # elements: a bigger torch.zeros(...) is not read as numbers
DEFAULT_TOLERANCE = 1e-3

_RAISES = re.compile(r"^(?:it\s+)?(?:raises|raise|throws|fails|error|an error|exception|an exception)\b[:\s]*(?:an?\s+)?(\w+)?", re.I)
_ERROR_NAME = re.compile(r"^([A-Z]\w*(?:Error|Exception|Interrupt))\b")
_GRAD_FN_TAIL = re.compile(r",\s*grad_fn=<\s*(?:[\w.]+\.)?(\w*)[^>]*>")
# `<AddBackward0 object at 0x7f..>` as printed, or shortened by hand to `<AddBackward0 object>` / `<AddBackward0>`.
_OBJECT_REPR = re.compile(r"^<(?:[\w.]+\.)?(\w+)(?:\s+object)?(?:\s+at\s+0x[0-9a-fA-F]+)?>$")
# Words that say "an error" without naming a class.
_GENERIC_ERRORS = {"error", "exception", "err"}
# Other spellings torch accepts for the same dtype (torch.float is torch.float32).
_DTYPE_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32",
                  "short": "int16", "cfloat": "complex64", "cdouble": "complex128"}
_NAMED_CONSTANTS = {"true": True, "false": False, "yes": True, "no": False, "none": None,
                    "nan": math.nan, "inf": math.inf}


@dataclass(frozen=True)
class Value:
    """A comparable reading of an answer or a key.

    kind: "none" | "error" | "bool" | "numbers" | "name" | "text".
    numbers: flat values with ``shape`` (``[]`` for a scalar); error: ``name`` is the
    exception type or "" when not said; name: a bare identifier such as a dtype or
    a grad_fn class; text: anything else, normalised.
    """

    kind: str
    numbers: tuple[float, ...] = ()
    shape: tuple[int, ...] = ()
    name: str = ""
    dtype: str = ""
    flag: bool | None = None
    # What a tensor's repr says beyond its numbers: its grad_fn ("" not said; NO_GRAD_FN a key's leaf) and
    # requires_grad (None: not said). An answer that says them must say them as the key has them.
    grad_fn: str = ""
    requires_grad: bool | None = None
    listed: bool = False  # the key is a Python list or tuple: a bare number is not what it holds


NO_GRAD_FN = "-"


# How people write a formula by hand, as the symbolic reader spells it.
FORMULA_SIGNS = {"·": "*", "⋅": "*", "∙": "*", "×": "*", "−": "-", "÷": "/", "²": "**2", "³": "**3"}


def formula_text(text: str) -> str:
    """A typed formula in the reader's spelling: `dy/dx = 2x + 3` is its right-hand side, `2·x` is `2*x`.

    Text only (it is parsed by the kernel's safe reader, never evaluated here)."""
    left, equals, right = text.partition("=")
    if equals and "=" not in right and not left.endswith(("<", ">", "!")):
        text = right  # a label the learner wrote before the formula (dy/dx =, f'(x) =, y' =)
    for sign, spelled in FORMULA_SIGNS.items():
        text = text.replace(sign, spelled)
    return text.strip()


def read_answer(text: str) -> Value:
    """Read what a learner typed (or an option's answer) as a Value."""
    text = str(text).strip().rstrip(".") if not _looks_numeric(str(text).strip()) else str(text).strip()
    if not text:
        return Value("text")
    raised = _RAISES.match(text)
    if raised and not text.lower().startswith(("none", "true", "false")):
        named = raised.group(1) or ""
        specific = re.search(r"(error|exception|interrupt)$", named, re.I) and named.lower() not in _GENERIC_ERRORS
        return Value("error", name=named if specific else "")
    error_name = _ERROR_NAME.match(text)
    if error_name and error_name.group(0) == text:
        return Value("error", name=text)
    if len(text) > MAX_ANSWER:
        return Value("text", name=_norm_text(text))
    object_repr = _OBJECT_REPR.match(text)
    if object_repr:
        return Value("name", name=object_repr.group(1))
    grad_fn = _GRAD_FN_TAIL.search(text)
    try:
        tree = ast.parse(_GRAD_FN_TAIL.sub("", text), mode="eval")
        value = _read_node(tree.body)
    except (SyntaxError, ValueError, RecursionError, _Unreadable):
        return Value("text", name=_norm_text(text))
    if grad_fn and value.kind == "numbers":
        value = replace(value, grad_fn=grad_fn.group(1) or NO_GRAD_FN, requires_grad=True)
    return value


def read_key(description: dict) -> Value:
    """Read the kernel's description of a value (Session.inspect) as a Value."""
    kind = description.get("kind")
    if kind == "none":
        return Value("none")
    if kind == "error":
        return Value("error", name=str(description.get("type", "")))
    if kind == "bool":
        return Value("bool", flag=bool(description.get("value")))
    if kind == "number":
        return Value("numbers", numbers=(float(description["value"]),), shape=())
    if kind == "tensor":
        value = tensor_value(description.get("value") or {}, description.get("dtype", ""))
        flag = description.get("requires_grad")
        grad_fn = (str(description.get("grad_fn") or NO_GRAD_FN)) if "grad_fn" in description else ""
        return replace(value, grad_fn=grad_fn, requires_grad=flag if isinstance(flag, bool) else None)
    value = read_answer(str(description.get("repr", "")))
    if kind == "other" and description.get("type") in ("list", "tuple") and value.kind == "numbers":
        value = replace(value, listed=True)
    return value


def tensor_value(summary: dict, dtype: str = "") -> Value:
    """A tensor summary ({"shape", "values"} or stats for big ones) as a Value."""
    shape = tuple(int(n) for n in summary.get("shape", []))
    values = summary.get("values")
    if values is None:
        return Value("numbers", numbers=(), shape=shape, dtype=_short_dtype(dtype))
    flat = tuple(_flatten(values))
    return Value("numbers", numbers=flat, shape=shape, dtype=_short_dtype(dtype))


def matches(expected: Value, given: Value, tolerance: float | None = None,
            compare: tuple[str, ...] = ("value",)) -> bool:
    """Does ``given`` say the same thing as ``expected``, within tolerance?

    ``compare`` may hold "rounded": the answer rounds as the key does, to the decimals of ``tolerance``
    ("to one decimal": 3.03 is 3.0, and 3.1 is not)."""
    # An author's tolerance is absolute (as stated to the learner); the default also allows relative rounding.
    tol = (DEFAULT_TOLERANCE, DEFAULT_TOLERANCE) if tolerance is None else (0.0, float(tolerance))
    if expected.kind == "error":
        return given.kind == "error" and (not given.name or given.name.lower() == expected.name.lower())
    if expected.kind != given.kind:
        # A one-element tensor and a plain number say the same thing; so do True and tensor(True).
        if expected.kind == "numbers" and given.kind == "bool" and len(expected.numbers) == 1:
            return float(given.flag) == expected.numbers[0]
        return False
    if expected.kind == "none":
        return True
    if expected.kind == "bool":
        return expected.flag == given.flag
    if expected.kind == "numbers":
        return _numbers_match(expected, given, tol, compare)
    if expected.kind == "name":
        return same_name(expected.name, given.name)
    return expected.name == given.name


def same_name(expected: str, given: str) -> bool:
    """Names match ignoring case, a ``torch.`` prefix and a grad_fn's ``Backward0`` tail."""
    return _name_core(expected) == _name_core(given) and bool(_name_core(given))


_FORMS = {
    "numbers": "a value, such as 7, [1.0, 2.0] or tensor([1., 2.])",
    "name": "a name, such as torch.float32 or MulBackward0",
    "bool": "True or False",
}
_ANY_FORM = "a value (7, [1.0, 2.0]), a name (torch.float32, MulBackward0), None, True/False, or 'raises an error'"


def wrong_form(expected: Value | None, given: Value) -> str | None:
    """What form the question wants, when ``given`` is not an answer of that form (else None).

    An answer in the wrong form is not a wrong answer: ``[2, 3]`` for a dtype, a
    sentence for a number. Any form may be the learner's real belief about an
    error or a None, so only unreadable text is off-form for those.
    """
    if expected is None:
        return None
    wanted = _FORMS.get(expected.kind)
    if given.kind == "text" and expected.kind != "text":
        return f"That could not be read as an answer. Type {wanted or _ANY_FORM}."
    if expected.kind == "name" and given.kind in ("numbers", "bool"):
        return f"This asks for {wanted}, not a value."
    if expected.kind in ("numbers", "bool") and given.kind == "name":
        return f"This asks for {wanted}, not a name."
    return None


def show(value: Value) -> str:
    """A Value in the words a learner would type."""
    if value.kind == "none":
        return "None"
    if value.kind == "error":
        return f"raises {value.name or 'an error'}"
    if value.kind == "bool":
        return str(value.flag)
    if value.kind == "numbers":
        if not value.numbers:
            return f"a tensor of shape {shape_text(list(value.shape))}"
        if not value.shape:
            return number_text(float(value.numbers[0]), digits=6)
        return _nest(list(value.numbers), list(value.shape))
    return value.name


# -- reading --------------------------------------------------------------------

class _Unreadable(Exception):
    """The text parsed as Python but is not a value we know how to read."""


def _read_node(node: ast.AST) -> Value:
    if isinstance(node, ast.Constant):
        if node.value is None:
            return Value("none")
        if isinstance(node.value, bool):
            return Value("bool", flag=node.value)
        if isinstance(node.value, (int, float)):
            return Value("numbers", numbers=(float(node.value),), shape=())
        if isinstance(node.value, str):
            return read_answer(node.value) if node.value.strip() else Value("text")
        raise _Unreadable
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _read_node(node.operand)
        if inner.kind != "numbers" or inner.shape:
            raise _Unreadable
        sign = -1.0 if isinstance(node.op, ast.USub) else 1.0
        return Value("numbers", numbers=(sign * inner.numbers[0],), shape=())
    if isinstance(node, (ast.List, ast.Tuple)):
        return _read_sequence(node.elts)
    if isinstance(node, ast.Call):
        return _read_call(node)
    if isinstance(node, (ast.Name, ast.Attribute)):
        dotted = _dotted(node)
        constant = _NAMED_CONSTANTS.get(dotted.lower(), ...)
        if constant is None:
            return Value("none")
        if isinstance(constant, bool):
            return Value("bool", flag=constant)
        if constant is not ...:
            return Value("numbers", numbers=(float(constant),), shape=())
        return Value("name", name=dotted)
    raise _Unreadable


def _read_sequence(elements: list[ast.AST]) -> Value:
    items = [_read_node(e) for e in elements]
    if not items:
        return Value("numbers", numbers=(), shape=(0,))
    if any(item.kind not in ("numbers", "bool") for item in items):
        raise _Unreadable
    items = [Value("numbers", numbers=(float(i.flag),), shape=()) if i.kind == "bool" else i for i in items]
    inner = items[0].shape
    if any(item.shape != inner for item in items):
        raise _Unreadable  # ragged lists are not a tensor
    numbers = tuple(n for item in items for n in item.numbers)
    return Value("numbers", numbers=numbers, shape=(len(items), *inner))


def _read_call(node: ast.Call) -> Value:
    """tensor(...), torch.tensor(...), torch.Size([...]): the data and an optional dtype; torch.zeros(4, 3)
    and torch.ones((4, 3)): that many zeros or ones (a belief about a value, to be graded, not re-asked)."""
    name = _dotted(node.func).split(".")[-1].lower()
    if name in _FILLS:
        return _read_fill(node, _FILLS[name])
    if name not in ("tensor", "size", "parameter") or len(node.args) != 1:
        raise _Unreadable
    inner = _read_node(node.args[0])
    if inner.kind == "bool":
        inner = Value("numbers", numbers=(float(inner.flag),), shape=())
    if inner.kind != "numbers":
        raise _Unreadable
    dtype = ""
    requires_grad = None
    for keyword in node.keywords:
        if keyword.arg == "dtype" and isinstance(keyword.value, (ast.Name, ast.Attribute)):
            dtype = _short_dtype(_dotted(keyword.value))
        elif keyword.arg == "requires_grad" and isinstance(keyword.value, ast.Constant) \
                and isinstance(keyword.value.value, bool):
            requires_grad = keyword.value.value
    return Value("numbers", numbers=inner.numbers, shape=inner.shape, dtype=dtype, requires_grad=requires_grad)


_FILLS = {"zeros": 0.0, "ones": 1.0}


def _read_fill(node: ast.Call, fill: float) -> Value:
    sizes = node.args[0].elts if len(node.args) == 1 and isinstance(node.args[0], (ast.Tuple, ast.List)) \
        else node.args
    dims = [size.value for size in sizes if isinstance(size, ast.Constant) and type(size.value) is int]
    if len(dims) != len(sizes) or any(n < 0 for n in dims) or math.prod(dims) > MAX_FILL:
        raise _Unreadable
    dtype = next((_short_dtype(_dotted(k.value)) for k in node.keywords
                  if k.arg == "dtype" and isinstance(k.value, (ast.Name, ast.Attribute))), "")
    return Value("numbers", numbers=(fill,) * math.prod(dims), shape=tuple(dims), dtype=dtype)


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    raise _Unreadable


def _flatten(values) -> list[float]:
    if isinstance(values, list):
        return [n for item in values for n in _flatten(item)]
    return [float(values)]


# -- comparing --------------------------------------------------------------------

def _numbers_match(expected: Value, given: Value, tol: tuple[float, float], compare: tuple[str, ...]) -> bool:
    if "dtype" in compare and given.dtype and expected.dtype and given.dtype != expected.dtype:
        return False
    if not _same_repr_facts(expected, given):
        return False
    if "shape" in compare and given.shape != expected.shape:
        # Shape questions are answered with a list of sizes, e.g. (2, 3) for torch.Size([2, 3]).
        if not (given.shape == (len(expected.shape),) and tuple(int(n) for n in given.numbers) == expected.shape):
            return False
        return True
    if not expected.numbers:  # a big tensor: only its shape is known here
        return given.shape == expected.shape
    if len(given.numbers) != len(expected.numbers):
        return False
    # A flat list or a bare number may stand for any shape with as many elements.
    if len(given.shape) > 1 and given.shape != expected.shape:
        return False
    if "rounded" in compare and tol[1] > 0:
        return all(_rounds_alike(e, g, tol[1]) for e, g in zip(expected.numbers, given.numbers))
    return all(_close(e, g, tol) for e, g in zip(expected.numbers, given.numbers))


def _same_repr_facts(expected: Value, given: Value) -> bool:
    """What a typed repr says beyond the numbers agrees with the key: ``tensor(7., grad_fn=<AddBackward0>)``
    is not a leaf's .grad, and ``10`` alone is not a list holding 10."""
    if given.grad_fn and expected.grad_fn and not (
            given.grad_fn == expected.grad_fn == NO_GRAD_FN or same_name(expected.grad_fn, given.grad_fn)):
        return False
    if given.requires_grad is not None and expected.requires_grad is not None \
            and given.requires_grad != expected.requires_grad:
        return False
    return not (expected.listed and not given.shape)


def decimals_of(tolerance: float) -> int:
    """The decimals a tolerance asks for: 0.1 is one decimal, 0.001 three."""
    return max(0, math.ceil(-math.log10(tolerance) - 1e-9))


def _rounds_alike(expected: float, given: float, tolerance: float) -> bool:
    """``given`` rounds, to the tolerance's decimals, to what ``expected`` rounds to."""
    places = decimals_of(tolerance)
    half = 0.5 * 10.0 ** -places
    return abs(given - round(expected, places)) <= half * (1 + 1e-9)


def _close(expected: float, given: float, tol: tuple[float, float]) -> bool:
    if math.isnan(expected) or math.isnan(given):
        return math.isnan(expected) and math.isnan(given)
    relative, absolute = tol
    return math.isclose(expected, given, rel_tol=relative, abs_tol=absolute)


def _name_core(name: str) -> str:
    core = name.strip().strip("'\"<>").lower()
    core = re.sub(r"^torch\.", "", core)
    core = _DTYPE_ALIASES.get(core, core)
    return re.sub(r"backward\d*$", "", core)


def _short_dtype(dtype: str) -> str:
    return re.sub(r"^torch\.", "", dtype.strip())


def _norm_text(text: str) -> str:
    return " ".join(text.strip().strip("'\"").lower().split())


def _looks_numeric(text: str) -> bool:
    return bool(re.fullmatch(r"[-+]?\d+\.?", text))


def _nest(flat: list[float], shape: list[int]) -> str:
    if len(shape) <= 1:
        return "[" + ", ".join(number_text(float(x), digits=6) for x in flat) + "]"
    size = len(flat) // shape[0] if shape[0] else 0
    return "[" + ", ".join(_nest(flat[i * size:(i + 1) * size], shape[1:]) for i in range(shape[0])) + "]"
