"""gradrepl: a terminal tutor for PyTorch autograd."""

__version__ = "0.1.0"
