"""Input history that survives restarts: one JSON string per line in the user data dir.

The TUI and the plain REPL share one file, so a line typed in either comes back in both.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

MAX_ENTRIES = 1000
BLOCK = 64 << 10  # bytes read at a time, from the end of the file


def default_path() -> Path | None:
    """The shared history file, or None (history in memory only) when the data dir is unusable."""
    from gradrepl.paths import data_dir

    try:
        return data_dir() / "repl_history.jsonl"
    except OSError:
        return None


class History:
    """Entries oldest first, with a cursor for Up/Down browsing."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.entries: list[str] = self._load()
        self._cursor = len(self.entries)
        self._draft = ""

    def _load(self) -> list[str]:
        """The newest MAX_ENTRIES entries. The file only grows: it is read from its end, so a years-long
        history costs the start-up no more than a short one."""
        if self.path is None or not self.path.exists():
            return []
        entries = []
        for line in _lines_from_the_end(self.path):
            if len(entries) == MAX_ENTRIES:
                break
            try:
                entry = json.loads(line.decode("utf-8", errors="replace"))
            except ValueError:
                continue  # a torn last line after a crash is not worth losing the rest
            if isinstance(entry, str):
                entries.append(entry)
        entries.reverse()
        return entries

    def add(self, source: str) -> None:
        """Remember `source` (not twice in a row) and append it to the file."""
        self._cursor = len(self.entries)
        if not source.strip() or (self.entries and self.entries[-1] == source):
            return
        self.entries.append(source)
        self._cursor = len(self.entries)
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(source) + "\n")
        except OSError:
            self.path = None  # a read-only home must not break the REPL; keep history in memory

    def rewind(self) -> None:
        """The next walk starts again from the newest entry (the input was thrown away)."""
        self._cursor = len(self.entries)

    def previous(self, current: str) -> str | None:
        """The entry before the cursor that starts with the draft, or None at the oldest.

        `current` becomes the draft when a walk starts at the newest end; a typed draft
        then walks only the entries that start with it, as prompt_toolkit and IPython do.
        """
        if self._cursor == len(self.entries):
            self._draft = current
        for index in range(self._cursor - 1, -1, -1):
            if self.entries[index].startswith(self._draft):
                self._cursor = index
                return self.entries[index]
        return None

    def next(self) -> str | None:
        """The entry after the cursor that starts with the draft; past the newest, the draft itself."""
        if self._cursor >= len(self.entries):
            return None
        for index in range(self._cursor + 1, len(self.entries)):
            if self.entries[index].startswith(self._draft):
                self._cursor = index
                return self.entries[index]
        self._cursor = len(self.entries)
        return self._draft

    def search(self, query: str) -> list[str]:
        """Entries containing `query`, newest first, each once (Ctrl-R)."""
        found: list[str] = []
        for entry in reversed(self.entries):
            if query in entry and entry not in found:
                found.append(entry)
        return found


def _lines_from_the_end(path: Path) -> Iterator[bytes]:
    """The file's lines, last first, read a block at a time from the end."""
    with path.open("rb") as handle:
        position = handle.seek(0, os.SEEK_END)
        partial = b""  # the start of a line whose beginning lies in the block before
        while position > 0:
            step = min(BLOCK, position)
            position -= step
            handle.seek(position)
            lines = (handle.read(step) + partial).split(b"\n")
            partial = lines.pop(0)
            yield from reversed(lines)
        yield partial
