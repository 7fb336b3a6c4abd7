"""Rules about a task attempt's code, read with ``ast`` (never run, never evaluated).

Three kinds:

- **named rules** a lesson asks for where its prompt names a form
  (``gradient-argument``: "by passing a gradient argument"; ``no-inplace``:
  "without an in-place op"): the state alone cannot tell ``y.sum().backward()``
  from ``y.backward(torch.ones_like(y))``; ``backward-fills-grad``: "call
  backward", where ``x.grad = torch.autograd.grad(y, x)[0]`` leaves the same state;
- **reaching in**: an attempt that imports sys, gc or gradrepl, calls exec or
  getattr, touches dunder attributes, or walks frames (``gen.gi_frame.f_back``,
  ``tb_next``, ``f_globals``) could rewrite the reader of its own state
  (kernel/inspect/task_state.py); no task needs any of it, so the attempt is
  refused before its state is believed;
- **patching**: an attempt that assigns an attribute other than a tensor's
  own state (``.grad``, ``.data``, ``.requires_grad``) replaces part of torch
  or of an object (``torch.Tensor.backward = ...``, ``opt.step = ...``): the
  buggy code then runs "right" without being fixed;
- **typed-in answers**: a number in the attempt that the solution's state
  holds and the lesson never wrote (``x3.grad = torch.tensor(12.)`` where
  12 is computed, weights copied in by hand) is the answer typed, not made.

  A number typed over a gradient (``x.grad.sub_(14)``, ``w.grad += 2``) is the
  same: it makes the value come out only for the gradient read off the screen.

Each returns what it found (a piece of the attempt, for the message), or None.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable, Iterable

NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")

BLOCKED_MODULES = {"sys", "gc", "builtins", "ctypes", "importlib", "inspect", "os", "gradrepl", "types",
                   "marshal", "pickle", "runpy", "threading", "_thread", "signal", "subprocess", "code",
                   "codeop", "posix", "weakref", "dis", "traceback", "faulthandler"}
BLOCKED_CALLS = {"exec", "eval", "compile", "__import__", "globals", "locals", "vars", "getattr", "setattr",
                 "delattr", "breakpoint", "attrgetter", "methodcaller"}
# Frames and code objects: a generator's, coroutine's or traceback's frame walks up (f_back) to the kernel's own
# frames, whose f_globals hold the reader of the task's state (a blind attacker replaced it there).
FRAME_ATTRIBUTES = {"gi_frame", "cr_frame", "ag_frame", "tb_frame", "tb_next", "f_back", "f_globals", "f_locals",
                    "f_builtins", "f_code", "f_trace", "gi_code", "cr_code", "ag_code", "_getframe", "currentframe",
                    "walk_stack", "walk_tb", "extract_stack", "print_stack", "format_stack",
                    "attrgetter", "methodcaller", "get_field"}  # an attribute looked up by a computed name
# Attributes that lead to a module's innards from anything that imported it (torch.autograd.sys ...).
BLOCKED_ATTRIBUTES = BLOCKED_MODULES | FRAME_ATTRIBUTES | {"_engine_run_backward", "_execution_engine"}
ALLOWED_DUNDERS = {"__init__"}  # a Module subclass calls super().__init__()
IN_PLACE_ALLOWED = {"requires_grad_"}  # changes a flag, not a tensor's data
TYPED_RTOL = 1e-3  # a number typed with four digits matches the value it copies


def _source(code: str, node: ast.AST) -> str:
    return (ast.get_source_segment(code, node) or type(node).__name__).strip().splitlines()[0][:80]


def _parse(code: str) -> ast.Module | None:
    try:
        return ast.parse(code)
    except SyntaxError:
        return None


def called_names(code: str) -> set[str]:
    """The names code calls (the last part of ``h.retain_grad``), parsed, never run; none if it does not parse."""
    tree = _parse(code)
    calls = set()
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute):
                calls.add(func.attr)
            elif isinstance(func, ast.Name):
                calls.add(func.id)
    return calls


def keyword_flags(code: str) -> set[str]:
    """The keyword arguments code passes a constant (``retain_graph=True``), written ``name=value``;
    parsed, never run; none if it does not parse."""
    tree = _parse(code)
    if tree is None:
        return set()
    return {f"{keyword.arg}={keyword.value.value!r}" for node in ast.walk(tree) if isinstance(node, ast.Call)
            for keyword in node.keywords if keyword.arg and isinstance(keyword.value, ast.Constant)}


# -- named rules -------------------------------------------------------------------------

def _passes_gradient(code: str, tree: ast.Module) -> str | None:
    """Some backward call passes a gradient: y.backward(g), y.backward(gradient=g),
    torch.autograd.backward(y, g) or (..., grad_tensors=g)."""
    seen = False
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if node.func.attr != "backward":
            continue
        seen = True
        through_autograd = isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "autograd"
        args = node.args[1:] if through_autograd else node.args
        names = {"grad_tensors"} if through_autograd else {"gradient"}
        if args or any(k.arg in names for k in node.keywords):
            return None
    return "no backward call passes a gradient" if seen else "there is no backward call"


def _changes_in_place(code: str, tree: ast.Module) -> str | None:
    """The first in-place change: a method ending in one underscore (mul_, add_; called or only
    named), `x *= 2`, `x[0] = ...`, an `out=` argument, or `x.data = ...`."""
    def in_place(attribute: ast.AST) -> bool:
        name = attribute.attr if isinstance(attribute, ast.Attribute) else ""
        return name.endswith("_") and not name.endswith("__") and name not in IN_PLACE_ALLOWED

    for node in ast.walk(tree):  # a call is met before its method: the call, as written, is what ran
        if isinstance(node, ast.Call) and in_place(node.func):
            return _source(code, node)
        if in_place(node):  # only named: `m = s.mul_; m(2)` is the same op
            return _source(code, node)
        if isinstance(node, ast.Call) and any(k.arg == "out" for k in node.keywords):
            return _source(code, node)
        if isinstance(node, ast.AugAssign):
            return _source(code, node)
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Subscript) or (isinstance(t, ast.Attribute) and t.attr == "data")
                for t in node.targets):
            return _source(code, node)
    return None


def _uses_data(code: str, tree: ast.Module) -> str | None:
    """The first use of ``.data`` (``w.data -= ...``, ``d = w.data``, ``getattr(w, 'data')``): a write through
    it changes the values behind autograd's back, and a no-op in-place op beside it (``w.detach().add_(0)``)
    moves the version counter the state check reads; a task about writes autograd sees needs no .data."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "data":
            return _source(code, node)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "setattr") \
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value == "data":
            return _source(code, node)
    return None


