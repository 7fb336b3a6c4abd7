"""Which learner statement made each autograd node, recorded as the forward pass runs.

A TorchFunctionMode that looks at every op doubles a tiny-op loop's time, and
writing into each node's ``metadata`` costs a few microseconds a node, so
nothing here runs per op or per node. Torch numbers every node it makes from one
counter (``node._sequence_nr()``; ``_get_sequence_nr()`` is the next number). A
step is compiled with one call added after each statement that can make nodes
(an assignment or an expression statement: ``a = x * w`` is followed by
``stamp(17)``, on the statement's own line), and the call writes down the
counter: every node numbered below it and at or above the previous statement's
mark was made by that statement. The last node a statement binding one name made
is that name's tensor (``a``): an expression's outermost op runs last. (Reading
the value's grad_fn to be sure would cost a Python object per assignment; a
statement such as ``a = y if (x * w).sum() > 0 else z`` is the rare case that
rule misnames.) A node is looked up only when a trace asks, by bisection.

Lines inside a loop or in a function the learner wrote are marked the same way,
so a node made in iteration 3 of a loop names the loop's inner line, and the step
is the one that ran it. The marks kept are bounded (``KEPT``); a node older than
the oldest mark names its step and the step's first statement. Nodes made by
backward itself (``create_graph=True``) name the statement that called it.
AccumulateGrad nodes belong to leaves, which no statement made.
"""

from __future__ import annotations

import ast
import bisect
import builtins

import torch

STAMP = "__gradrepl_made_by__"   # the builtin the added calls name (a name learner code never writes)
SOURCE_CAP = 200                 # characters of a statement kept
KEPT = 1 << 18                   # marks kept; past it the older half goes
_peek = torch._C._autograd._get_sequence_nr


class _Record:
    """Everything written down, in the order it happened; one per kernel (the counter is the process's)."""

    def __init__(self):
        self.statements: list[tuple[int, str, str | None]] = []  # (line, source, the one name it binds)
        self.marks: list[int] = []          # the counter after each statement ran, never decreasing
        self.by: list[int] = []             # the statement of each mark
        self.trimmed = 0                    # marks dropped so far (a mark's place counts from the first ever)
        self.forgotten = -1                 # nodes numbered below this lost their marks to KEPT
        self.steps: list[tuple[int, int, int, int]] = []  # (counter, step, first statement, place of next mark)

    def trim(self) -> None:
        half = len(self.marks) // 2
        self.forgotten = self.marks[half - 1]
        del self.marks[:half], self.by[:half]
        self.trimmed += half

    def statement_of(self, number: int, at: int) -> tuple[int, bool]:
        """The statement whose mark is the first above ``number`` in step ``at`` (else the step's first),
        and whether the node is the last that statement made."""
        first = self.steps[at][2]
        if number < self.forgotten:
            return first, False
        mark = bisect.bisect_right(self.marks, number)
        place = mark + self.trimmed
        if mark == len(self.marks) or at + 1 < len(self.steps) and place >= self.steps[at + 1][3]:
            return first, False  # no statement of that step marked it (made where no mark follows: a return)
        return self.by[mark], number == self.marks[mark] - 1


RECORD = _Record()


def install() -> None:
    """Make the added calls resolve: they name a builtin, so no learner namespace holds it."""
    setattr(builtins, STAMP, stamp)


def stamp(index: int, value=None):
    """After statement ``index``: mark the counter (``value``: a final expression's, passed through)."""
    record = RECORD
    record.marks.append(_peek())
    record.by.append(index)
    if len(record.marks) > KEPT:
        record.trim()
    return value


def begin_step(step: int, source: str, first_line: int = 1) -> None:
    """A step starts: nodes from here on that no mark covers name this step and its first statement."""
    install()  # again each step: learner code that deleted the builtin breaks only its own step
    line, text = _first_statement(source)
    RECORD.statements.append((line + first_line - 1, text, None))
    RECORD.steps.append((_peek(), step, len(RECORD.statements) - 1, len(RECORD.marks) + RECORD.trimmed))


def made_by(node) -> dict | None:
    """{"step", "line", "source", "tensor"} for the statement that made ``node`` (tensor: the learner's
    name when the node is the value a name was given, else None), or None: made before any step."""
    record = RECORD
    try:
        number = node._sequence_nr()
    except Exception:
        return None
    at = bisect.bisect_right(record.steps, (number, float("inf"))) - 1
    if at < 0:
        return None
    index, last = record.statement_of(number, at)
    line, source, name = record.statements[index]
    return {"step": record.steps[at][1], "line": line, "source": source, "tensor": name if last else None}


def instrument(tree: ast.Module, source: str, first_line: int = 1) -> ast.Module:
    """Add a mark after every assignment and expression statement, at that statement's line
    (``first_line``: where the step starts in its script, so a mark names the script's own line)."""
    _Marker(source, first_line - 1).visit(tree)
    return tree


def marked_expression(expression: ast.Expression, source: str, first_line: int = 1) -> ast.Expression:
    """A step's final expression, its value passed through a mark (the echo still shows it)."""
    index = _register(expression.body, source, first_line - 1, None)
    call = _call(index, expression.body)
    return ast.fix_missing_locations(ast.copy_location(ast.Expression(call), expression))


class _Marker(ast.NodeTransformer):
    def __init__(self, source: str, offset: int):
        self.source = source
        self.offset = offset

    def generic_visit(self, node):
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(node, field, None)
            if isinstance(statements, list) and statements and isinstance(statements[0], ast.stmt):
                setattr(node, field, self._marked(statements))
        return node

    def _marked(self, statements: list) -> list:
        out = []
        for statement in statements:
            out.append(statement)
            if isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)):
                names = _assigned_names(statement)
                index = _register(statement, self.source, self.offset, names[0] if len(names) == 1 else None)
                marked = ast.Expr(_call(index, None))
                for node in ast.walk(marked):  # the statement's own place: a traceback never points elsewhere
                    ast.copy_location(node, statement)
                out.append(marked)
        return out


def _register(node: ast.AST, source: str, offset: int, name: str | None) -> int:
    text = ast.get_source_segment(source, node) or ""
    text = text if len(text) <= SOURCE_CAP else text[:SOURCE_CAP - 1] + "…"
    RECORD.statements.append((node.lineno + offset, text, name))
    return len(RECORD.statements) - 1


def _call(index: int, value: ast.expr | None) -> ast.Call:
    args = [ast.Constant(index)] + ([value] if value is not None else [])
    call = ast.Call(func=ast.Name(STAMP, ast.Load()), args=args, keywords=[])
    if value is not None:
        for node in ast.walk(call):
            if not hasattr(node, "lineno"):
                ast.copy_location(node, value)
    return call


def _assigned_names(statement: ast.stmt) -> list[str]:
    """The plain names an assignment binds (``a``, ``a, b``); attributes and subscripts bind none here
    (reading them again could run the learner's code)."""
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, (ast.AugAssign, ast.AnnAssign)) and statement.value is not None:
        targets = [statement.target]
    else:
        return []
    names: list[str] = []
    for target in targets:
        for node in ast.walk(target):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id not in names:
                names.append(node.id)
    return names


def _first_statement(source: str) -> tuple[int, str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return 1, source.splitlines()[0] if source else ""
    if not tree.body:
        return 1, ""
    statement = tree.body[0]
    text = ast.get_source_segment(source, statement) or ""
    return statement.lineno, text if len(text) <= SOURCE_CAP else text[:SOURCE_CAP - 1] + "…"
