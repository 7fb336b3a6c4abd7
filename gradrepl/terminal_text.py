"""Text from the kernel or a lesson, made safe to put on a terminal.

Learner output and lesson prose may hold escape sequences: clear screen, set the
window title, write the clipboard (OSC 52). Every control character but newline
and tab is shown as a visible escape (``\\x1b``), so nothing reaches the terminal
that the terminal would act on.
"""

from __future__ import annotations

import dataclasses

# C0 controls but \t and \n, DEL, and the C1 controls (which some terminals also obey).
_CONTROLS = [code for code in range(0x20) if code not in (0x09, 0x0A)] + list(range(0x7F, 0xA0))
_TABLE = {code: f"\\x{code:02x}" for code in _CONTROLS}


def visible(text: str) -> str:
    """``text`` with every control character except newline and tab shown as ``\\xNN``."""
    return text.translate(_TABLE)


def first_control(text: str) -> str | None:
    """The first character of ``text`` that `visible` would escape, or None when there is none."""
    return next((char for char in text if ord(char) in _TABLE), None)


def visible_step(result):
    """A copy of a StepResult whose learner-controlled text is all `visible`."""
    error = result.error and dataclasses.replace(
        result.error, message=visible(result.error.message), traceback=visible(result.error.traceback),
        explanation=result.error.explanation and visible(result.error.explanation),
        text=result.error.text and visible(result.error.text),
        offset=_moved(result.error.text, result.error.offset, base=1),
        end_offset=_moved(result.error.text, result.error.end_offset, base=1),
        frames=_visible_frames(result.error.frames),
        causes=[{**cause, "message": visible(str(cause.get("message", ""))),
                 "frames": _visible_frames(cause.get("frames", []))} for cause in result.error.causes])
    return dataclasses.replace(
        result, stdout=visible(result.stdout), stderr=visible(result.stderr),
        result=result.result and visible(result.result), display=_visible_display(result.display),
        notes=[visible(note) for note in result.notes], error=error,
        removed=[visible(name) for name in result.removed],
        tensors=[{**row, "name": visible(str(row.get("name", "")))} for row in result.tensors])


def _visible_frames(frames: list[dict]) -> list[dict]:
    """Frames with visible text, and the caret's columns moved with the line they point into."""
    return [{**frame, **{key: visible(str(frame[key])) for key in ("filename", "name", "line", "text")
                         if frame.get(key) is not None},
             **{key: _moved(frame.get("line"), frame[key]) for key in ("col", "end_col") if frame.get(key) is not None}}
            for frame in frames]


def _moved(line: str | None, column: int | None, base: int = 0) -> int | None:
    """Where ``column`` of ``line`` (counted from ``base``) lands once the line is made visible."""
    if not line or column is None or column < base:
        return column
    return len(visible(line[:column - base])) + base


def _visible_display(display):
    """A magic's text, or a help page ({"kind", "title", "text"}), made visible."""
    if isinstance(display, dict):
        return {key: visible(value) if isinstance(value, str) else value for key, value in display.items()}
    return display and visible(display)