def _backward_fills_grad(code: str, tree: ast.Module) -> str | None:
    """Some call is a backward (``y.backward()``, ``torch.autograd.backward(y)``) and nothing writes a
    ``.grad`` but backward: no ``x.grad = ...`` (``= None`` clears it for backward to fill), ``+=``,
    ``x.grad, = ...``, spelled ``setattr(x, 'grad', ...)``, ``x.grad[0] = ...`` or in-place method on it but
    ``zero_()``. A gradient ``torch.autograd.grad`` returned and stored in ``.grad`` holds the same numbers,
    and a backward call beside it left unused would not make it backward's."""
    cleared = {id(target) for node in ast.walk(tree) if isinstance(node, ast.Assign)
               and isinstance(node.value, ast.Constant) and node.value.value is None for target in node.targets}
    lines = code.splitlines()
    for node in ast.walk(tree):
        spelled = _spelled_setattr(node)
        written = spelled is not None and not (isinstance(node.args[2], ast.Constant) and node.args[2].value is None)
        written = written or (isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, ast.Store)
                              and id(node) not in cleared)
        if written and _names_grad(spelled if spelled is not None else node):
            return f"`{lines[node.lineno - 1].strip()[:80]}` writes .grad itself"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _names_grad(node.func.value) \
                and node.func.attr.endswith("_") and not node.func.attr.endswith("__") and node.func.attr != "zero_":
            return f"`{_source(code, node)}` changes .grad itself"
    if "backward" not in called_names(code):
        return "there is no backward call"
    return None


