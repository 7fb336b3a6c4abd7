"""The word's layout, which the client writes (client/interrupt_target.py) and the kernel reads
(kernel/aimed_word.py): one little-endian signed 64-bit step number at the start of one page."""

from __future__ import annotations

import mmap
import struct

ANY_STEP = 0   # the word when no step is aimed at: whichever step runs is stopped
PAGE = mmap.PAGESIZE
WORD = struct.Struct("<q")
