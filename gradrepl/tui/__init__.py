"""The Textual face of gradrepl: a console on the left, the live tensor panel on the right.

Nothing here imports torch or sympy; every question goes to the kernel through `Session`.
"""
