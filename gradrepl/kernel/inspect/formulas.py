"""The local derivative each autograd node applies, as words over the learner's names and as numbers.

One rule per node class (``MulBackward0``): ``expr`` is the forward op as the
learner would write it (``{a} * {b}``: it names a node's output when no
statement named it), ``receives`` what each input is sent, over ``{g}`` (the
gradient arriving, ``grad_a``), ``{a}``, ``{b}``, ``{c}`` (the inputs' names),
``{out}`` (the output's) and the op's saved numbers (``{exponent}``), and
``grads`` the same formulas computed from the node's saved values (``node._saved_self``
...) and the gradient arriving. The trace evaluates ``grads`` and shows a
formula only where it equals the gradient the engine really sent, so a formula
is right or absent; a node class outside the table has none ("no formula for this op").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import torch

MAX_PIECES = 64     # inputs of a cat or stack given a formula each
TOLERANCE = 1e-6  # relative: float32 gradients computed in two orders agree this closely, or the formula is wrong


@dataclass(frozen=True)
class Rule:
    expr: str
    receives: tuple[str | None, ...]
    grads: Callable  # (Saved, g) -> tuple of tensors (or None), one per input, before any broadcast reduction
    saved: dict[str, str] = field(default_factory=dict)  # placeholder -> saved attribute, for the values shown


class Saved:
    """A node's saved values by their short names: ``s.self`` is ``node._saved_self``."""

    def __init__(self, node):
        self._node = node

    def __getattr__(self, name: str):
        return getattr(self._node, f"_saved_{name}")


def _sum_to(grad, shape):
    """A broadcast input's gradient, summed back to the input's shape (the engine does the same)."""
    if grad is None or shape is None or list(grad.shape) == list(shape):
        return grad
    while grad.dim() > len(shape):
        grad = grad.sum(0)
    for dim, size in enumerate(shape):
        if size == 1 and grad.shape[dim] != 1:
            grad = grad.sum(dim, keepdim=True)
    return grad.reshape(shape)


def _reduced(s, g, numel):
    """A loss's reduction: 0 none, 1 mean, 2 sum (torch's enum)."""
    return g / numel if s.reduction == 1 else g


def _unsqueezed(g, dims, keepdim, rank):
    if keepdim or dims is None:
        return g
    for dim in sorted(d % rank for d in (dims if isinstance(dims, (tuple, list)) else (dims,))):
        g = g.unsqueeze(dim)
    return g


def _reduced_dims(s, g):
    """SumBackward1/MeanBackward1: the gradient spread back over the reduced dims."""
    sizes = s.self_sym_sizes
    dims = s.dim if s.dim else tuple(range(len(sizes)))
    return _unsqueezed(g, dims, s.keepdim, len(sizes)).expand(sizes)


def _gelu(x):
    return 0.5 * (1 + torch.erf(x / math.sqrt(2))) + x * torch.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


def _nll(s, g):
    logp = s.self
    target = s.target
    picked = torch.zeros_like(logp)
    if logp.dim() == 1:
        picked[target] = -1.0
    else:
        picked.scatter_(1, target.unsqueeze(1), -1.0)
    weight = s.weight
    if weight is not None:
        picked = picked * weight
    if s.reduction == 1:
        return (g * picked / s.total_weight,)
    return ((g.unsqueeze(-1) if g.dim() else g) * picked,)


def _bce(s, g):
    x, y = s.self, s.target
    grad = g * (x - y) / (x * (1 - x)).clamp_min(1e-12)
    return (_reduced(s, grad, x.numel()),)


def _smooth_l1(s, g, beta):
    d = s.self - s.target
    local = torch.where(d.abs() < beta, d / beta, d.sign())
    grad = _reduced(s, g * local, d.numel())
    return grad, -grad


def _huber(s, g, delta):
    d = s.self - s.target
    local = torch.where(d.abs() <= delta, d, delta * d.sign())
    grad = _reduced(s, g * local, d.numel())
    return grad, -grad


