"""The multi-line Python input: Enter runs a complete statement, Up/Down walk history, Tab asks the kernel."""

from __future__ import annotations

import os
import re

from textual import events
from textual.widgets import TextArea

from gradrepl.history import History
from gradrepl.tui.messages import CompletionRequested, InputSubmitted
from gradrepl.completeness import is_complete, next_indent

_WORD_BEFORE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
_COMPLETABLE_BEFORE = re.compile(r"[A-Za-z0-9_.]$")


class CodeInput(TextArea):
    """Python with syntax highlighting (tree-sitter) and auto-indent after ':'."""

    def __init__(self, history: History, **kwargs) -> None:
        super().__init__(
            language="python",
            soft_wrap=True,
            tab_behavior="indent",
            show_line_numbers=False,
            highlight_cursor_line=False,
            placeholder="type torch code · Enter runs · Tab completes · ↑↓ history",
            **kwargs,
        )
        self.repl_history = history

    async def _on_key(self, event: events.Key) -> None:
        if self.read_only:
            return
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self._enter()
        elif event.key == "ctrl+j":
            event.stop()
            event.prevent_default()
            self._newline()
        elif event.key == "tab" and self._wants_completion():
            event.stop()
            event.prevent_default()
            self.post_message(CompletionRequested(self.text, self.cursor_index))

    @property
    def cursor_index(self) -> int:
        """The cursor as a character offset into the text, as the kernel's completer expects."""
        return self.document.get_index_from_location(self.cursor_location)

    def _enter(self) -> None:
        on_last_line = self.cursor_location[0] == self.document.line_count - 1
        if on_last_line and self.selection.is_empty and is_complete(self.text):
            self.submit()
        elif self.text.strip() or self.cursor_location[0] > 0:
            self._newline()

    def _newline(self) -> None:
        row, column = self.cursor_location
        indent = next_indent(self.document[row][:column])
        self.replace("\n" + indent, *self.selection)

    def submit(self) -> None:
        """Send the current text as one step and start a fresh input."""
        source = self.text.rstrip()
        self.repl_history.add(source)
        self._set_text("")
        self.post_message(InputSubmitted(source))

    def _wants_completion(self) -> bool:
        row, column = self.cursor_location
        before = self.document[row][:column]
        return bool(_COMPLETABLE_BEFORE.search(before))

    def complete_with(self, matches: list[str], code: str, cursor: int) -> list[str]:
        """Insert what all `matches` share after the word at the cursor; return the candidates.

        Ignored (returns []) when the text changed while the kernel was thinking.
        """
        if self.text != code or self.cursor_index != cursor:
            return []
        prefix_match = _WORD_BEFORE.search(code[:cursor])
        prefix = prefix_match.group(0) if prefix_match else ""
        words = []
        for match in matches:
            word = match if match.startswith(prefix) else match.rsplit(".", 1)[-1]
            if word.startswith(prefix) and word not in words:
                words.append(word)
        if not words:
            return []
        shared = os.path.commonprefix(words)
        if len(shared) > len(prefix):
            self.insert(shared[len(prefix):])
        return words if len(words) > 1 else []

    def action_cursor_up(self, select: bool = False) -> None:
        if not select and self.cursor_location[0] == 0:
            entry = self.repl_history.previous(self.text)
            if entry is not None:
                self._show_entry(entry)
            return
        super().action_cursor_up(select)

    def action_cursor_down(self, select: bool = False) -> None:
        if not select and self.cursor_location[0] == self.document.line_count - 1:
            entry = self.repl_history.next()
            if entry is not None:
                self._show_entry(entry)
            return
        super().action_cursor_down(select)

    def _show_entry(self, entry: str) -> None:
        self._set_text(entry)
        self.move_cursor(self.document.end)

    def _set_text(self, text: str) -> None:
        # An edit, not load_text: load_text rebuilds the tree-sitter query (~30 ms a keypress).
        self.replace(text, self.document.start, self.document.end)
