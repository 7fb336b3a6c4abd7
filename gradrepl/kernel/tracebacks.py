"""A step's exception as the learner should read it: their frames and the libraries', never ours.

Runs in the kernel. gradrepl's own frames (the worker's exec, the shadow
recorder's __torch_function__, diagnose, the SIGINT handler) are dropped; the
learner's frames name their cell (``Cell In[3], line 2``) or their script
(``File "nested.py", line 3``) with its real line numbers.
"""

from __future__ import annotations

import linecache
import os
import traceback
from dataclasses import asdict

import gradrepl
from gradrepl.kernel.guard import NoValue, bounded, cap, safe_text
from gradrepl.protocol.messages import Frame

GRADREPL_DIR = os.path.dirname(os.path.abspath(gradrepl.__file__)) + os.sep
HEADER = "Traceback (most recent call last):\n"
# Python's words between a chained exception and the one it led to.
CAUSE = "The above exception was the direct cause of the following exception:"
CONTEXT = "During handling of the above exception, another exception occurred:"
MAX_CAUSES = 8  # a longer chain keeps its last links: those nearest the error shown


def cell_name(step: int) -> str:
    """The filename a REPL step's code is compiled under, as IPython names its cells."""
    return f"Cell In[{step}]"


def remember_source(filename: str, source: str, first_line: int = 1) -> None:
    """Let tracebacks quote the learner's lines: a script's steps fill one entry at their real lines."""
    entry = linecache.cache.get(filename)
    if entry and len(entry) == 4 and entry[1] is None:
        size, _, lines, _ = entry  # ours (no mtime): filled in place, so a step costs its own lines only
    else:
        size, lines = 0, []
    new = source.splitlines(True)
    if new and not new[-1].endswith("\n"):
        new[-1] += "\n"
    end = first_line - 1 + len(new)
    lines.extend(["\n"] * max(0, end - len(lines)))
    size += sum(map(len, new)) - sum(map(len, lines[first_line - 1:end]))
    lines[first_line - 1:end] = new
    linecache.cache[filename] = (size, None, lines, filename)


def error_info(exc: BaseException, learner_files: set[str], diagnosis: tuple[str | None, dict | None] = (None, None)
               ) -> dict:
    """The ErrorInfo fields (protocol/messages.py) for an exception raised by a step, with its diagnosis
    (a code and the names its words need, which the frontend words: views/diagnosis.py)."""
    frames = learner_frames(exc, learner_files)
    # str(exc) is learner code: it may raise, hang or be megabytes long (guard.py bounds all three).
    # A message that cannot be had is sent as "" with its reason ("unshown"): views/remarks.word_error
    # words it, and ends the traceback (left without its last line) with it.
    message, unshown = safe_text(lambda: exc)
    causes = []
    for earlier, link in chain(exc):
        said, cause_unshown = safe_text(lambda e=earlier: e)
        causes.append({"type": type(earlier).__name__, "message": said,
                       "frames": learner_frames(earlier, learner_files), "link": link,
                       **({"unshown": cause_unshown} if cause_unshown else {})})
    frames_only = HEADER + "".join(map(_frame_text, frames))
    if unshown:
        text = frames_only
    elif any("unshown" in cause for cause in causes):
        text = frames_only + f"{type(exc).__name__}: {message}\n"
    else:
        try:
            text = bounded(lambda: traceback_text(exc, frames, causes))
        except NoValue:
            text = frames_only + f"{type(exc).__name__}: {message}\n"
    code, names = diagnosis
    info = {"type": type(exc).__name__, "message": message, "explanation": None, "diagnosis": code,
            "diagnosis_names": names, "traceback": cap(text), "frames": frames, "causes": causes}
    if unshown:
        info["unshown"] = unshown
    if isinstance(exc, SyntaxError):
        info["message"] = f"{exc.msg} (line {exc.lineno})"
        info.update(offset=exc.offset, end_offset=getattr(exc, "end_offset", None), text=exc.text)
        if exc.filename in learner_files and exc.lineno:  # where the caret goes, as a frame too
            frames.append(asdict(Frame(exc.filename, exc.lineno, "<module>", (exc.text or "").strip(), "learner")))
    if isinstance(exc, KeyboardInterrupt):
        info["message"] = "interrupted"
        info["diagnosis"] = code or "interrupted"
    return info


