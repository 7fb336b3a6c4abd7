"""A recorded backward told in the learner's names: what each node's output is called, the formula each
input receives, the saved values it uses, and where several gradients meet.

Facts only (strings over the learner's names, summaries of values); views/trace.py says them. A
formula is kept only for the inputs where the table's evaluation (formulas.py) equals what the
engine sent, checked while the node's saved values are still there (in its hook).
"""

from __future__ import annotations

import string

import torch

from gradrepl.kernel.inspect import formulas
from gradrepl.kernel.inspect.summary import summarize

ACCUMULATE = "AccumulateGrad"
LABEL_CAP = 32        # characters of an expression used as a name; longer ones are the op's name
CONSTANT = "const"    # an input that needs no gradient and is no single number we can show
INPUTS = "abc"        # placeholders of a rule's inputs, in next_functions order
TENSOR_SLOTS = ("g", "out", *INPUTS)
VIEWS = frozenset({"TBackward0", "TransposeBackward0", "PermuteBackward0", "ViewBackward0", "ExpandBackward0"})


class Story:
    def __init__(self, nodes: list, records: dict, names: dict[int, str] | None = None):
        self.nodes = nodes
        self.records = records
        self.names = names or {}  # id -> the learner's name: a saved constant (a target) is called by it
        self.checked: dict = {}   # node -> (agree per input, numbers by placeholder, term summaries)
        self.constants: dict = {}  # node -> placeholder -> a constant input's name, read while it is saved
        self._labels: dict = {}

    # -- while backward runs ----------------------------------------------------------------
    def check(self, node, grad_inputs, grad_outputs) -> None:
        rule = formulas.rule_for(node)
        if rule is None:
            return
        # A real backward frees what a node saved once it has run: the learner's name of a saved constant
        # (`inputs`, held only by AddmmBackward0) is read now, or it would be told as `const` afterwards.
        self.constants[node] = {placeholder: _constant(node, rule, placeholder, self.names)
                                for placeholder, (child, _) in zip(INPUTS, node.next_functions) if child is None}
        try:
            shapes = [list(g.shape) if isinstance(g, torch.Tensor) else None for g in grad_inputs]
            with torch.no_grad():
                predicted = formulas.expected(node, tuple(grad_outputs), shapes)
            agree = [formulas.agrees(p, r) for p, r in zip(predicted, grad_inputs)]
            self.checked[node] = (agree, _numbers(node, rule), _terms(node, rule))
        except Exception:  # a formula that cannot be evaluated here is shown as none, never as a guess
            self.checked[node] = ([], {}, {})

    # -- after --------------------------------------------------------------------------------
    def tell(self) -> None:
        incoming = self._incoming()
        for node in self.nodes:  # modules first: an unnamed module output is called by its module
            record = self.records[node]
            if type(node).__name__ != ACCUMULATE and record.get("made_by") is not None:
                module = self._module(node, record["made_by"]["source"])
                if module:
                    record["made_by"] = {**record["made_by"], "module": module}
        for node in self.nodes:
            record = self.records[node]
            if type(node).__name__ == ACCUMULATE:
                record["formulas"] = []  # a leaf sends no gradient on: it adds what arrives to .grad
            else:
                record["label"] = self.label(node)
                self._formulas(node, record)
            edges = incoming.get(node, [])
            if len(edges) > 1:  # the engine adds these before the node runs: its grad_outputs are their sum
                record["contributions"] = [{"from": self.records[parent]["id"], "values": self._sent(parent, k)}
                                           for parent, k in edges]

    def _sent(self, parent, k: int) -> dict | None:
        sent = self.records[parent]["grad_inputs"]
        return sent[k] if sent and k < len(sent) else None

    def _incoming(self) -> dict:
        ids = set(self.records)
        incoming: dict = {}
        for parent in self.nodes:
            for k, (child, _) in enumerate(parent.next_functions):
                if child is not None and child in ids:
                    incoming.setdefault(child, []).append((parent, k))
        return incoming

    def label(self, node) -> str:
        """What the learner calls a node's output: its name, or its expression over its inputs' names."""
        if node in self._labels:
            return self._labels[node]
        self._labels[node] = type(node).__name__  # a guard against cycles; replaced below
        kind = type(node).__name__
        if kind == ACCUMULATE:
            label = self.records.get(node, {}).get("leaf") or "leaf"
        else:
            made = self.records.get(node, {}).get("made_by") or {}
            label = made.get("tensor")
            if not label:
                rule = formulas.rule_for(node)
                label = kind
                text = _fill(rule.expr, self._names(node, rule)) if rule is not None else None
                if text is not None and len(text) <= LABEL_CAP:
                    label = text
                elif made.get("module"):
                    label = f"{made['module']}(…)"
        self._labels[node] = label
        return label

    def _names(self, node, rule) -> dict:
        numbers = self.checked.get(node, (None, None, None))[1] or _numbers(node, rule)
        names = dict(numbers)
        for placeholder, (child, _) in zip(INPUTS, node.next_functions):
            names[placeholder] = (_operand(self.label(child)) if child is not None
                                  else self._constant(node, rule, placeholder))
        made = self.records.get(node, {}).get("made_by") or {}
        names["out"] = made.get("tensor") or "out"  # replaced by the node's label where it has one
        return names

    def _constant(self, node, rule, placeholder: str) -> str:
        known = self.constants.get(node, {})
        return known[placeholder] if placeholder in known else _constant(node, rule, placeholder, self.names)

    def _formulas(self, node, record: dict) -> None:
        rule = formulas.rule_for(node)
        inputs = len(node.next_functions)
        record["in_table"] = rule is not None
        record["formulas"] = [None] * inputs
        record["inputs"] = [self.label(child) if child is not None else
                            self._constant(node, rule, INPUTS[i]) if rule is not None and i < len(INPUTS)
                            else CONSTANT
                            for i, (child, _) in enumerate(node.next_functions)]
        if rule is None or node not in self.checked:
            return
        agree, _, terms = self.checked[node]
        names = self._names(node, rule)
        names["out"] = _operand(self.label(node))
        names["g"] = _grad_name(self.label(node))
        receives = rule.receives
        texts, derivatives = [], []
        for i in range(inputs):
            template = receives[i] if i < len(receives) else None
            text = _fill(template, names) if template and i < len(agree) and agree[i] else None
            texts.append(text)
            local = _local(template.replace("{times_alpha}", names.get("times_alpha", ""))) if text else None
            derivatives.append(_fill(local, names))
        record["formulas"] = texts
        record["derivatives"] = derivatives
        constants = {INPUTS[i] for i, (child, _) in enumerate(node.next_functions) if child is None and i < len(INPUTS)}
        record["terms"] = {names[slot]: summary for slot, summary in terms.items()
                           if slot in names and slot not in constants}  # a constant's value is its name

    def _module(self, node, source: str) -> str | None:
        """The module whose parameter feeds ``node`` (``net[0]`` for ``net[0].weight``), directly or through a
        view of it (Addmm <- T <- weight), when the statement that made the node calls that module (or the
        container holding it)."""
        for child, _ in node.next_functions:
            if child is not None and type(child).__name__ in VIEWS:
                child = next((grand for grand, _ in child.next_functions
                              if grand is not None and type(grand).__name__ == ACCUMULATE), None)
            if child is not None and type(child).__name__ == ACCUMULATE:
                module = _calling(self.records.get(child, {}).get("leaf") or "", source)
                if module:
                    return module
        return None


