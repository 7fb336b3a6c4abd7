"""gradrepl: a terminal tutor for PyTorch autograd."""

__version__ = "0.1.0"


def load_ipython_extension(shell) -> None:
    """`%load_ext gradrepl`: the panel in a notebook (gradrepl/notebook/). torch loads here, not before."""
    _extension().load_ipython_extension(shell)


def unload_ipython_extension(shell) -> None:
    _extension().unload_ipython_extension(shell)


def _extension():
    # By name: every room imports this package (for __version__), and none of them depends on the
    # notebook room; IPython alone comes through this door.
    import importlib

    return importlib.import_module("gradrepl.notebook.extension")
