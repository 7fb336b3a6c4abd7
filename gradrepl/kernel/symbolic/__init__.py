"""Symbolic cross-checks (kernel side): sympy's derivative beside autograd's number.

expr.py parses learner formulas safely, crosscheck.py compares derivatives,
shadow.py records formulas of small tensors while code runs (the TorchFunctionMode;
formula.py the formulas, recorder.py the shadows kept, rules.py what each op makes,
limits.py how far it goes), and checks.py holds the checks the kernel's requests call;
they return data, and views/check.py words it for the frontends.
"""