def _maxmin(s, g, wins):
    a, b = s.self, s.other
    tie = (a == b).to(g.dtype) / 2
    return g * (wins(a, b).to(g.dtype) + tie), g * (wins(b, a).to(g.dtype) + tie)


def _count(sizes, dims) -> int:
    """How many elements a reduction over ``dims`` (all when empty) averaged."""
    return math.prod(sizes[d] for d in (dims or range(len(sizes))))


def _select(s, g):
    out = torch.zeros(s.self_sym_sizes, dtype=g.dtype)
    out.select(s.dim, s.index).copy_(g)
    return (out,)


def _slice(s, g):
    out = torch.zeros(s.self_sym_sizes, dtype=g.dtype)
    end = min(s.end, s.self_sym_sizes[s.dim])
    out.narrow(s.dim, s.start, end - s.start)[(slice(None),) * s.dim + (slice(None, None, s.step),)].copy_(g)
    return (out,)


def _index(s, g):
    out = torch.zeros(s.self_sym_sizes, dtype=g.dtype)
    return (out.index_put(tuple(s.indices), g, accumulate=True),)


def _permute(s, g):
    inverse = [0] * len(s.dims)
    for position, dim in enumerate(s.dims):
        inverse[dim] = position
    return (g.permute(inverse),)


def _norm(s, g):
    if s.ord != 2.0 or s.dim:
        return (None,)
    return (g * s.self / s.result,)


def _max_all(s, g):
    hit = (s.self == s.result).to(g.dtype)
    return (g * hit / hit.sum(),)


def _amax(s, g):
    result = _unsqueezed(s.result, s.dim, s.keepdim, s.self.dim())
    hit = (s.self == result).to(g.dtype)
    spread = _unsqueezed(g, s.dim, s.keepdim, s.self.dim())
    return (spread * hit / hit.sum(dim=s.dim, keepdim=True),)


def _max_dim(s, g):
    out = torch.zeros(s.self_sym_sizes, dtype=g.dtype)
    indices = s.indices if s.keepdim else s.indices.unsqueeze(s.dim)
    spread = g if s.keepdim else g.unsqueeze(s.dim)
    return (out.scatter(s.dim, indices, spread),)


def _softplus(s, g):
    scaled = s.self * s.beta
    return (torch.where(scaled > s.threshold, g, g * torch.sigmoid(scaled)),)


def _elu(s, g):
    x = s.self
    negative = s.input_scale * s.alpha * s.scale * torch.exp(x * s.input_scale)
    return (g * torch.where(x > 0, torch.full_like(x, s.scale), negative),)


def _clamp(s, g):
    x = s.self
    keep = torch.ones_like(x, dtype=torch.bool)
    if s.min is not None:
        keep &= x >= s.min
    if s.max is not None:
        keep &= x <= s.max
    return (g * keep.to(g.dtype),)


def _var(s, g, std: bool):
    x = s.self
    dims = s.dim
    rank = x.dim()
    mean = x.mean(dim=dims, keepdim=True) if dims else x.mean()
    correction = 1 if s.correction is None else s.correction  # None: the default, Bessel's
    count = (x.numel() if not dims else math.prod(x.shape[d] for d in dims)) - correction
    spread = _unsqueezed(g, dims, s.keepdim, rank) if dims else g
    grad = spread * 2 * (x - mean) / count
    if std:
        grad = grad / (2 * (_unsqueezed(s.result, dims, s.keepdim, rank) if dims else s.result))
    return (grad,)


def _logsumexp(s, g):
    rank = s.self.dim()
    return (_unsqueezed(g, s.dim, s.keepdim, rank) * torch.exp(s.self - _unsqueezed(s.result, s.dim, s.keepdim, rank)),)


def _cumsum(s, g):
    return (g.flip(s.dim).cumsum(s.dim).flip(s.dim),)


