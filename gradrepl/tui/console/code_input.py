"""The multi-line Python input: Enter runs a complete statement, Up/Down walk history, Tab opens the menu.

Keys follow IPython where TextArea differs; a paste that arrives as keys (no bracketed
paste) is recognised by its timing and runs as its top-level blocks.
"""

from __future__ import annotations

import functools
import os
import re
from types import SimpleNamespace
from typing import TYPE_CHECKING

from textual import events, on
from textual.binding import Binding
from textual.document._syntax_aware_document import SyntaxAwareDocument
from textual.widgets import TextArea

from gradrepl.completeness import INDENT, is_complete, next_indent, split_pasted
from gradrepl.history import History
from gradrepl.tui.console.paste_burst import PASTE_SETTLE, PasteBurst
from gradrepl.tui.messages import CompletionRequested, ConsolePageRequested, InputSubmitted, QuitRequested

if TYPE_CHECKING:
    from gradrepl.protocol.messages import Completion
    from gradrepl.tui.console.completion_menu import CompletionMenu

_IDENTIFIER = re.compile(r"[A-Za-z_0-9]*")
_COMPLETABLE_BEFORE = re.compile(r"[A-Za-z0-9_.]$")
HIGHLIGHT_AFTER = 0.25  # seconds after mount: the first screen and the footer's keys are drawn by then
NEWLINE_KEYS = ("enter", "ctrl+j")  # a pasted newline arrives as \r (enter) or \n (ctrl+j)


_prepare_query = SyntaxAwareDocument.prepare_query


@functools.cache
def _compiled_query(document_language, source: str):
    """A highlight query compiled once a process: it depends on the language and its text alone."""
    return _prepare_query(SimpleNamespace(language=document_language), source)


def _prepare_query_once(document: SyntaxAwareDocument, source: str):
    return _compiled_query(document.language, source)


