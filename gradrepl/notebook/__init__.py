"""The panel in notebooks: `%load_ext gradrepl` in Jupyter, VS Code and Colab.

This room runs inside the learner's own Python (their ipykernel), not in a gradrepl
kernel: there is no sandbox here, and the panel's footer says so. It reuses the
learner-process inspector (gradrepl/kernel/inspect/) directly, set up in one place
(cells.py); IPython's events drive it (extension.py); an anywidget panel shows the
rows (panel.py), a text/HTML table where no widget frontend exists (fallback.py);
the %magics live in magics.py. `learn("accumulation")` plays a lesson here (lesson.py), by the
lesson engine `play` and the TUI use.
"""

from gradrepl.notebook.extension import load_ipython_extension, unload_ipython_extension

__all__ = ["learn", "load_ipython_extension", "unload_ipython_extension"]


def __getattr__(name: str):
    if name == "learn":  # loaded on first use: the lesson engine is no part of %load_ext's cost
        from gradrepl.notebook.lesson import learn

        return learn
    raise AttributeError(f"module 'gradrepl.notebook' has no attribute {name!r}")