def chain(exc: BaseException) -> list[tuple[BaseException, str]]:
    """The exceptions that led to ``exc``, oldest first, each with the words that link it to the next
    (``raise ... from`` is a cause; an exception raised while handling another has it as context)."""
    links: list[tuple[BaseException, str]] = []
    seen = {id(exc)}
    while len(links) < MAX_CAUSES:
        if exc.__cause__ is not None:
            exc, link = exc.__cause__, CAUSE
        elif exc.__context__ is not None and not exc.__suppress_context__:
            exc, link = exc.__context__, CONTEXT
        else:
            break
        if id(exc) in seen:  # a chain that loops back on itself
            break
        seen.add(id(exc))
        links.append((exc, link))
    return links[::-1]


def learner_frames(exc: BaseException, learner_files: set[str]) -> list[dict]:
    """From the first learner frame on, every frame that is not gradrepl's own, outermost first.

    torch's dispatch into our TorchFunctionMode (the call of handle_torch_function and the
    function itself) goes too: without gradrepl those two frames would not be there.
    """
    summaries = traceback.extract_tb(exc.__traceback__)
    ours = [summary.filename.startswith(GRADREPL_DIR) for summary in summaries]
    dispatch = {i for i, summary in enumerate(summaries)
                if summary.name == "handle_torch_function" and i + 1 < len(summaries) and ours[i + 1]}
    dropped = set(dispatch) | {i - 1 for i in dispatch}
    frames: list[dict] = []
    seen_learner = False
    for index, summary in enumerate(summaries):
        learner = summary.filename in learner_files
        seen_learner = seen_learner or learner
        if not seen_learner or ours[index] or (index in dropped and not learner):
            continue
        frames.append(asdict(Frame(summary.filename, summary.lineno or 0, summary.name,
                                   (summary.line or "").strip(), "learner" if learner else "library",
                                   *_columns(summary))))
    return frames


def _columns(summary: traceback.FrameSummary) -> tuple[int | None, int | None]:
    """The failing expression's columns on the stripped line, if it lies on that one line."""
    if summary.colno is None or summary.end_colno is None or summary.end_lineno != summary.lineno:
        return None, None
    raw = linecache.getline(summary.filename, summary.lineno or 0)
    indent = len(raw) - len(raw.lstrip())
    return max(0, summary.colno - indent), max(0, summary.end_colno - indent)


def location(filename: str, lineno: int, name: str | None = None) -> str:
    """`Cell In[3], line 2, in f` for a cell, `File "nested.py", line 3, in g` for anything else."""
    where = f"{filename}, line {lineno}" if filename.startswith("Cell In[") else f'File "{filename}", line {lineno}'
    return f"  {where}, in {name}" if name else f"  {where}"


def traceback_text(exc: BaseException, frames: list[dict], causes: list[dict] = ()) -> str:
    """As Python prints it (with our locations): each exception that led to this one, then this one."""
    earlier = "".join(_frames_text(cause["frames"]) + f"{cause['type']}: {cause['message']}\n\n{cause['link']}\n\n"
                      for cause in causes)
    last = _syntax_error_text(exc) if isinstance(exc, SyntaxError) else traceback.format_exception_only(type(exc), exc)
    return earlier + _frames_text(frames) + "".join(last)


def _frames_text(frames: list[dict]) -> str:
    return HEADER + "".join(map(_frame_text, frames)) if frames else ""


def _frame_text(frame: dict) -> str:
    text = location(frame["filename"], frame["lineno"], frame["name"]) + "\n"
    return text + (f"    {frame['line']}\n" if frame["line"] else "")


def _syntax_error_text(exc: SyntaxError) -> list[str]:
    """Python's own lines (source and caret), located the way our frames are."""
    lines = traceback.format_exception_only(type(exc), exc)
    if lines and lines[0].startswith("  File ") and exc.filename:
        lines[0] = location(exc.filename, exc.lineno or 0) + "\n"
    return lines
