"""The notebook panel's cost (issue 26's speed targets, printed as ratios, never asserted).

1. nbclient, a real ipykernel: many small cells with 50 live tensors, one changed per cell; each
   cell's time from its execute request to its reply, with the panel and without (best of runs).
2. In this process (IPython's InteractiveShell): the inspector's own time per cell (the extension's
   pre/post_run_cell callbacks) with 10 and 1,000 live tensors, and with the panel off; and the bytes
   the panel sends to the frontend for a cell that changes one tensor.
"""

import json
import time

from benchmarks.timing import pick

CELLS = pick(250, 20)
RUNS = pick(5, 1)  # best of: a busy machine adds a millisecond to one run, rarely to five
LIVE = 50


def nbclient_cell_ms(with_panel: bool, shown: bool = False) -> tuple[float, float]:
    """(summed cell times, request to reply; the whole run of those cells, first request to last reply),
    best of RUNS. `shown`: the panel's view says it was rendered (the comm message panel.js sends once
    a frontend shows it), so cells send deltas, as in JupyterLab, and the panel reads a cell after its
    reply (the whole run shows what that reading still costs); else no frontend ever shows it
    (nbconvert) and its state is synced whole, in the cell."""
    import nbclient
    import nbformat

    setup = ["import torch", "\n".join(f"t{i} = torch.ones(4, requires_grad=True) * 1.0" for i in range(LIVE))]
    if with_panel:
        setup.insert(0, "%load_ext gradrepl")
    cells = setup + [f"t{i % LIVE} = t{i % LIVE} + 1" for i in range(CELLS)]
    best = whole = float("inf")
    for _ in range(RUNS):
        notebook = nbformat.v4.new_notebook()
        notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
        client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3")
        started: dict[int, float] = {}
        spent = []

        def execute(cell, cell_index):
            if shown and cell_index == len(setup):
                tell_rendered(client)
            started[cell_index] = time.perf_counter()

        def executed(cell, cell_index, execute_reply):
            if cell_index >= len(setup):
                spent.append(time.perf_counter() - started[cell_index])

        client.on_cell_execute, client.on_cell_executed = execute, executed
        client.execute()
        best = min(best, sum(spent) * 1000)
        whole = min(whole, (time.perf_counter() - started[len(setup)]) * 1000)
    return best, whole


def tell_rendered(client) -> None:
    """What the view does once a frontend shows the panel: {"event": "rendered"} on its comm."""
    panel = next(comm_id for comm_id, state in client.widget_state.items() if "rows" in state)
    client.kc.shell_channel.send(client.kc.session.msg("comm_msg", {
        "comm_id": panel, "data": {"method": "custom", "content": {"event": "rendered"}}}))


def in_process(live: int, off: bool = False) -> tuple[float, float]:
    """(the callbacks' median ms per cell, bytes sent per cell) for cells changing one of `live` tensors."""
    import statistics

    from IPython.core.interactiveshell import InteractiveShell

    from gradrepl.notebook.extension import loaded

    InteractiveShell.clear_instance()
    shell = InteractiveShell.instance()
    shell.run_cell("%load_ext gradrepl", store_history=True)
    extension = loaded(shell)
    extension.panel.rendered = True  # as in a notebook whose frontend shows the panel: deltas, no fallback table
    shell.run_cell("import torch\n" + "\n".join(f"t{i} = torch.ones(4, requires_grad=True) * 1.0"
                                                for i in range(live)), store_history=True, silent=True)
    if off:
        shell.run_cell("%gradrepl off", store_history=True)
    spent, sent = [], []
    for event, callback in (("pre_run_cell", extension.pre_run_cell), ("post_run_cell", extension.post_run_cell)):
        shell.events.unregister(event, callback)

        def timed(info, callback=callback):
            began = time.perf_counter()
            callback(info)
            spent.append(time.perf_counter() - began)

        shell.events.register(event, timed)
    publish = extension.panel.comm.publish_msg

    def counted(msg_type, data=None, metadata=None, buffers=None, **keys):
        sent.append(len(json.dumps(data, default=str)))
        return publish(msg_type, data, metadata, buffers, **keys)

    extension.panel.comm.publish_msg = counted
    cells = pick(200, 20)
    per_cell, bytes_per_cell = [], []
    for i in range(cells):
        spent.clear()
        sent.clear()
        shell.run_cell(f"t{i % live} = t{i % live} + 1", store_history=True)
        per_cell.append(sum(spent) * 1000)
        bytes_per_cell.append(sum(sent))
    shell.run_cell("%unload_ext gradrepl")
    InteractiveShell.clear_instance()
    return statistics.median(per_cell), statistics.median(bytes_per_cell)


def main() -> None:
    (without, without_whole), (shown, shown_whole) = nbclient_cell_ms(False), nbclient_cell_ms(True, shown=True)
    unseen, _ = nbclient_cell_ms(True)
    print(f"nbclient, {CELLS} cells, {LIVE} live tensors, one changed per cell: {without / CELLS:.2f} ms a cell "
          f"without the panel; with it shown (deltas, as in JupyterLab) {shown / CELLS:.2f} ms: ratio "
          f"{shown / without:.2f}x (target <= 1.10x); with no frontend to show it (nbconvert: the state synced "
          f"whole and a fallback table each cell) {unseen / CELLS:.2f} ms: ratio {unseen / without:.2f}x")
    print(f"nbclient, the whole run of those cells (the shown panel's reading after each reply included): "
          f"{without_whole:.0f} ms without the panel, {shown_whole:.0f} ms with it shown: ratio "
          f"{shown_whole / without_whole:.2f}x")
    for live, target in ((10, 3), (1000, 15)):
        ms, sent = in_process(live)
        print(f"in process, {live:,} live tensors: the inspector takes {ms:.2f} ms a cell (target <= {target} ms), "
              f"the panel sends {sent:,} bytes a cell (target <= 2 KB)")
    ms, sent = in_process(10, off=True)
    print(f"in process, panel off: {ms:.3f} ms a cell, {sent} bytes sent (target 0)")


if __name__ == "__main__":
    main()
