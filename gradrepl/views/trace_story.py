"""One backward node told as the chain rule on the learner's code: the statement that made it, the
gradients that met there, and what each input receives, formula and numbers (issue 25).

Used by every face: `gradrepl trace`, %trace in --plain (views/trace.py's listing) and the TUI's
trace view (which styles these lines). Data come from kernel/inspect/story.py: `made_by`,
`label`, `inputs`, `formulas`, `derivatives`, `terms`, `contributions`.
"""

from __future__ import annotations

from gradrepl.views.numbers import flat_values, number_text, shape_text

FEW = 6  # values shown in full up to this many; past it the shape, the norm and the first few
CONSTANT = "const"  # the kernel's name for an input that is neither a tensor of the learner's nor one number


def value_text(summary: dict | None) -> str:
    """A tensor's values in one notation: small ones in full, bigger ones shape, norm and a few values."""
    if summary is None:
        return "None"
    shape = summary.get("shape") or []
    if "values" in summary:
        values = summary["values"]
        flat = list(flat_values(values))
        if len(flat) <= FEW:
            return _nested(values)
        head = ", ".join(number_text(v) for v in flat[:3])
        return f"{shape_text(shape)} norm {number_text(summary.get('norm'))} [{head}, …]"
    parts = [shape_text(shape)]
    if summary.get("norm") is not None:
        parts.append(f"norm {number_text(summary['norm'])}")
    if "min" in summary:
        parts.append(f"min {number_text(summary.get('min'))} max {number_text(summary.get('max'))}")
    return " ".join(parts)


def _nested(values) -> str:
    if isinstance(values, list):
        return "[" + ", ".join(_nested(v) for v in values) + "]"
    return number_text(values)


def made_by_text(node: dict) -> str:
    """`a = x * w  (step 4, line 4)`, with the module a library call ran (`in net[0]`)."""
    made = node.get("made_by")
    if not made:  # a leaf, or code no step marked (the notebook's cells, a node made before any step)
        return ""
    first = (made.get("source") or "").splitlines()[0] if made.get("source") else ""
    more = " …" if "\n" in (made.get("source") or "") else ""
    where = f"step {made['step']}, line {made['line']}" + (f", in {made['module']}" if made.get("module") else "")
    return f"{first}{more}  ({where})"


def echo_tag(node: dict, preview: bool = False) -> str:
    """Beside the console's echo of the statement that made the trace's current node: `made node 4
    (MulBackward0)`, or for a leaf's AccumulateGrad `made x (node 6 fills x.grad)` (a preview's `would
    fill`: it filled nothing), so the lit line reads without colour."""
    if "leaf" in node:
        fills = "would fill" if preview else "fills"
        return f"made {node['leaf']} (node {node.get('order')} {fills} {node['leaf']}.grad)"
    return f"made node {node.get('order')} ({node.get('name', '?')})"


def gradient_name(node: dict) -> str:
    """The name the kernel's formulas give the gradient arriving (they start with it)."""
    label = node.get("label") or "out"
    return f"grad_{label}" if label.isidentifier() else f"grad({label})"


def _grouped(label: str) -> str:
    """``(x * w)`` where an operator stands outside brackets, so `d (x * w)/d x` reads as one name."""
    depth = 0
    for char in label:
        depth += (char in "([{") - (char in ")]}")
        if char == " " and depth == 0:
            return f"({label})"
    return label


def leaf_target(leaf: str, preview: bool) -> str:
    """What a leaf's AccumulateGrad does with the gradient: `x.grad +=`; in a preview, which wrote no
    .grad, `x.grad would get +=`."""
    return f"{leaf}.grad would get +=" if preview else f"{leaf}.grad +="


def arriving_text(node: dict, by_id: dict, preview: bool = False) -> str:
    """The gradient a node starts from; where several met, each and their sum. ``preview``: the trace's
    flag (a preview changed no .grad, so a leaf's line says what would be added)."""
    arrived = (node.get("grad_outputs") or [None])[0]
    parts = node.get("contributions") or []
    target = leaf_target(node["leaf"], preview) if "leaf" in node else \
        f"{_grouped(node.get('label') or node['name'])} receives"
    if len(parts) > 1:
        added = " + ".join(f"{value_text(part.get('values'))} (from {_sender(by_id.get(part.get('from')))})"
                           for part in parts)
        count = "" if "leaf" in node else f" {len(parts)} gradients:"
        return f"{target}{count} {added} = {value_text(arrived)}"
    if "leaf" in node:
        return f"{target} {value_text(arrived)}"
    return f"{gradient_name(node)} = {value_text(arrived)}"


def _sender(node: dict | None) -> str:
    if node is None:
        return "?"
    return node.get("label") or node.get("name", "?")


def sends_lines(node: dict) -> list[str]:
    """What each input receives: `d a/d x = w, so x receives grad_a * w = [..]`."""
    lines = []
    sent = node.get("grad_inputs") or []
    inputs = node.get("inputs") or []
    formulas = node.get("formulas") or []
    derivatives = node.get("derivatives") or []
    label = node.get("label") or "out"
    for i, value in enumerate(sent):
        name = _grouped(inputs[i]) if i < len(inputs) else f"input {i + 1}"
        if value is None:
            lines.append(f"{name} is a constant: no gradient for it" if _is_number(name) or name == CONSTANT
                         else f"{name} receives no gradient (it does not require grad)")
            continue
        formula = formulas[i] if i < len(formulas) else None
        if formula is None:
            why = "  (no formula for this op)" if node.get("in_table") is False else ""
            lines.append(f"{name} receives {value_text(value)}{why}")
            continue
        derivative = derivatives[i] if i < len(derivatives) else None
        said = f"d {_grouped(label)}/d {name} = {derivative}, so " if derivative else ""
        lines.append(f"{said}{name} receives {formula} = {value_text(value)}")
    terms = node.get("terms") or {}
    if terms and any(formulas):
        lines.append("with " + ", ".join(f"{name} = {value_text(value)}" for name, value in terms.items()))
    return lines


def _is_number(name: str) -> bool:
    try:
        float(name)
    except ValueError:
        return False
    return True


def node_story(node: dict, by_id: dict, preview: bool = False) -> list[str]:
    """The lines under a node's header: the gradient arriving (or meeting), then what it sends."""
    if node.get("order") is None:
        return ["did not run: no gradient reached it"]
    lines = [arriving_text(node, by_id, preview)]
    if "leaf" not in node:
        lines += sends_lines(node)
    return lines