def _calling(parameter: str, source: str) -> str | None:
    if "." not in parameter:
        return None
    module = parameter.rsplit(".", 1)[0]
    prefix = module
    while prefix:
        if f"{prefix}(" in source:
            return module
        cut = max(prefix.rfind("."), prefix.rfind("["))
        prefix = prefix[:cut] if cut > 0 else ""
    return None


def _spaced(text: str) -> bool:
    """Whether an expression has an operator outside brackets (``x * w``): it needs parentheses to be a name."""
    depth = 0
    for char in text:
        depth += char in "([{"
        depth -= char in ")]}"
        if char == " " and depth == 0:
            return True
    return False


def _grad_name(label: str) -> str:
    return f"grad_{label}" if label.isidentifier() else f"grad({label})"


def _operand(label: str) -> str:
    """A label inside a bigger expression: ``(x * w).sum()``, never ``x * w.sum()``."""
    return f"({label})" if _spaced(label) else label


def _local(template: str | None) -> str | None:
    """The local derivative in a formula shaped ``{g} * D`` (``d out/d in = D``); None for the others (a
    matrix product's or a reduction's gradient is no elementwise factor)."""
    if template is None:
        return None
    for prefix, sign in (("{g} * ", ""), ("-{g} * ", "-")):
        if template.startswith(prefix) and "{g}" not in template[len(prefix):]:
            return sign + template[len(prefix):]
    for prefix, sign in (("{g} / ", "1 / "), ("-{g} / ", "-1 / ")):
        rest = template[len(prefix):]
        if template.startswith(prefix) and "{g}" not in rest and not _worded(rest):
            return sign + (rest if rest.startswith("(") or rest.isidentifier() else f"({rest})")
    return {"{g}": "1", "-{g}": "-1"}.get(template)


