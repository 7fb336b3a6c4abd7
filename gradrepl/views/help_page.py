"""A help page's words: `obj?`'s fields laid out as IPython lays them, a bare help()'s usage line, and
several help(...) calls of one step joined (kernel/helptext.py sends the fields and the codes)."""

from __future__ import annotations

from gradrepl.protocol.messages import HELP_CAP

HELP_USAGE = ("help(obj) shows obj's documentation; obj? shows its signature and docstring, obj?? its source too. "
              "%help lists gradrepl's commands.")
_LABELS = (("type", "Type"), ("string_form", "String form"), ("signature", "Signature"), ("file", "File"))


def fields_text(fields: dict) -> str:
    """`Type:        function`, `Signature:   relu(input, ...)` ..., then the docstring and (obj??) the source."""
    shown = dict(fields)
    if "repr_failed" in shown:
        shown["string_form"] = f"<repr failed: {shown['repr_failed']}>"
    lines = [f"{label + ':':<13}{shown[key]}" for key, label in _LABELS if shown.get(key) is not None]
    lines += ["Docstring:", shown.get("docstring") or "<no docstring>"]
    if "source" in shown:
        lines += ["Source:", shown["source"]]
    elif "no_source" in shown:
        lines += ["Source:", f"<no Python source: {shown['no_source']} is built in (C/C++), or was typed where "
                             "no file keeps it>"]
    return "\n".join(lines)


def page_text(page: dict) -> str:
    """A help display's text, whichever way the kernel sent it (text, fields, a code, several pages)."""
    if "pages" in page:
        return "\n\n".join(page_text(one) for one in page["pages"] if isinstance(one, dict))
    if "fields" in page:
        text = fields_text(page["fields"])
    elif page.get("code") == "help_usage":
        text = HELP_USAGE
    else:
        text = str(page.get("text", ""))
    if len(text) > HELP_CAP:
        text = text[:HELP_CAP] + f"\n... ({len(text) - HELP_CAP:,} more characters not shown)"
    return text


def worded_page(display):
    """A step's display with a help page as {"kind", "title", "text"}, what every face reads."""
    if isinstance(display, dict) and display.get("kind") == "help" and set(display) != {"kind", "title", "text"}:
        return {"kind": "help", "title": display.get("title", "help"), "text": page_text(display)}
    return display
