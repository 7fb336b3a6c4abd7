"""The kernel's sandbox: layers applied in a fresh kernel before learner code runs.

layers.py applies and reports them; landlock.py, seccomp.py, mounts.py and
capabilities.py are the kernel interfaces it speaks through ctypes.
"""

from gradrepl.kernel.sandbox.layers import (Policy, address_space_reached, apply, default_disk_limit,
                                            default_memory_limit, explain, own_scratch, parse_size)

__all__ = ["Policy", "address_space_reached", "apply", "default_disk_limit", "default_memory_limit", "explain",
           "own_scratch", "parse_size"]