def _trace(s, g):
    return (g * torch.eye(*s.self_sym_sizes, dtype=g.dtype),)


def _diagonal(s, g):
    out = torch.zeros(s.self_sym_sizes, dtype=g.dtype)
    out.diagonal(s.offset, s.dim1, s.dim2).copy_(g)
    return (out,)


def _outputs_zero_filled(node, g_all) -> list:
    """Every piece's gradient; a piece backward never reached sends zeros (the engine passes None)."""
    shapes = [meta.shape for meta in node._input_metadata]
    model = next(g for g in g_all if g is not None)
    return [g if g is not None else torch.zeros(shape, dtype=model.dtype) for g, shape in zip(g_all, shapes)]


def _split(node, s, g_all):
    return (torch.cat(_outputs_zero_filled(node, g_all), s.dim),)


def _unbind(node, s, g_all):
    return (torch.stack(_outputs_zero_filled(node, g_all), s.dim),)


G = "{g}"
RULES: dict[str, Rule] = {
    # arithmetic
    "AddBackward0": Rule("{a} + {b}{times_alpha}", (G, "{g}{times_alpha}"), lambda s, g: (g, g * s.alpha)),
    "SubBackward0": Rule("{a} - {b}{times_alpha}", (G, "-{g}{times_alpha}"), lambda s, g: (g, -g * s.alpha)),
    "RsubBackward0": Rule("{b} - {a}{times_alpha}", ("-{g}{times_alpha}", G), lambda s, g: (-g * s.alpha, g)),
    "RsubBackward1": Rule("c - {a}{times_alpha}", ("-{g}{times_alpha}",), lambda s, g: (-g * s.alpha,)),
    "MulBackward0": Rule("{a} * {b}", ("{g} * {b}", "{g} * {a}"),
                         lambda s, g: (g * s.other if s.other is not None else None,
                                       g * s.self if s.self is not None else None), {"a": "self", "b": "other"}),
    "DivBackward0": Rule("{a} / {b}", ("{g} / {b}", "-{g} * {a} / {b} ** 2"),
                         lambda s, g: (g / s.other if s.other is not None else None,
                                       -g * s.self / s.other ** 2 if s.self is not None else None),
                         {"a": "self", "b": "other"}),
    "NegBackward0": Rule("-{a}", ("-{g}",), lambda s, g: (-g,)),
    "PowBackward0": Rule("{a} ** {exponent}", ("{g} * {exponent} * {a}{power_less_one}",),
                         lambda s, g: (g * s.exponent * s.self ** (s.exponent - 1),), {"a": "self"}),
    "PowBackward1": Rule("{a} ** {b}", ("{g} * {b} * {a} ** ({b} - 1)", "{g} * {out} * log({a})"),
                         lambda s, g: (g * s.exponent * s.self ** (s.exponent - 1), g * s.result * torch.log(s.self)),
                         {"a": "self", "b": "exponent", "out": "result"}),
    "PowBackward2": Rule("{self} ** {a}", ("{g} * {out} * log({self})",),
                         lambda s, g: (g * s.result * math.log(s.self),), {"out": "result"}),
    "ReciprocalBackward0": Rule("1 / {a}", ("-{g} * {out} ** 2",), lambda s, g: (-g * s.result ** 2,), {"out": "result"}),
    "SqrtBackward0": Rule("sqrt({a})", ("{g} / (2 * {out})",), lambda s, g: (g / (2 * s.result),), {"out": "result"}),
    "RsqrtBackward0": Rule("rsqrt({a})", ("-{g} * {out} ** 3 / 2",), lambda s, g: (-0.5 * g * s.result ** 3,),
                           {"out": "result"}),
    "AbsBackward0": Rule("abs({a})", ("{g} * sign({a})",), lambda s, g: (g * s.self.sign(),), {"a": "self"}),
    "SignBackward0": Rule("sign({a})", ("0",), lambda s, g: (torch.zeros_like(g),)),
    "FloorBackward0": Rule("floor({a})", ("0",), lambda s, g: (torch.zeros_like(g),)),
    "RoundBackward0": Rule("round({a})", ("0",), lambda s, g: (torch.zeros_like(g),)),
    "CloneBackward0": Rule("{a}.clone()", (G,), lambda s, g: (g,)),
    "AddcmulBackward0": Rule("{a} + {value} * {b} * {c}", (G, "{g} * {value} * {c}", "{g} * {value} * {b}"),
                             lambda s, g: (g, g * s.value * s.tensor2, g * s.value * s.tensor1),
                             {"b": "tensor1", "c": "tensor2"}),
    "LerpBackward0": Rule("lerp({a}, {b}, {weight})", ("{g} * (1 - {weight})", "{g} * {weight}"),
                          lambda s, g: (g * (1 - s.weight), g * s.weight)),
    "Atan2Backward0": Rule("atan2({a}, {b})", ("{g} * {b} / ({a} ** 2 + {b} ** 2)", "-{g} * {a} / ({a} ** 2 + {b} ** 2)"),
                           lambda s, g: (g * s.other / (s.self ** 2 + s.other ** 2),
                                         -g * s.self / (s.self ** 2 + s.other ** 2)), {"a": "self", "b": "other"}),
    "MaximumBackward0": Rule("maximum({a}, {b})", ("{g} where {a} > {b} (half at a tie)", "{g} where {b} > {a} (half at a tie)"),
                             lambda s, g: _maxmin(s, g, torch.gt), {"a": "self", "b": "other"}),
    "MinimumBackward0": Rule("minimum({a}, {b})", ("{g} where {a} < {b} (half at a tie)", "{g} where {b} < {a} (half at a tie)"),
                             lambda s, g: _maxmin(s, g, torch.lt), {"a": "self", "b": "other"}),
    # exp and log
    "ExpBackward0": Rule("exp({a})", ("{g} * {out}",), lambda s, g: (g * s.result,), {"out": "result"}),
    "Exp2Backward0": Rule("exp2({a})", ("{g} * {out} * log(2)",), lambda s, g: (g * s.result * math.log(2),),
                          {"out": "result"}),
    "Expm1Backward0": Rule("expm1({a})", ("{g} * ({out} + 1)",), lambda s, g: (g * (s.result + 1),), {"out": "result"}),
    "LogBackward0": Rule("log({a})", ("{g} / {a}",), lambda s, g: (g / s.self,), {"a": "self"}),
    "Log2Backward0": Rule("log2({a})", ("{g} / ({a} * log(2))",), lambda s, g: (g / (s.self * math.log(2)),), {"a": "self"}),
    "Log10Backward0": Rule("log10({a})", ("{g} / ({a} * log(10))",), lambda s, g: (g / (s.self * math.log(10)),),
                           {"a": "self"}),
    "Log1PBackward0": Rule("log1p({a})", ("{g} / (1 + {a})",), lambda s, g: (g / (1 + s.self),), {"a": "self"}),
    "LogsumexpBackward0": Rule("logsumexp({a})", ("{g} * exp({a} - {out})",), _logsumexp, {"a": "self", "out": "result"}),
    "ErfBackward0": Rule("erf({a})", ("{g} * 2 / sqrt(pi) * exp(-{a} ** 2)",),
                         lambda s, g: (g * 2 / math.sqrt(math.pi) * torch.exp(-s.self ** 2),), {"a": "self"}),
    # trigonometry
    "SinBackward0": Rule("sin({a})", ("{g} * cos({a})",), lambda s, g: (g * s.self.cos(),), {"a": "self"}),
    "CosBackward0": Rule("cos({a})", ("-{g} * sin({a})",), lambda s, g: (-g * s.self.sin(),), {"a": "self"}),
    "TanBackward0": Rule("tan({a})", ("{g} * (1 + {out} ** 2)",), lambda s, g: (g * (1 + s.result ** 2),), {"out": "result"}),
    "AsinBackward0": Rule("asin({a})", ("{g} / sqrt(1 - {a} ** 2)",), lambda s, g: (g / torch.sqrt(1 - s.self ** 2),),
                          {"a": "self"}),
    "AcosBackward0": Rule("acos({a})", ("-{g} / sqrt(1 - {a} ** 2)",), lambda s, g: (-g / torch.sqrt(1 - s.self ** 2),),
                          {"a": "self"}),
    "AtanBackward0": Rule("atan({a})", ("{g} / (1 + {a} ** 2)",), lambda s, g: (g / (1 + s.self ** 2),), {"a": "self"}),
    "SinhBackward0": Rule("sinh({a})", ("{g} * cosh({a})",), lambda s, g: (g * s.self.cosh(),), {"a": "self"}),
    "CoshBackward0": Rule("cosh({a})", ("{g} * sinh({a})",), lambda s, g: (g * s.self.sinh(),), {"a": "self"}),
    # activations
    "TanhBackward0": Rule("tanh({a})", ("{g} * (1 - {out} ** 2)",), lambda s, g: (g * (1 - s.result ** 2),), {"out": "result"}),
    "SigmoidBackward0": Rule("sigmoid({a})", ("{g} * {out} * (1 - {out})",), lambda s, g: (g * s.result * (1 - s.result),),
                             {"out": "result"}),
    "LogSigmoidBackward0": Rule("logsigmoid({a})", ("{g} * (1 - sigmoid({a}))",),
                                lambda s, g: (g * (1 - torch.sigmoid(s.self)),), {"a": "self"}),
    "ReluBackward0": Rule("relu({a})", ("{g} * ({out} > 0)",), lambda s, g: (g * (s.result > 0).to(g.dtype),), {"out": "result"}),
    "LeakyReluBackward0": Rule("leaky_relu({a})", ("{g} * (1 if {a} > 0 else {negative_slope})",),
                               lambda s, g: (g * torch.where(s.self > 0, 1.0, s.negative_slope).to(g.dtype),), {"a": "self"}),
    "EluBackward0": Rule("elu({a})", ("{g} * (1 if {a} > 0 else {alpha} * exp({a}))",), _elu, {"a": "self"}),
    "SoftplusBackward0": Rule("softplus({a})", ("{g} * sigmoid({a})",), _softplus, {"a": "self"}),
    "GeluBackward0": Rule("gelu({a})", ("{g} * (Φ({a}) + {a} * φ({a}))",),
                          lambda s, g: (g * _gelu(s.self),) if s.approximate == "none" else (None,), {"a": "self"}),
    "SiluBackward0": Rule("silu({a})", ("{g} * sigmoid({a}) * (1 + {a} * (1 - sigmoid({a})))",),
                          lambda s, g: (g * torch.sigmoid(s.self) * (1 + s.self * (1 - torch.sigmoid(s.self))),), {"a": "self"}),
    "HardtanhBackward0": Rule("hardtanh({a})", ("{g} * ({min_val} < {a} < {max_val})",),
                              lambda s, g: (g * ((s.self > s.min_val) & (s.self < s.max_val)).to(g.dtype),), {"a": "self"}),
    "ClampBackward1": Rule("clamp({a})", ("{g} * ({a} inside the clamp's bounds)",), _clamp, {"a": "self"}),
    "WhereBackward0": Rule("where(cond, {a}, {b})", ("{g} where cond", "{g} where not cond"),
                           lambda s, g: (torch.where(s.condition, g, 0.0), torch.where(s.condition, 0.0, g))),
    "MaskedFillBackward0": Rule("{a}.masked_fill(mask, v)", ("{g} where not mask",), lambda s, g: (g.masked_fill(s.mask, 0),)),
    # reductions
    "SumBackward0": Rule("{a}.sum()", ("{g} copied to every element",), lambda s, g: (g.expand(s.self_sym_sizes),)),
    "SumBackward1": Rule("{a}.sum({dim})", ("{g} copied along dim {dim}",), lambda s, g: (_reduced_dims(s, g),)),
    "MeanBackward0": Rule("{a}.mean()", ("{g} / {self_sym_numel} to every element",),
                          lambda s, g: (g.expand(s.self_sym_sizes) / s.self_sym_numel,)),
    "MeanBackward1": Rule("{a}.mean({dim})", ("{g} / n copied along dim {dim}",),
                          lambda s, g: (_reduced_dims(s, g) / _count(s.self_sym_sizes, s.dim),)),
    "ProdBackward0": Rule("{a}.prod()", ("{g} * {out} / {a}",), lambda s, g: (g * s.result / s.self,), {"a": "self", "out": "result"}),
    "CumsumBackward0": Rule("{a}.cumsum({dim})", ("{g} summed from the end along dim {dim}",), _cumsum),
    "MaxBackward1": Rule("{a}.max()", ("{g} to the largest element(s), shared",), _max_all, {"a": "self"}),
    "AmaxBackward0": Rule("{a}.amax({dim})", ("{g} to the largest element(s) along dim {dim}, shared",), _amax, {"a": "self"}),
    "MaxBackward0": Rule("{a}.max({dim})", ("{g} to the largest element along dim {dim}",), _max_dim),
    "VarBackward0": Rule("{a}.var()", ("{g} * 2 * ({a} - mean) / (n - 1)",),
                         lambda s, g: _var(s, g, std=False), {"a": "self"}),
    "StdBackward0": Rule("{a}.std()", ("{g} * ({a} - mean) / ((n - 1) * {out})",),
                         lambda s, g: _var(s, g, std=True), {"a": "self", "out": "result"}),
    "LinalgVectorNormBackward0": Rule("{a}.norm()", ("{g} * {a} / {out}",), _norm, {"a": "self", "out": "result"}),
    "TraceBackward0": Rule("{a}.trace()", ("{g} on the diagonal",), _trace),
    # matrices
    "MmBackward0": Rule("{a} @ {b}", ("{g} @ {b}.T", "{a}.T @ {g}"),
                        lambda s, g: (g @ s.mat2.T if s.mat2 is not None else None,
                                      s.self.T @ g if s.self is not None else None), {"a": "self", "b": "mat2"}),
    "MvBackward0": Rule("{a} @ {b}", ("outer({g}, {b})", "{a}.T @ {g}"),
                        lambda s, g: (torch.outer(g, s.vec) if s.vec is not None else None,
                                      s.self.T @ g if s.self is not None else None), {"a": "self", "b": "vec"}),
    "DotBackward0": Rule("{a} @ {b}", ("{g} * {b}", "{g} * {a}"),
                         lambda s, g: (g * s.tensor if s.tensor is not None else None,
                                       g * s.self if s.self is not None else None), {"a": "self", "b": "tensor"}),
    "BmmBackward0": Rule("{a} @ {b}", ("{g} @ {b}.mT", "{a}.mT @ {g}"),
                         lambda s, g: (g @ s.mat2.mT if s.mat2 is not None else None,
                                       s.self.mT @ g if s.self is not None else None), {"a": "self", "b": "mat2"}),
    "AddmmBackward0": Rule("{a} + {b} @ {c}", ("{g} summed to {a}'s shape", "{g} @ {c}.T", "{b}.T @ {g}"),
                           lambda s, g: (g * s.beta, s.alpha * g @ s.mat2.T if s.mat2 is not None else None,
                                         s.alpha * s.mat1.T @ g if s.mat1 is not None else None), {"b": "mat1", "c": "mat2"}),
    # shapes and indexing
    "TBackward0": Rule("{a}.T", ("{g}.T",), lambda s, g: (g.t(),)),
    "TransposeBackward0": Rule("{a}.transpose({dim0}, {dim1})", ("{g}.transpose({dim0}, {dim1})",),
                               lambda s, g: (g.transpose(s.dim0, s.dim1),)),
    "PermuteBackward0": Rule("{a}.permute{dims}", ("{g} permuted back",), _permute),
    "ViewBackward0": Rule("{a}.view(...)", ("{g} reshaped to {a}'s shape",), lambda s, g: (g.reshape(s.self_sym_sizes),)),
    "UnsafeViewBackward0": Rule("{a}.reshape(...)", ("{g} reshaped to {a}'s shape",), lambda s, g: (g.reshape(s.self_sym_sizes),)),
    "ReshapeAliasBackward0": Rule("{a}.reshape(...)", ("{g} reshaped to {a}'s shape",),
                                  lambda s, g: (g.reshape(s.self_sym_sizes),)),
    "SqueezeBackward0": Rule("{a}.squeeze()", ("{g} reshaped to {a}'s shape",), lambda s, g: (g.reshape(s.self_sym_sizes),)),
    "SqueezeBackward1": Rule("{a}.squeeze({dim})", ("{g} reshaped to {a}'s shape",), lambda s, g: (g.reshape(s.self_sym_sizes),)),
    "SqueezeBackward2": Rule("{a}.squeeze({dim})", ("{g} reshaped to {a}'s shape",), lambda s, g: (g.reshape(s.self_sym_sizes),)),
    "UnsqueezeBackward0": Rule("{a}.unsqueeze({dim})", ("{g}.squeeze({dim})",), lambda s, g: (g.squeeze(s.dim),)),
    "ExpandBackward0": Rule("{a}.expand(...)", ("{g} summed to {a}'s shape",), lambda s, g: (_sum_to(g, s.self_sym_sizes),)),
    "RepeatBackward0": Rule("{a}.repeat{repeats}", ("{g}'s repeats summed",),
                            lambda s, g: (g.reshape([r for pair in zip(s.repeats[-len(s.self_sym_sizes):], s.self_sym_sizes)
                                                     for r in pair]).sum(dim=tuple(range(0, 2 * len(s.self_sym_sizes), 2))),)
                            if len(s.repeats) == len(s.self_sym_sizes) else (None,)),
    "SelectBackward0": Rule("{a}[{index}]", ("{g} at index {index} of dim {dim}, 0 elsewhere",), _select),
    "SliceBackward0": Rule("{a}[{start}:{end}]", ("{g} in the slice, 0 elsewhere",), _slice),
    "IndexBackward0": Rule("{a}[index]", ("{g} added at the indexed places, 0 elsewhere",), _index),
    "DiagonalBackward0": Rule("{a}.diagonal()", ("{g} on the diagonal, 0 elsewhere",), _diagonal),
    "CatBackward0": Rule("cat([...])", tuple(f"{{g}}'s piece {i + 1} along dim {{dim}}" for i in range(MAX_PIECES)), None),
    "StackBackward0": Rule("stack([...])", tuple(f"{{g}}[{i}] along dim {{dim}}" for i in range(MAX_PIECES)), None),
    "SplitBackward0": Rule("{a}.split(...)", ("the pieces' gradients joined along dim {dim}",), None),
    "UnbindBackward0": Rule("{a}.unbind()", ("the pieces' gradients stacked along dim {dim}",), None),
    # losses
    "MseLossBackward0": Rule("mse_loss({a}, {b})", ("{g} * 2 * ({a} - {b}) / n", "-{g} * 2 * ({a} - {b}) / n"),
                             lambda s, g: (lambda d: (d, -d))(_reduced(s, g * 2 * (s.self - s.target), s.self.numel())),
                             {"a": "self", "b": "target"}),
    "NllLossBackward0": Rule("nll_loss({a}, target)", ("-{g} / n at each row's target, 0 elsewhere",), _nll),
    "LogSoftmaxBackward0": Rule("log_softmax({a})", ("{g} - exp({out}) * {g}.sum({dim})",),
                                lambda s, g: (g - torch.exp(s.result) * g.sum(s.dim, keepdim=True),), {"out": "result"}),
    "SoftmaxBackward0": Rule("softmax({a})", ("{out} * ({g} - ({g} * {out}).sum({dim}))",),
                             lambda s, g: (s.result * (g - (g * s.result).sum(s.dim, keepdim=True)),), {"out": "result"}),
    "BinaryCrossEntropyBackward0": Rule("binary_cross_entropy({a}, y)", ("{g} * ({a} - y) / ({a} * (1 - {a})) / n",),
                                        _bce, {"a": "self"}),
    "BinaryCrossEntropyWithLogitsBackward0": Rule(
        "binary_cross_entropy_with_logits({a}, y)", ("{g} * (sigmoid({a}) - y) / n",),
        lambda s, g: (_reduced(s, g * (torch.sigmoid(s.self) - s.target), s.self.numel()),)
        if s.weight is None and s.pos_weight is None else (None,), {"a": "self"}),
    "SmoothL1LossBackward0": Rule("smooth_l1_loss({a}, {b})", ("{g} * clamp(({a} - {b}) / {beta}, -1, 1) / n",
                                                              "-{g} * clamp(({a} - {b}) / {beta}, -1, 1) / n"),
                                  lambda s, g: _smooth_l1(s, g, s.beta), {"a": "self", "b": "target"}),
    "HuberLossBackward0": Rule("huber_loss({a}, {b})", ("{g} * clamp({a} - {b}, -{delta}, {delta}) / n",
                                                        "-{g} * clamp({a} - {b}, -{delta}, {delta}) / n"),
                               lambda s, g: _huber(s, g, s.delta), {"a": "self", "b": "target"}),
}
RULES["DiagonalBackward0_copy"] = RULES["DiagonalBackward0"]


