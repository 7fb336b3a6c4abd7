"""Help pages for `obj?`, `obj??` and help(obj), read in the kernel where the object lives.

help(obj) is pydoc's own text; `obj?` and `obj??` are sent as their fields (type, string form,
signature, file, docstring, source) and a bare help() as a code: views/help_page.py lays them out."""

from __future__ import annotations

import inspect
import pydoc

from gradrepl.protocol.messages import HELP_CAP


def page(title: str, text: str) -> dict:
    """A StepResult display the frontends open in a pager or a scrollable view."""
    if len(text) > HELP_CAP:
        text = text[:HELP_CAP] + f"\n... ({len(text) - HELP_CAP:,} more characters not shown)"
    return {"kind": "help", "title": title, "text": text}


def help_title(value, namespace: dict) -> str:
    """What help(value) is about, as the learner would name it: a module, class or function by its
    dotted name, any other object by the name it has in the namespace (`help(x)`, not `help(torch)`,
    the module its class comes from)."""
    if isinstance(value, str):
        return value
    if inspect.ismodule(value):
        return value.__name__
    if inspect.isclass(value) or inspect.isroutine(value):
        qualname = getattr(value, "__qualname__", None)
        if isinstance(qualname, str) and any(part.startswith("_") and not part.startswith("__")
                                             for part in qualname.split(".")[:-1]):
            qualname = getattr(value, "__name__", qualname)  # torch.relu, not torch._VariableFunctionsClass.relu
        parts = (getattr(value, "__module__", None), qualname)
        return ".".join(part for part in parts if isinstance(part, str)) or type(value).__name__
    for name, bound in list(namespace.items()):
        if bound is value and type(name) is str and name.isidentifier() and not name.startswith("_"):
            return name
    return f"a {type(value).__qualname__}"


def inspect_fields(value, expr: str, with_source: bool) -> dict:
    """IPython's `obj?` fields as data (type, string form or why it failed, signature, file, docstring);
    `obj??` adds the source, or the name of what has none."""
    fields = {"type": type(value).__name__, **_short(value)}
    signature = _signature(value)
    if signature:
        fields["signature"] = f"{expr.rsplit('.', 1)[-1]}{signature}"
    where = _file(value)
    if where:
        fields["file"] = where
    doc = inspect.getdoc(value)
    fields["docstring"] = doc[:HELP_CAP] if doc else None
    if with_source:
        fields.update(_source(value))
    return fields


def pydoc_text(value) -> str:
    """What help(value) prints in Python, without the pager and without overstrike bold."""
    return pydoc.render_doc(value, title="Help on %s:", renderer=pydoc.plaintext)


def _short(value) -> dict:
    """{"string_form"}, or {"repr_failed": the error's words} (a broken __repr__ must not break help)."""
    try:
        text = repr(value)
    except Exception as exc:
        return {"repr_failed": str(exc)[:200]}
    return {"string_form": text if len(text) <= 200 else text[:199] + "…"}


def _signature(value) -> str | None:
    if not callable(value):
        return None
    try:
        return str(inspect.signature(value))
    except (TypeError, ValueError):  # many torch builtins have no introspectable signature
        return None


def _file(value) -> str | None:
    try:
        return inspect.getfile(value)
    except TypeError:
        return None


def _source(value) -> dict:
    """{"source"}, or {"no_source": the name of what has none}."""
    try:
        return {"source": inspect.getsource(value).rstrip("\n")[:HELP_CAP]}
    except (OSError, TypeError):
        target = value if inspect.isroutine(value) or inspect.isclass(value) else type(value)
        return {"no_source": str(getattr(target, "__qualname__", type(target).__name__))}
