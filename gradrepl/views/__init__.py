"""Views: kernel data turned into the words and tables a learner reads, for every frontend.

No torch, no sympy, no Textual, no prompt_toolkit: a view takes plain data (the protocol's shapes) and
returns text, or words with a role each that a face may style. The kernel sends data only; every
wording of a tensor, a shape, a graph node, a check or a cause is made here, once.
"""
