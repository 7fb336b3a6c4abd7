"""Help pages for `obj?`, `obj??` and help(obj), written in the kernel where the object lives."""

from __future__ import annotations

import inspect
import pydoc

from gradrepl.kernel.protocol import HELP_CAP


def page(title: str, text: str) -> dict:
    """A StepResult display the frontends open in a pager or a scrollable view."""
    if len(text) > HELP_CAP:
        text = text[:HELP_CAP] + f"\n... ({len(text) - HELP_CAP:,} more characters not shown)"
    return {"kind": "help", "title": title, "text": text}


def inspect_text(value, expr: str, with_source: bool) -> str:
    """IPython's `obj?` fields (type, value, signature, docstring, file); `obj??` adds the source."""
    fields = [("Type", type(value).__name__), ("String form", _short(value))]
    signature = _signature(value)
    if signature:
        fields.append(("Signature", f"{expr.rsplit('.', 1)[-1]}{signature}"))
    where = _file(value)
    if where:
        fields.append(("File", where))
    lines = [f"{name + ':':<13}{text}" for name, text in fields]
    doc = inspect.getdoc(value)
    lines += ["Docstring:", doc if doc else "<no docstring>"]
    if with_source:
        lines += ["Source:", _source(value)]
    return "\n".join(lines)


def pydoc_text(value) -> str:
    """What help(value) prints in Python, without the pager and without overstrike bold."""
    return pydoc.render_doc(value, title="Help on %s:", renderer=pydoc.plaintext)


def _short(value) -> str:
    try:
        text = repr(value)
    except Exception as exc:  # a broken __repr__ must not break help
        text = f"<repr failed: {exc}>"
    return text if len(text) <= 200 else text[:199] + "…"


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


def _source(value) -> str:
    try:
        return inspect.getsource(value).rstrip("\n")
    except (OSError, TypeError):
        target = value if inspect.isroutine(value) or inspect.isclass(value) else type(value)
        return (f"<no Python source: {getattr(target, '__qualname__', type(target).__name__)} "
                "is built in (C/C++), or was typed where no file keeps it>")