def rule_for(node) -> Rule | None:
    return RULES.get(type(node).__name__)


def expected(node, grad_outputs: tuple, shapes: list) -> tuple:
    """What each input should receive by the table's formula (None where it has none), from the node's
    saved values and the gradients arriving; ``shapes`` the inputs' shapes (a broadcast is summed back)."""
    name = type(node).__name__
    rule = RULES.get(name)
    if rule is None:
        return ()
    s = Saved(node)
    if name in ("CatBackward0", "StackBackward0"):
        return _join_grads(name, s, grad_outputs[0], shapes)
    if name == "SplitBackward0":
        return _split(node, s, grad_outputs)
    if name == "UnbindBackward0":
        return _unbind(node, s, grad_outputs)
    g = grad_outputs[0]
    if g is None:
        return ()
    grads = rule.grads(s, g)
    return tuple(_sum_to(grad, shape) if isinstance(grad, torch.Tensor) else None
                 for grad, shape in zip(grads, shapes))


def _join_grads(name: str, s, g, shapes: list) -> tuple:
    if name == "StackBackward0":
        return tuple(g.unbind(s.dim))
    dim = s.dim % g.dim()
    out, start = [], 0
    for shape in shapes:
        size = shape[dim] if shape is not None and len(shape) == g.dim() else 0
        out.append(g.narrow(dim, start, size) if shape is not None else None)
        start += size
    return tuple(out)


def agrees(predicted, real) -> bool:
    """Within TOLERANCE, relative to the larger value (an exact zero must be zero within it)."""
    if not isinstance(predicted, torch.Tensor) or not isinstance(real, torch.Tensor):
        return False
    if list(predicted.shape) != list(real.shape):
        return False
    with torch.no_grad():
        p = predicted.detach().to(torch.float64)
        r = real.detach().to(torch.float64)
        if not r.numel():
            return True
        # an element that cancels to ~0 is compared against the gradient's largest, not its own size
        floor = TOLERANCE * float(r.abs().max())
        return bool(torch.allclose(p, r, rtol=TOLERANCE, atol=floor, equal_nan=True))
