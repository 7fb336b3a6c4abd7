"""The references a task's state is read through, captured when the zygote imports this module,
before any learner code exists: builtins, dict's and object's methods, TensorBase's own getsets and
methods (an immutable C type) and the autograd engine's entry (task_state.py says why)."""

from __future__ import annotations

import contextvars
import math
import os

import torch

# Builtins bound here: a learner who rebinds builtins.len or builtins.enumerate changes nothing the
# task-state modules call (each imports the ones it calls from here, and a module's own globals are
# looked up before builtins).
bool, int, float, str, list, tuple, dict, set, enumerate, len, id, type, issubclass, complex, zip, sorted = (  # noqa
    bool, int, float, str, list, tuple, dict, set, enumerate, len, id, type, issubclass, complex, zip, sorted)
_type, _id, _len, _str, _float, _list, _tuple, _issubclass = type, id, len, str, float, list, tuple, issubclass
dict_get, dict_items, dict_values = dict.get, dict.items, dict.values
object_getattribute = object.__getattribute__
type_name = type.__dict__["__name__"].__get__
type_module = type.__dict__["__module__"].__get__
_isfinite = math.isfinite
_urandom = os.urandom
_copy_context = contextvars.copy_context

BASE = torch._C.TensorBase
GET = {name: BASE.__dict__[name].__get__ for name in (
    "grad", "requires_grad", "is_leaf", "grad_fn", "retains_grad", "dtype", "shape", "_version",
    "is_nested", "layout", "output_nr")}
TOLIST, DETACH, NUMEL, DATA_PTR = (BASE.__dict__[n] for n in ("tolist", "detach", "numel", "data_ptr"))
STRIDED = torch.strided
NO_TORCH_FUNCTION = torch._C.DisableTorchFunction
DISPATCH_DEPTH = torch._C._len_torch_dispatch_stack
FUNCTION_MODE_ON = torch._C._is_torch_function_mode_enabled
GRAD_ENABLED = torch._C.is_grad_enabled  # an attempt may leave recording off for every later step
TENSOR_TYPES = {torch.Tensor: "torch.Tensor", torch.nn.Parameter: "torch.nn.Parameter"}
MODULE, OPTIMIZER = torch.nn.Module, torch.optim.Optimizer
ACCUMULATE_GRAD = torch._C._functions.AccumulateGrad
GRADIENT_EDGE = torch.autograd.graph.GradientEdge
ENGINE = torch.autograd.variable.Variable._execution_engine
RUN_BACKWARD = _type(ENGINE).run_backward
STASH, UNSTASH = torch._C._stash_obj_in_tls, torch._C._remove_obj_from_tls
AUTOGRAD, AUTOGRAD_GRAPH = torch.autograd, torch.autograd.graph