TRANSFORMS = {"grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize"}


def _calls_transform(code: str, tree: ast.Module) -> str | None:
    """Some call is of a torch.func transform (``torch.func.jacrev(h)``, or ``jacrev(h)`` imported from it),
    whose result is then called or used: the value is made by the transform, not by a formula."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            through = not isinstance(func, ast.Attribute) or _source(code, func.value).endswith("func")
            if name in TRANSFORMS and through:
                return None
    return "no torch.func transform is called: the value is written out, not computed by a transform"


def _transforms_only(code: str, tree: ast.Module) -> str | None:
    """No formula of the attempt's own beside the transforms: no arithmetic on anything but numbers and
    no method or module function called but a torch.func transform (``grad(wave)(t) * 0 + -4 *
    torch.sin(2 * t)`` writes wave's second derivative by hand). Functions called by name (the task's
    own, a transform imported, ``range``), a lambda that only calls them, and a torch constructor of names
    and constants (``torch.ones_like(x)``, a jvp's tangent) are allowed."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.BinOp, ast.UnaryOp)) and _constant(node) is None:
            return f"`{_source(code, node)}` is a formula of your own"
        if isinstance(node, ast.AugAssign):
            return f"`{_source(code, node)}` is a formula of your own"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr not in TRANSFORMS \
                and not _input_method(node) and not _constructed(node):
            return f"`{_source(code, node)}` computes with torch itself, beside the transforms"
    return None


# Constructors that build a tangent or an input (torch.ones_like(x), torch.tensor(1.0)): fed names and constants
# only they compute nothing of the answer (a typed number is still the typed-number rule's).
CONSTRUCTORS = {"tensor", "as_tensor", "ones", "zeros", "full", "eye", "ones_like", "zeros_like", "full_like"}


def _constructed(node: ast.Call) -> bool:
    """``node`` is ``torch.ones_like(x)`` (a torch constructor) whose arguments are names, constants, tuples of
    them, dotted names (``dtype=torch.float32``) or inputs as they are (``x.detach()``): no formula inside."""
    def plain(arg: ast.AST) -> bool:
        if isinstance(arg, (ast.Tuple, ast.List)):
            return all(plain(a) for a in arg.elts)
        if isinstance(arg, ast.Call):
            return _input_method(arg)
        while isinstance(arg, ast.Attribute):
            arg = arg.value
        return isinstance(arg, (ast.Name, ast.Constant)) or _constant(arg) is not None

    func = node.func
    return isinstance(func, ast.Attribute) and func.attr in CONSTRUCTORS and isinstance(func.value, ast.Name) \
        and func.value.id == "torch" and all(plain(a) for a in [*node.args, *(k.value for k in node.keywords)])


# Methods that hand a transform its input as it is (x.detach() where x requires grad): no formula of one's own.
INPUT_METHODS = {"detach", "clone", "float", "requires_grad_"}


def _input_method(node: ast.Call) -> bool:
    """``node`` is ``x.detach()`` (or a chain of such methods) on a plain name, with constant arguments only."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in INPUT_METHODS \
            and not node.keywords and all(isinstance(a, ast.Constant) for a in node.args):
        node = node.func.value
    return isinstance(node, ast.Name)


def _calls_autograd(code: str, tree: ast.Module) -> str | None:
    """The first use of torch.autograd (``torch.autograd.grad(g1, x, create_graph=True)``, a name imported from
    it): where the prompt asks for torch.func transforms, that road is another, whatever it computes."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "autograd":
            return f"`{_source(code, node)}` is torch.autograd"
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if any(name.startswith("torch.autograd") for name in names):
                return f"`{_source(code, node)}` is torch.autograd"
    return None


RULES: dict[str, tuple[str, Callable[[str, ast.Module], str | None]]] = {
    "gradient-argument": ("a backward call passes a gradient argument", _passes_gradient),
    "no-inplace": ("no tensor is changed in place", _changes_in_place),
    "no-data": ("no tensor is read or written through .data", _uses_data),
    "backward-fills-grad": ("a backward call fills .grad, and no code writes it", _backward_fills_grad),
    "calls-transform": ("a torch.func transform computes it", _calls_transform),
    "transforms-only": ("only torch.func transforms and the task's functions compute it", _transforms_only),
    "no-autograd": ("no torch.autograd call: torch.func transforms compute it", _calls_autograd),
}


def rule_breach(rule: str, code: str) -> str | None:
    """What breaks ``rule`` in ``code`` (None: it holds). Code that does not parse breaks every rule."""
    tree = _parse(code)
    if tree is None:
        return "the code does not parse"
    return RULES[rule][1](code, tree)


# -- reaching in -------------------------------------------------------------------------

def _spelled_setattr(node: ast.AST) -> ast.Attribute | None:
    """``setattr(w, 'requires_grad', v)`` as the attribute it assigns (``w.requires_grad``), when the name
    is a literal identifier: that is the assignment ``w.requires_grad = v`` spelled as a call, judged as
    one by ``patches``. A name computed at run time could be anything, so it stays reaching in."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr"
            and len(node.args) == 3 and not node.keywords):
        return None
    name = node.args[1]
    if not (isinstance(name, ast.Constant) and isinstance(name.value, str) and name.value.isidentifier()):
        return None
    return ast.copy_location(ast.Attribute(value=node.args[0], attr=name.value, ctx=ast.Store()), node)


def reaches_in(code: str) -> str | None:
    """The first piece of ``code`` that could reach the tutor's own reader of the state."""
    tree = _parse(code)
    if tree is None:
        return None  # a syntax error fails the attempt anyway
    spelled = {id(node.func) for node in ast.walk(tree) if _spelled_setattr(node) is not None}
    for node in ast.walk(tree):
        if id(node) in spelled:
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if any(name.split(".")[0] in BLOCKED_MODULES for name in names):
                return _source(code, node)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in BLOCKED_CALLS \
                and id(node.func) not in spelled:
            return _source(code, node)
        elif isinstance(node, ast.Attribute) and (_dunder(node.attr) or node.attr in BLOCKED_ATTRIBUTES):
            return _source(code, node)
        elif isinstance(node, ast.Name) and (_dunder(node.id) or node.id in BLOCKED_CALLS):
            return _source(code, node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _dunder(node.name):
            return f"def {node.name}"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _names_blocked(node.value):
            return repr(node.value)  # a name spelled for a lookup by text (attrgetter("f_back"))
        elif isinstance(node, (ast.BinOp, ast.JoinedStr)) and _names_blocked(_joined_text(node) or ""):
            return _source(code, node)  # ... or joined from pieces ("gi_" + "frame")
    return None


# Attributes an attempt may assign: a tensor's own state, which tasks are about; never on a module the
# lessons import (torch.autograd.grad = ... is torch patched, not a gradient set).
TENSOR_STATE = {"grad", "data", "requires_grad"}
MODULE_NAMES = {"torch", "nn", "F", "optim", "np", "numpy", "math", "functools", "itertools", "operator", "random"}


def patches(code: str) -> str | None:
    """The first assignment in ``code`` to an attribute that is no tensor state (None: there is none)."""
    tree = _parse(code)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        elif _spelled_setattr(node) is not None:
            targets = [_spelled_setattr(node)]
        else:
            continue
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, ast.Attribute) and isinstance(part.ctx, (ast.Store, ast.Del)) \
                        and (part.attr not in TENSOR_STATE or _root_name(part) in MODULE_NAMES):
                    return _source(code, node)
    return None


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _joined_text(node: ast.AST) -> str | None:
    """The text of string constants joined by `+` or in an f-string of constants only (None: not that)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _joined_text(node.left), _joined_text(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.JoinedStr):
        parts = [_joined_text(v.value if isinstance(v, ast.FormattedValue) else v) for v in node.values]
        return None if None in parts else "".join(parts)
    return None


def _names_blocked(text: str) -> bool:
    """``text`` spells a dunder or a frame attribute, alone or in a dotted path ("gi_frame.f_back")."""
    return any(_dunder(part) or part in FRAME_ATTRIBUTES for part in text.strip().split("."))


def _dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__") and name not in ALLOWED_DUNDERS


# -- gradient hooks ------------------------------------------------------------------------

# A hook rewrites a gradient as backward runs (`x.register_hook(lambda g: g * 3)`): the number comes out
# right while the code that makes it is still wrong, and the state read afterwards cannot tell.
HOOK_CALLS = {"register_hook", "register_prehook", "register_post_accumulate_grad_hook",
              "register_full_backward_hook", "register_full_backward_pre_hook", "register_backward_hook",
              "register_multi_grad_hook", "saved_tensors_hooks", "save_on_cpu",
              "register_module_full_backward_hook", "register_module_full_backward_pre_hook",
              "register_module_backward_hook"}


def registers_hook(code: str) -> str | None:
    """The first piece of ``code`` that registers a gradient hook (called or only named)."""
    tree = _parse(code)
    if tree is None:
        return None
    for node in ast.walk(tree):
        name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
        if name in HOOK_CALLS:
            return _source(code, node)
    return None


# -- typed-in answers ----------------------------------------------------------------------

def lesson_numbers(texts: Iterable[str]) -> set[float]:
    """Numbers the lesson itself writes (prompt, code, solution, hints): a learner may type those."""
    found = {0.0, 1.0, -1.0}
    for text in texts:
        for match in NUMBER.findall(text or ""):
            try:
                found.add(float(match))
            except ValueError:
                pass
    return found


def typed_answer(code: str, expected: Iterable[float], allowed: set[float], seeds: Iterable[float] = ()) -> str | None:
    """A number written in ``code`` that equals (in size) one the solution's state holds, or one of its
    backward seeds, and the lesson never wrote.

    Numbers only compared or printed (``assert w.grad == 12``, ``print(...)``) and loop counts
    (``range(100)``) are not answers; constant arithmetic (``24 / 2``) is read as its value. A seed may be
    computed from the lesson's numbers (``torch.full_like(y, 1 / 3)``), not typed as a decimal (``0.33333``)."""
    tree = _parse(code)
    if tree is None:
        return None
    # By size, not sign: the operator beside a number flips it for free (`w += lr * 4.0278` for the
    # gradient -4.0278 the screen showed), so a lesson's -2 allows 2 too.
    wanted = [abs(e) for e in expected if math.isfinite(e)]
    seeded = [abs(e) for e in seeds if math.isfinite(e)]

    def given(value: float) -> bool:
        return any(math.isclose(abs(value), abs(a), rel_tol=1e-9, abs_tol=1e-12) for a in allowed)

    def near(value: float, numbers: list[float]) -> bool:
        return any(math.isclose(abs(value), e, rel_tol=TYPED_RTOL, abs_tol=1e-6) for e in numbers)

    found = []
    for node, value in _written_numbers(tree):
        if given(value):
            continue
        if near(value, wanted) or (near(value, seeded) and not all(given(leaf) for leaf in _leaves(node))):
            found.append(node)
    first = min(found, key=lambda n: (n.lineno, n.col_offset), default=None)  # as the learner reads it
    return None if first is None else _source(code, first)


def _leaves(node: ast.AST) -> list[float]:
    """The numbers a constant expression is written with (``1 / 3``: 1 and 3; ``float('0.333')``: 0.333)."""
    leaves = []
    for part in ast.walk(node):
        if isinstance(part, ast.Constant) and isinstance(part.value, (int, float)) and not isinstance(part.value, bool):
            leaves.append(float(part.value))
        elif isinstance(part, ast.Constant) and isinstance(part.value, (str, bytes)):
            leaves.extend(_text_numbers(part.value))
    return leaves


def _written_numbers(tree: ast.AST):
    """(node, value) of each number the code writes, skipping what only tests or counts. A number written
    as text is written too (``float("2.0139")``, ``'2.01,3.50'.split(',')``, ``f'{3.5}'``, a hex float):
    a conversion turns it into the same value."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Compare, ast.Assert)):
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("print", "range"):
            continue
        if isinstance(node, ast.Subscript):  # an index counts (x[0]); what is indexed may hold a typed number
            stack.append(node.value)
            continue
        if isinstance(node, ast.FormattedValue):  # `{v:.4f}`: the spec is a format, not a number
            stack.append(node.value)
            continue
        value = _constant(node)
        if value is not None:
            yield node, value
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
            for number in _text_numbers(node.value):
                yield node, number
            continue
        stack.extend(ast.iter_child_nodes(node))


def _text_numbers(text: str | bytes) -> list[float]:
    """The numbers a string holds, as a conversion would read them: each decimal in it, and the whole text
    as float() or float.fromhex() parses it (parsed, never evaluated)."""
    if isinstance(text, bytes):
        text = text.decode("latin-1")
    found = [float(match) for match in NUMBER.findall(text)]
    whole = _text_value(text)
    return found + ([whole] if whole is not None else [])


def _text_value(text: str | bytes, base: int | None = None) -> float | None:
    """The number float(), int(text, base) or float.fromhex() makes of ``text`` (None: none of them)."""
    if isinstance(text, bytes):
        text = text.decode("latin-1")
    if len(text) > 400:  # int() of a huge digit string is slow, and no answer is that long
        return None
    readers = [lambda t: float(int(t, base))] if base is not None else [float, float.fromhex, lambda t: float(int(t, 0))]
    for reader in readers:
        try:
            value = reader(text.strip())
        except (ValueError, OverflowError):
            continue
        if math.isfinite(value):
            return value
    return None


# str -> number conversions of a written text: read as the number they make (`int('201391') / 100000`).
CONVERSIONS = {"float", "int", "fromhex", "Decimal", "Fraction"}


def _converted(node: ast.Call) -> float | None:
    func = node.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    if name not in CONVERSIONS or not node.args or node.keywords and name != "int":
        return None
    text = node.args[0]
    if not (isinstance(text, ast.Constant) and isinstance(text.value, (str, bytes))):
        return None
    base = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "base"), None)
    if base is None:
        return _text_value(text.value)
    if isinstance(base, ast.Constant) and type(base.value) is int and (base.value == 0 or 2 <= base.value <= 36):
        return _text_value(text.value, base.value)
    return None


def _constant(node: ast.AST) -> float | None:
    """The value of a constant arithmetic expression of numbers (never evaluated as code)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.Call):
        return _converted(node)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _constant(node.operand)
        return None if inner is None else (-inner if isinstance(node.op, ast.USub) else inner)
    if isinstance(node, ast.BinOp):
        left, right = _constant(node.left), _constant(node.right)
        if left is None or right is None:
            return None
        try:
            if isinstance(node.op, ast.Add):
                return left + right
            if isinstance(node.op, ast.Sub):
                return left - right
            if isinstance(node.op, ast.Mult):
                return left * right
            if isinstance(node.op, ast.Div):
                return left / right
            if isinstance(node.op, ast.Pow) and abs(right) <= 64 and abs(left) < 1e6:
                return float(left ** right)
        except (ZeroDivisionError, OverflowError, TypeError):
            return None
    return None


SHIFTS = {"add_", "sub_", "subtract_"}  # in-place methods that shift a tensor by their argument


def shifts_grad(code: str) -> str | None:
    """The first in-place shift of a ``.grad`` by a typed number (``x.grad.sub_(14)``, ``x.grad -= 14``,
    ``w.grad.data.add_(torch.tensor(2.))``): no task's gradient is made by adding a constant to it."""
    tree = _parse(code)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SHIFTS:
            target, amounts = node.func.value, [*node.args, *(k.value for k in node.keywords)]
        elif isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Add, ast.Sub)):
            target, amounts = node.target, [node.value]
        else:
            continue
        if _names_grad(target) and any(_typed_number(amount) for amount in amounts):
            return _source(code, node)
    return None


def _names_grad(node: ast.AST) -> bool:
    """``node`` is a .grad (or a view of one: x.grad.data, x.grad[0])."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Attribute) and node.attr == "grad":
            return True
        node = node.value
    return False


def _typed_number(node: ast.AST) -> bool:
    """``node`` holds a written number other than 0 (shifting by 0 changes nothing)."""
    for part in ast.walk(node):
        value = _constant(part)
        if value is not None and value != 0:
            return True
    return False
