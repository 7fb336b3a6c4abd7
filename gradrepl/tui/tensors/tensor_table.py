"""The live tensor panel: one row per named tensor, kept in place and patched cell by cell."""

from __future__ import annotations

from typing import Any, Iterable

from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey

from gradrepl.tui.tensors.cells import COLUMNS, row_cells
from gradrepl.tui.messages import PanelUpdated

LIT_STYLE = "bold yellow"
MARK = "● "


class TensorTable(DataTable):
    """Rows changed in the last step are lit; only cells whose text changes are updated."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False, **kwargs)
        self.rows_by_name: dict[str, dict[str, Any]] = {}
        self._cells: dict[str, dict[str, Text]] = {}
        self._lit: dict[str, set[str]] = {}

    def on_mount(self) -> None:
        for key, label in COLUMNS.items():
            self.add_column(label, key=key)

    def apply_step(self, changed: Iterable[dict[str, Any]], removed: Iterable[str]) -> tuple[list[str], list[str]]:
        """Show one step's delta: add or patch `changed` rows, drop `removed` names."""
        previously_lit = self._lit
        self._lit = {}
        changed_names: list[str] = []
        for row in changed:
            name = row["name"]
            changed_names.append(name)
            cells = row_cells(row)
            old = self._cells.get(name)
            self.rows_by_name[name] = row
            self._cells[name] = cells
            if old is None:
                self._lit[name] = set(COLUMNS)
                self.add_row(*(_lit(key, cells[key]) for key in COLUMNS), key=name)
                continue
            lit = {key for key in COLUMNS if cells[key] != old[key]} | {"name"}
            self._lit[name] = lit
            for key in lit:
                self._patch(name, key, _lit(key, cells[key]))
        removed_names = [name for name in removed if name in self._cells]
        for name in removed_names:
            self.remove_row(name)
            del self._cells[name]
            del self.rows_by_name[name]
        for name, keys in previously_lit.items():
            if name not in self._cells:
                continue
            for key in keys - self._lit.get(name, set()):
                self._patch(name, key, _plain(key, self._cells[name][key]))
        self.post_message(PanelUpdated(changed_names, removed_names))
        return changed_names, removed_names

    def _patch(self, name: str, key: str, cell: Text) -> None:
        # Widen a column when a cell outgrows it, never shrink one: a shrink re-measures
        # the whole column (cost grows with the live tensors) and makes the panel jitter.
        wider = cell.cell_len > self.columns[ColumnKey(key)].content_width
        self.update_cell(name, key, cell, update_width=wider)

    @property
    def names(self) -> list[str]:
        """Names in the order the panel shows them."""
        return [row.key.value for row in self.ordered_rows]

    def lit_names(self) -> list[str]:
        """Names lit as changed by the last step."""
        return list(self._lit)


def _lit(key: str, cell: Text) -> Text:
    text = cell.copy()
    text.stylize(LIT_STYLE)
    return Text.assemble((MARK, LIT_STYLE), text) if key == "name" else text


def _plain(key: str, cell: Text) -> Text:
    return Text.assemble("  ", cell) if key == "name" else cell
