"""The kernel's sandbox: layers applied in a fresh kernel before learner code runs.

layers.py applies and reports them; refusals.py tells which layer refused an error (as data: the
words are views/refusals.py's); landlock.py, seccomp.py, mounts.py and capabilities.py are the
kernel interfaces it speaks through ctypes.
"""

from gradrepl.kernel.sandbox.layers import Policy, address_space_reached, apply, out_of_memory, own_scratch
from gradrepl.kernel.sandbox.refusals import refusal

__all__ = ["Policy", "address_space_reached", "apply", "out_of_memory", "own_scratch", "refusal"]
