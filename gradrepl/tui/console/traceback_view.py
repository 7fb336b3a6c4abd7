"""A step's error as the console shows it: the learner's frames compactly, library frames folded.

Built from ErrorInfo.frames (kernel/tracebacks.py): each learner frame is its location
and its source line behind IPython's arrow; torch's frames fold into one line that
F9 (or a click on it) opens; a SyntaxError shows its line with a caret under the spot.
A chained error (``raise ... from``, or one raised while handling another) shows what
led to it first, as Python prints a chain.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.style import Style
from rich.text import Text

from gradrepl.protocol.messages import ErrorInfo

ARROW = "----> "
TOGGLE_ACTION = "app.toggle_library_frames"


def error_view(error: ErrorInfo, show_library: bool) -> Group:
    """The whole error: frames (library ones folded unless `show_library`), the exception, the why."""
    parts: list[RenderableType] = []
    for cause in error.causes:  # what led to this error, oldest first, as Python prints a chain
        if cause["frames"]:
            parts.append(Text("Traceback (most recent call last)", style="dim"))
            parts.extend(_frames(cause["frames"], show_library))
        parts.append(Text.assemble((f"{cause['type']}: ", "bold red"), (cause["message"], "red")))
        parts.append(Text(f"\n{cause['link']}\n", style="dim italic"))
    frames = list(error.frames)
    caret = syntax_caret(error)
    if caret is not None and frames and frames[-1]["lineno"] and frames[-1]["origin"] == "learner":
        frames = frames[:-1]  # the offending line is drawn with its caret below
    if frames:
        if not _is_syntax_error(error):  # Python prints no header over a line it could not compile
            parts.append(Text("Traceback (most recent call last)", style="dim"))
        parts.extend(_frames(frames, show_library))
    if caret is not None:
        parts.append(caret)
    parts.append(Text.assemble((f"{error.type}: ", "bold red"), (error.message, "red")))
    if error.explanation:
        parts.append(Text.assemble(("why: ", "bold cyan"), (error.explanation, "cyan")))
    return Group(*parts)


def syntax_caret(error: ErrorInfo) -> Text | None:
    """`line N` of the cell, the code, and ^ under the columns Python blames (1-based offsets)."""
    if not _is_syntax_error(error) or not error.text or not error.offset:
        return None
    raw = error.text.rstrip("\n")  # made visible, with the offsets moved along, by visible_step
    code = raw.lstrip()
    shift = len(raw) - len(code)
    start = max(0, error.offset - 1 - shift)
    end = error.end_offset - 1 - shift if error.end_offset and error.end_offset > error.offset else start + 1
    where = _location(error.frames[-1]) if error.frames else None
    text = Text()
    if where:
        text.append(f"  {where}\n", style="cyan")
    text.append("    ")
    text.append_text(_code(code))
    text.append("\n    " + " " * min(start, len(code)) + "^" * max(1, min(end, len(code) + 1) - start),
                style="bold red")
    return text


def _is_syntax_error(error: ErrorInfo) -> bool:
    return error.type in ("SyntaxError", "IndentationError", "TabError")


def _frames(frames: list[dict], show_library: bool) -> list[Text]:
    shown: list[Text] = []
    folded: list[dict] = []
    for frame in frames + [None]:
        if frame is not None and frame["origin"] == "library" and not show_library:
            folded.append(frame)
            continue
        if folded:
            shown.append(_fold_line(folded))
            folded = []
        if frame is not None:
            shown.append(_frame(frame))
    return shown


def _frame(frame: dict) -> Text:
    library = frame["origin"] == "library"
    text = Text(f"  {_location(frame)}", style="dim" if library else "cyan")
    if frame["line"]:
        number = f"{frame['lineno']} " if frame["lineno"] else ""
        margin = f"  {ARROW}{number}"
        text.append(f"\n{margin}", style="dim" if library else "bold green")
        text.append_text(_code(frame["line"], dim=library))
        col, end = frame.get("col"), frame.get("end_col")
        # As Python does: a caret only where it says more than the line itself (not the whole line).
        if not library and col is not None and end is not None and end > col and (col, end) != (0, len(frame["line"])):
            text.append("\n" + " " * (len(margin) + col) + "^" * (end - col), style="bold red")
    return text


def _fold_line(frames: list[dict]) -> Text:
    libraries = sorted({_library_name(frame["filename"]) for frame in frames})
    words = f"  ⋯ {len(frames)} {'/'.join(libraries)} frame{'s' if len(frames) > 1 else ''} folded (F9 or click shows them)"
    return Text(words, style=Style(dim=True, italic=True, meta={"@click": TOGGLE_ACTION}))


def _location(frame: dict) -> str:
    filename = frame["filename"]
    if not filename.startswith("Cell In["):
        filename = _short_path(filename)
    where = f"{filename}, line {frame['lineno']}"
    return f"{where}, in {frame['name']}" if frame.get("name") and frame["name"] != "<module>" else where


def _short_path(path: str) -> str:
    """A library file from its package down (torch/_tensor.py), not from the venv's root."""
    marker = "site-packages/"
    return path.split(marker, 1)[1] if marker in path else path


def _library_name(path: str) -> str:
    return _short_path(path).split("/", 1)[0] if "site-packages/" in path else "library"


def _code(line: str, dim: bool = False) -> Text:
    from gradrepl.tui.console.python_text import python_text  # pygments: at a traceback, not the first frame

    text = python_text(line)
    text.rstrip()
    if dim:
        text.stylize("dim")
    return text