def _worded(text: str) -> bool:
    """Words after the divisor (`n copied along dim 0`): a space outside brackets; `1 / (n copied ...)` is no factor."""
    depth = 0
    for char in text:
        depth += (char in "([") - (char in ")]")
        if char == " " and depth == 0:
            return True
    return False


def _fill(template: str | None, names: dict) -> str | None:
    if template is None:
        return None
    try:
        return string.Formatter().vformat(template, (), names)
    except (KeyError, IndexError, ValueError):
        return None


def _numbers(node, rule) -> dict:
    """The op's saved numbers its templates name ({exponent}, {dim}), as text."""
    numbers = {}
    for _, key, _, _ in string.Formatter().parse(rule.expr + "".join(t or "" for t in rule.receives)):
        if key == "times_alpha":  # add and sub scale their second input by alpha, 1 unless asked
            alpha = getattr(node, "_saved_alpha", 1)
            numbers[key] = "" if alpha == 1 else f" * {_number_text(alpha)}"
        elif key == "power_less_one":  # x ** 2 gives 2 * x, not 2 * x ** 1
            less = getattr(node, "_saved_exponent") - 1
            numbers[key] = "" if less == 1 else f" ** {_number_text(less)}"
        elif key and key not in TENSOR_SLOTS and key not in numbers:
            try:
                numbers[key] = _number_text(getattr(node, f"_saved_{key}"))
            except Exception:
                continue
    return numbers


def _number_text(value) -> str:
    if isinstance(value, torch.Tensor):
        value = value.item() if value.numel() == 1 else tuple(value.tolist())
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _constant(node, rule, placeholder: str, names: dict[int, str]) -> str:
    """An input that needs no gradient (a number, a tensor without requires_grad): the learner's name of the
    tensor the op saved, or its value when one number."""
    attribute = rule.saved.get(placeholder)
    if attribute:
        try:
            value = getattr(node, f"_saved_{attribute}")
            if isinstance(value, torch.Tensor) and id(value) in names:
                return names[id(value)]
            if isinstance(value, torch.Tensor) and value.numel() == 1:
                return _number_text(value)
        except Exception:
            pass
    return CONSTANT


def _terms(node, rule) -> dict:
    """Summaries of the saved tensors a node's formulas use, by placeholder."""
    terms = {}
    for placeholder, attribute in rule.saved.items():
        try:
            value = getattr(node, f"_saved_{attribute}")
        except Exception:
            continue
        if isinstance(value, torch.Tensor):
            terms[placeholder] = summarize(value)
    return terms
