"""The shapes of what crosses the wall, named for the frontend that reads them: one TypedDict per
piece of a reply. reply_schema.py builds its checks of these pieces from them (`shaped`: which keys
there are, and which are required, come from here; the schema adds types and sizes), so each piece is
described once, and a key the schema and its shape disagree on fails at import.

No `from __future__ import annotations` here: TypedDict reads NotRequired from real annotations.
"""

from typing import Any, Literal, NotRequired, TypedDict

Dims = list[int | str]   # a shape: whole numbers, or a symbolic size's text
Scalar = float | int | bool | str | None  # one value of a tensor ("nan", "(1+2j)" as text)


class Summary(TypedDict):
    """A tensor's values at a glance (kernel/inspect/summary.py)."""
    shape: Dims | None
    values: NotRequired[Any]          # nested lists of Scalar, for a small tensor
    norm: NotRequired[Scalar]
    min: NotRequired[Scalar]
    max: NotRequired[Scalar]
    mean: NotRequired[Scalar]


class Row(TypedDict):
    """One live tensor of the panel (kernel/inspect/snapshot.py)."""
    name: str
    aliases: list[str]
    shape: Dims | None
    dtype: str
    device: str
    requires_grad: bool
    is_leaf: bool
    grad_fn: str | None
    retains_grad: bool
    version: int
    changed: bool
    grad: Summary | None
    value: Summary | None
    saved_bytes: int
    inspect_error: NotRequired[str]   # why this row could not be read


class Saved(TypedDict):
    """A tensor a graph node saved for backward."""
    name: str
    shape: Dims | None
    freed: bool
    tensor: NotRequired[str]          # the live tensor it is, by row name
    value: NotRequired[str]


class GraphNode(TypedDict):
    id: int
    grad_fn: str                      # the node's class name (MulBackward0), as a row's grad_fn
    shapes: list[Dims]
    leaf: str | None
    saved: list[Saved]
    saved_bytes: int


class Graph(TypedDict):
    """A tensor's autograd graph (kernel/inspect/graph.py; op `graph`)."""
    root: str
    kind: Literal["graph", "leaf", "constant"]
    nodes: list[GraphNode]
    edges: list[list[int]]            # pairs of node ids
    truncated: bool
    freed: bool


class MadeBy(TypedDict):
    """The learner's statement that made a node in the forward pass (kernel/inspect/made_by.py)."""
    step: int
    line: int                         # in the cell (REPL) or the script (run, trace)
    source: str                       # the statement as written
    tensor: str | None                # the learner's name of the tensor it produced; None inside an expression
    module: NotRequired[str]          # the module whose parameter it used, when the statement called it (net[0])


# "from" is a keyword: the functional form
Contribution = TypedDict("Contribution", {"from": str, "values": Summary | None})


class TraceNode(TypedDict):
    order: int | None                 # when backward reached it
    id: str
    name: str
    next: list[str]
    grad_outputs: list[Summary | None] | None
    grad_inputs: list[Summary | None] | None
    made_by: MadeBy | None            # None: a leaf's AccumulateGrad, or no learner statement made it
    formulas: list[str | None] | None  # what each input receives, over the learner's names (None: none shown)
    leaf: NotRequired[str]
    label: NotRequired[str]           # the output's name in the formulas (a, or (x * w) when unnamed)
    inputs: NotRequired[list[str]]    # each input's name, in grad_inputs' order (c: a constant)
    in_table: NotRequired[bool]       # false: an op with no formula in the table
    derivatives: NotRequired[list[str | None]]   # d out/d input where elementwise
    terms: NotRequired[dict[str, Summary]]       # the saved values the formulas name
    contributions: NotRequired[list[Contribution]]  # several nodes feed this one: their gradients, which add up


class Trace(TypedDict):
    """Backward previewed node by node (kernel/inspect/trace.py; op `trace`)."""
    root: str
    nodes: list[TraceNode]
    capped: bool
    note: str | None
    preview: bool                     # true: op `trace` ran it on the side, no .grad changed; false: %trace STATEMENT


class CheckElement(TypedDict):
    index: list[int]
    symbol: str
    symbolic: str
    expected: float | None
    grad: float | None


class CheckLeaf(TypedDict):
    name: str
    shape: Dims
    grad: list[float] | None
    elements: list[CheckElement]
    status: str
    note_code: str | None         # the note's data; views/check.py words it into "note"
    note_names: dict[str, str] | None


class Check(TypedDict):
    """%check of a tensor whose formula was recorded (kernel/symbolic/crosscheck.py; op `check`); the
    other answers are {"error": ...} and {"name", "kind", "problem"}; views/check.py words it."""
    name: str
    kind: Literal["tensor"]
    shape: Dims
    formula: str | list[str]
    of: str | None
    leaves: list[CheckLeaf]
    remarks: list[dict]           # notes as data (note_code, note_names); views/check.py words them into "notes"
    agree: bool | None


class GraphReply(TypedDict):
    graph: Graph  # data: views/graph.py draws it


class TraceReply(TypedDict):
    trace: Trace


class Series(TypedDict):
    """Numbers to plot (kernel/inspect/series.py; op `series`): a list's or a tensor's elements, each
    point the mean of `every` of them (None: no finite number among them)."""
    length: int
    values: list[float | None]
    every: int


class SeriesReply(TypedDict):
    series: Series


class Value(TypedDict):
    """A value described (op `inspect`): `kind` says which of the other keys it has ("tensor": shape,
    dtype, device, requires_grad, is_leaf, grad_fn, value, grad; "bool", "number", "str": value;
    "other": type; "error": type, message)."""
    kind: str
    repr: str
    shape: NotRequired[Dims]
    dtype: NotRequired[str]
    device: NotRequired[str]
    requires_grad: NotRequired[bool]
    is_leaf: NotRequired[bool]
    grad_fn: NotRequired[str | None]
    value: NotRequired[Any]
    grad: NotRequired[Summary | None]
    type: NotRequired[str]
    message: NotRequired[str]
