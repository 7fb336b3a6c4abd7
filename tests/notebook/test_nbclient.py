"""The panel in a notebook, level 2: nbclient runs the notebooks in tests/notebooks/ in a real ipykernel
(store_widget_state=True, no browser). After each cell the panel's widget state, as nbclient keeps and
saves it, holds the same rows as `gradrepl run --json` for the same statements, one cell a step, plus
`cell`: the cell's execution count for the rows it changed."""

from __future__ import annotations

import copy
import json
import subprocess

import pytest

from tests.support.paths import GRADREPL, ROOT

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("anywidget")

NOTEBOOKS = sorted((ROOT / "tests" / "notebooks").glob("*.ipynb"))


def panel_state(states: dict) -> dict | None:
    panels = [state for state in states.values() if "rows" in state and "footer" in state]
    assert len(panels) <= 1, panels
    return panels[0] if panels else None


def run_notebook(path, workdir):
    """The notebook executed; the panel's rows after each cell, and the notebook as saved."""
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3", store_widget_state=True,
                                     resources={"metadata": {"path": str(workdir)}})
    after: list[list[dict]] = []

    def executed(cell, cell_index, execute_reply):
        state = panel_state(client.widget_state)
        assert execute_reply["content"]["status"] == "ok", (cell.source, cell.outputs)
        after.append(copy.deepcopy(state["rows"]) if state else None)

    client.on_cell_executed = executed
    client.execute()
    return notebook, after


def run_json(statements: list[str], workdir) -> list[list[dict]]:
    script = workdir / "same_statements.py"
    script.write_text("\n".join(statements) + "\n")
    done = subprocess.run(GRADREPL + ["run", "--json", str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return [line["tensors"] for line in lines if line["type"] == "step"]


@pytest.mark.timeout(600)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_saved_widget_state_after_each_cell_is_gradrepl_runs(path, tmp_path):
    notebook, after = run_notebook(path, tmp_path)
    cells = [cell.source for cell in notebook.cells]
    assert cells[0] == "%load_ext gradrepl"
    steps = run_json(cells[1:], tmp_path)
    assert len(steps) == len(cells) - 1
    for index, (rows, expected) in enumerate(zip(after[1:], steps), start=1):
        count = notebook.cells[index].execution_count
        assert [{key: value for key, value in row.items() if key != "cell"} for row in rows] == expected, \
            f"after cell {index}: {cells[index]!r}"
        for row in rows:
            assert (row["cell"] == count) == row["changed"], (cells[index], row)
    saved = panel_state({key: value["state"] for key, value in
                         notebook.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"].items()})
    assert saved["rows"] == after[-1]
    assert saved["footer"].startswith("no sandbox:")
