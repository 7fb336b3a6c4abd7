"""The plain REPL's keys: Enter, Backspace in an indent, Up/Down through matching history.

Without bracketed paste (ssh, `tmux paste-buffer` without -p) a paste arrives as typed
keys. Keys already waiting behind an Enter are a paste: that Enter neither
auto-indents (the pasted lines bring their own indent) nor ends a block that the
next pasted line still continues.
"""

from __future__ import annotations

from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.keys import Keys

from gradrepl.completeness import INDENT, is_complete, next_indent

_CONTINUES_BLOCK = ("else", "elif", "except", "finally")


class HistoryWalk:
    """prompt_toolkit's prefix search through history, switched on only while Up/Down walk it
    (left on, it would also switch off completion while typing)."""

    def __init__(self):
        self.walking = False
        self.enabled = Condition(lambda: self.walking)

    def walk(self, buffer, backward: bool, count: int) -> None:
        self.walking = True
        try:
            (buffer.history_backward if backward else buffer.history_forward)(count=count)
        finally:
            self.walking = False


def key_bindings(search: HistoryWalk) -> KeyBindings:
    bindings = KeyBindings()

    @bindings.add("enter")
    def _(event):
        buffer = event.current_buffer
        waiting = _pasted_lines(event.app.key_processor.input_queue)
        if not buffer.text.strip():
            buffer.validate_and_handle()  # an empty prompt: a fresh one, as in Python
        elif is_complete(buffer.text) and not (waiting and _continues(waiting)):
            buffer.validate_and_handle()
        elif waiting:
            buffer.insert_text("\n")
        else:
            buffer.insert_text("\n" + next_indent(buffer.document.text_before_cursor))

    in_indent = Condition(lambda: _in_indent(_buffer()))

    @bindings.add("backspace", filter=in_indent)
    def _(event):
        before = event.current_buffer.document.current_line_before_cursor
        event.current_buffer.delete_before_cursor((len(before) - 1) % len(INDENT) + 1)

    one_candidate = Condition(lambda: bool(_buffer().complete_state)
                              and len(_buffer().complete_state.completions) == 1)

    @bindings.add("tab", filter=one_candidate)
    def _(event):
        """A single match completes inline and the menu closes, as in IPython."""
        buffer = event.current_buffer
        buffer.apply_completion(buffer.complete_state.completions[0])

    # Up walks history even while the menu of completions shows, until an item of it is chosen.
    first_row = Condition(lambda: _buffer().document.cursor_position_row == 0 and _menu_untouched(_buffer()))
    last_row = Condition(lambda: _buffer().document.is_cursor_at_the_end_of_line
                         and _buffer().document.cursor_position_row == _buffer().document.line_count - 1
                         and not _buffer().complete_state)

    @bindings.add("up", filter=first_row)
    def _(event):
        search.walk(event.current_buffer, backward=True, count=event.arg)

    @bindings.add("down", filter=last_row)
    def _(event):
        search.walk(event.current_buffer, backward=False, count=event.arg)

    return bindings


def _buffer():
    from prompt_toolkit.application import get_app

    return get_app().current_buffer


def _menu_untouched(buffer) -> bool:
    return buffer.complete_state is None or buffer.complete_state.complete_index is None


def _in_indent(buffer) -> bool:
    """The cursor sits in a line's leading whitespace, after at least one space."""
    before = buffer.document.current_line_before_cursor
    return bool(before) and not before.strip(" ") and not buffer.selection_state


def _pasted_lines(queue) -> list[str]:
    """The text of the keys waiting behind this Enter, cut into lines."""
    text = "".join("\n" if press.key in (Keys.ControlM, Keys.ControlJ) else press.data for press in queue)
    return text.split("\n") if text else []


def _continues(lines: list[str]) -> bool:
    """The next non-blank pasted line carries on the open block (indented, or else/except/...)."""
    following = next((line for line in lines if line.strip()), None)
    if following is None:
        return False
    return following[:1] in (" ", "\t") or following.split(None, 1)[0].rstrip(":") in _CONTINUES_BLOCK