class CodeInput(TextArea):
    """Python with syntax highlighting (tree-sitter) and auto-indent after ':'."""

    # Keys as an IPython user's fingers expect them (TextArea's own bindings otherwise).
    BINDINGS = [
        Binding("ctrl+c", "copy_or_clear", "Copy / clear input", show=False),
        Binding("ctrl+d", "delete_right_or_quit", "Delete / quit when empty", show=False),
        Binding("ctrl+r", "search_history", "Search history", show=False),
        Binding("pageup", "page_console(-1)", "Scroll console up", show=False),
        Binding("pagedown", "page_console(1)", "Scroll console down", show=False),
    ]

    def __init__(self, history: History, **kwargs) -> None:
        super().__init__(
            soft_wrap=True,
            tab_behavior="indent",
            show_line_numbers=False,
            highlight_cursor_line=False,
            placeholder="type torch code · Enter runs · Tab completes · ↑↓ history",
            **kwargs,
        )
        self.repl_history = history
        self.menu: CompletionMenu | None = None  # mounted on the screen at the first Tab
        self._paste = PasteBurst()
        self._paste_timer = None
        self._paste_ends_with_enter = False
        self._verdict: tuple[str, bool] | None = None  # (text, is_complete(text)): Enter asks twice (the app's hold)

    def on_mount(self) -> None:
        # Compiling tree-sitter's Python query takes a few tens of ms: after the first frame, and after the
        # footer's keys, which Textual mounts and draws a frame later (HIGHLIGHT_AFTER).
        self.set_timer(HIGHLIGHT_AFTER, self._highlight_python)

    def _set_document(self, text: str, language: str | None) -> None:
        # TextArea compiles tree-sitter's highlight query for every document it makes (the language set,
        # load_text): ~30 ms of C, the same query each time. Compiled once a process instead, and in
        # gradrepl serve's tutor template once for every tab (tutor_fork._warm).
        SyntaxAwareDocument.prepare_query = _prepare_query_once
        try:
            super()._set_document(text, language)
        finally:
            SyntaxAwareDocument.prepare_query = _prepare_query

    def _highlight_python(self) -> None:
        selection = self.selection  # a new document puts the cursor at the start; keys may be in already
        self.language = "python"
        self.selection = selection

    async def _on_key(self, event: events.Key) -> None:
        if self.read_only:
            return
        if self._paste.key(event.time):
            self._paste_key(event)
        elif self.menu is not None and self.menu.is_open and event.key in ("up", "down", "tab", "enter", "escape"):
            event.stop()
            event.prevent_default()
            self._menu_key(event.key)
        elif event.key == "enter":
            event.stop()
            event.prevent_default()
            self._enter()
        elif event.key == "ctrl+j":
            event.stop()
            event.prevent_default()
            self._newline()
        elif event.key == "escape":
            # TextArea would move focus on and the next keys would go somewhere unseen;
            # the app's Escape closes what is open instead.
            event.prevent_default()
        elif event.key == "tab" and self._wants_completion():
            event.stop()
            event.prevent_default()
            self.post_message(CompletionRequested(self.text, self.cursor_index))

    def _paste_key(self, event: events.Key) -> None:
        """A key of a paste: its newlines go in as typed, with no auto-indent and no running yet."""
        self._close_menu()
        if event.key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.replace("\n", *self.selection)
        elif event.key == "tab":
            event.stop()
            event.prevent_default()
            self.replace("\t", *self.selection)
        self._paste_ends_with_enter = event.key in NEWLINE_KEYS
        if self._paste_timer is not None:
            self._paste_timer.stop()
        self._paste_timer = self.set_timer(PASTE_SETTLE, self._paste_settled)

    def _paste_settled(self) -> None:
        """The paste is in: if it ended with Enter and is complete, run its top-level blocks in order."""
        self._paste.settled()
        self._paste_timer = None
        if not self._paste_ends_with_enter:
            return
        if not is_complete(self.text + "\n"):
            row, _ = self.cursor_location
            indent = next_indent(self.document[row - 1]) if row else ""
            self.insert(indent)  # an open block waits for its next line, as typed ones do
            return
        blocks = split_pasted(self.text)
        self._set_text("")
        for block in blocks:
            self.repl_history.add(block)
            self.post_message(InputSubmitted(block))

    @property
    def cursor_index(self) -> int:
        """The cursor as a character offset into the text, as the kernel's completer expects."""
        return self.document.get_index_from_location(self.cursor_location)

    def _enter(self) -> None:
        if self._enter_runs():
            self.submit()
        elif self.text.strip() or self.cursor_location[0] > 0:
            self._newline()

    def _enter_runs(self) -> bool:
        on_last_line = self.cursor_location[0] == self.document.line_count - 1
        return on_last_line and self.selection.is_empty and self._complete(self.text)

    def _complete(self, text: str) -> bool:
        if self._verdict is None or self._verdict[0] != text:
            self._verdict = (text, is_complete(text))  # codeop compiles the text up to three times
        return self._verdict[1]

    def enter_submits(self) -> bool:
        """Whether Enter pressed now runs the text as a step (not a newline, a completion's pick or a paste's)."""
        menu_open = self.menu is not None and self.menu.is_open
        return not (self.read_only or self._paste.active or menu_open) and self._enter_runs()

    def _newline(self) -> None:
        row, column = self.cursor_location
        indent = next_indent(self.document[row][:column])
        self.replace("\n" + indent, *self.selection)

    def submit(self) -> None:
        """Send the current text as one step and start a fresh input."""
        self._close_menu()
        source = self.text.rstrip()
        self.repl_history.add(source)
        self._set_text("")
        self.post_message(InputSubmitted(source))

    def _wants_completion(self) -> bool:
        row, column = self.cursor_location
        before = self.document[row][:column]
        return bool(_COMPLETABLE_BEFORE.search(before))

    async def offer_completions(self, completions: list[Completion], code: str, cursor: int,
                                inline: bool = True) -> None:
        """Tab's answer: one fit completes inline; several insert what they share and open the menu.

        With `inline` False (a refresh while typing) nothing is inserted, the menu only shows.
        Ignored when the text changed while the kernel was thinking, unless a refresh's word was only
        typed on (`weights.r` asked, `weights.requires_g` typed since): then it narrows to that word.
        """
        if not completions:
            return
        from gradrepl.tui.console.completion_menu import CompletionMenu, narrowed  # at the first Tab

        if self.text != code or self.cursor_index != cursor:
            typed_on = self.text[cursor:self.cursor_index] if self.cursor_index >= cursor else None
            if inline or typed_on is None or self.text != code[:cursor] + typed_on + code[cursor:] \
                    or not _IDENTIFIER.fullmatch(typed_on):
                return
            code, cursor = self.text, self.cursor_index
        start = completions[0].start
        fits = narrowed([c for c in completions if c.start == start], code[start:cursor])
        if not fits:
            return
        if inline and len(fits) == 1:
            self._accept(fits[0], start)
            return
        shared = os.path.commonprefix([c.text for c in fits])
        if inline and len(shared) > cursor - start:
            self.insert(shared[cursor - start:])
        if self.menu is None:
            self.menu = CompletionMenu()
            await self.screen.mount(self.menu)
        self.menu.open(fits, start, self.text[start:self.cursor_index], self.cursor_screen_offset)

    def _menu_key(self, key: str) -> None:
        if key == "up":
            self.menu.move(-1)
            return
        if key == "down":
            self.menu.move(1)
            return
        chosen = self.menu.chosen()
        if key in ("tab", "enter") and chosen is not None:
            self._accept(chosen, self.menu.start)
        self._close_menu()

    def _accept(self, completion: Completion, start: int) -> None:
        self._close_menu()
        self.replace(completion.text, self.document.get_location_from_index(start), self.cursor_location)

    def _close_menu(self) -> None:
        if self.menu is not None and self.menu.is_open:
            self.menu.close()

    @on(TextArea.SelectionChanged)
    def _narrow_menu(self) -> None:
        """Each key narrows the open menu to the word being typed; leaving the word closes it."""
        if self.menu is None or not self.menu.is_open:
            return
        cursor = self.cursor_index
        word = self.text[self.menu.start:cursor] if cursor >= self.menu.start else None
        if word is None or _IDENTIFIER.fullmatch(word) is None:
            self._close_menu()
        else:
            self.menu.narrow(word)
            if not self.menu.is_open and word:  # the kernel's list is capped: ask again for this word
                self.post_message(CompletionRequested(self.text, cursor, typing=True))

    def on_blur(self) -> None:
        self._close_menu()

    def action_copy_or_clear(self) -> None:
        """Ctrl-C with no step running: copy a selection, else throw the input away (IPython's way)."""
        if self.selected_text:
            self.app.copy_to_clipboard(self.selected_text)
        elif self.text:
            self._set_text("")
            self.repl_history.rewind()

    def action_delete_right_or_quit(self) -> None:
        if self.text:
            self.action_delete_right()
        else:
            self.post_message(QuitRequested())

    def action_delete_left(self) -> None:
        """Backspace; inside leading whitespace it removes one indent level."""
        row, column = self.cursor_location
        before = self.document[row][:column]
        if self.selection.is_empty and before and not before.strip(" "):
            width = (len(before) - 1) // len(INDENT) * len(INDENT)
            self._delete_via_keyboard((row, width), (row, column))
            return
        super().action_delete_left()

    def action_page_console(self, pages: int) -> None:
        self.post_message(ConsolePageRequested(pages))

    def action_search_history(self) -> None:
        from gradrepl.tui.console.history_search import HistorySearch  # at the first Ctrl+R

        def take(entry: str | None) -> None:
            if entry is not None:
                self._show_entry(entry)
            self.focus()

        self.app.push_screen(HistorySearch(self.repl_history, self.text if "\n" not in self.text else ""), take)

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
        self._close_menu()
        # An edit, not load_text: load_text parses the whole text again.
        self.replace(text, self.document.start, self.document.end)
