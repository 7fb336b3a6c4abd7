"""Symbolic cross-checks (kernel side): sympy's derivative beside autograd's number.

expr.py parses learner formulas safely, crosscheck.py compares derivatives,
shadow.py records formulas of small tensors while code runs, and ops.py is what
the kernel worker calls. Only ops.render_check is safe to use outside a kernel.
"""
