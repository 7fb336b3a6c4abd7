"""Reading one value of a task's state through the captured references: an attribute, an item, a
tensor's facts and values, a value's kind, as plain data (task_state.py says why)."""

from __future__ import annotations

from gradrepl.kernel.inspect.captured import (BASE, DETACH, GET, MODULE, NUMEL, OPTIMIZER, STRIDED, TENSOR_TYPES,
                                              TOLIST, _float, _isfinite, _issubclass, _len, _list, _str, _tuple, _type,
                                              bool, complex, dict, dict_get, dict_values, int, object_getattribute, set,
                                              type_module, type_name)


SKIPPED = {"_", "torch", "nn", "F", "help"}  # the kernel's own names, and the last echoed value
ENTRY_CAP = 2048        # entries in one read (a module's parameters count one each); the rest: "truncated"
NAME_CAP = 1000         # characters of a name or a string value read
VALUE_CAP = 100_000     # elements of one tensor read as values; a bigger one is compared by type and shape
CHILD_CAP = 256         # entries under one target (a module's parameters, a list's items)


class Unreadable(Exception):
    """A path the reader will not follow: `code` and `names` (views/remarks.py TASK_READS words them)."""

    def __init__(self, code: str, **names):
        super().__init__(code)
        self.code, self.names = code, names

    def reason(self) -> dict:
        return {"code": self.code, "names": self.names}


class Missing(Unreadable):
    """A path that leads to nothing (no such name, attribute or item)."""


def unreadable(code: str, **names) -> dict:
    """The data of an unreadable value, for an entry's (or the state's) "unreadable"."""
    return {"code": code, "names": names}


def _attribute(value, name: str):
    kind = _type(value)
    if kind in TENSOR_TYPES or _issubclass(kind, BASE):
        if name == "grad":
            return GET["grad"](value) if GET["is_leaf"](value) or GET["retains_grad"](value) else quiet_grad(value)
        raise Unreadable("tensor_attribute", attribute=name)
    try:
        own = object_getattribute(value, "__dict__")
    except AttributeError:
        raise Unreadable("no_attributes", type=type_name(kind)) from None
    if _type(own) is not dict:
        raise Unreadable("odd_dict")
    if _issubclass(kind, MODULE):
        for field in ("_parameters", "_buffers", "_modules"):
            table = dict_get(own, field)
            if _type(table) is dict and name in table:
                return table[name]
    missing = object()
    found = dict_get(own, name, missing)
    if found is missing:
        raise Missing("no_attribute", attribute=name)
    return found


def _index(value, i: int):
    kind = _type(value)
    if _issubclass(kind, MODULE):
        own = object_getattribute(value, "__dict__")
        children = dict_get(own, "_modules") if _type(own) is dict else None
        items = _list(dict_values(children)) if _type(children) is dict else []
    elif kind in (_list, _tuple):
        items = value
    else:
        raise Unreadable("not_indexed", type=type_name(kind))
    if not -_len(items) <= i < _len(items):
        raise Missing("no_item", index=i)
    return items[i]


def _child(path: str, name) -> str:
    name = _str(name)
    return f"{path}[{name}]" if name.isdigit() else f"{path}.{name}"


def _facts(t) -> dict:
    return {"requires_grad": bool(GET["requires_grad"](t)), "is_leaf": bool(GET["is_leaf"](t)),
            "retains_grad": bool(GET["retains_grad"](t)),
            "grad_fn": _node_name(GET["grad_fn"](t)), **_values(t)}


def _values(t) -> dict:
    facts = {"dtype": _str(GET["dtype"](t)), "shape": [int(n) for n in GET["shape"](t)] if not GET["is_nested"](t)
             else None, "values": None}
    if GET["is_nested"](t) or GET["layout"](t) is not STRIDED:
        facts["unreadable"] = "a nested or sparse tensor is not compared by value"
    elif NUMEL(t) <= VALUE_CAP:
        facts["values"] = plain(TOLIST(DETACH(t)))
    return facts


def quiet_grad(t):
    """A non-leaf's .grad without torch's warning about reading it (it is None unless set by hand)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return GET["grad"](t)


def _node_name(node) -> str | None:
    return None if node is None else type_name(_type(node))


def qualified(kind) -> str:
    module = type_module(kind)
    name = type_name(kind)
    return name if module == "builtins" else f"{module}.{name}"


def plain(value):
    """JSON-ready: numbers as numbers (non-finite ones spelled), nested lists kept; anything else its type."""
    kind = _type(value)
    if kind is _str:
        return value[:NAME_CAP]
    if value is None or kind is bool:
        return value
    if kind is int:
        return value
    if kind is _float:
        return value if _isfinite(value) else _str(value)
    if kind in (_list, _tuple):
        return [plain(v) for v in value]
    if kind is complex:
        return _str(value)
    return f"<{qualified(kind)}>"


def setting(value):
    """An optimizer's setting as plain data: a 0-d tensor reads as its number (SGD takes lr=torch.tensor(0.1)
    and steps the same as with 0.1)."""
    if kind_of(value) == "tensor":
        facts = _values(value)
        if facts["shape"] == [] and facts["values"] is not None:
            return facts["values"]
    return plain(value)


def kind_of(value) -> str:
    kind = _type(value)
    if kind in TENSOR_TYPES or _issubclass(kind, BASE):
        return "tensor"
    if _issubclass(kind, MODULE):
        return "module"
    if _issubclass(kind, OPTIMIZER):
        return "optimizer"
    if kind in (_list, _tuple, dict, set):
        return "collection"
    if value is None or kind in (bool, int, _float, _str):
        return "value"
    if type_name(kind) in ("function", "builtin_function_or_method", "method", "type", "partial"):
        return "callable"
    return "other"
