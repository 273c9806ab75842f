"""Inside the sandbox: the probes' API — a student's values and exceptions as plain observations.

An assignment's probe files import what they need from here (and nothing else of the engine):

    from autograder.sandbox.inside.observe import array, exception, scalar, tensor

    def tinynet_forward(mod, x):
        try:
            return {"out": tensor(mod.TinyNet(4, 8, 3)(as_tensor(x)))}
        except Exception as exc:
            return {"raised": exception(exc)}

Each describer reports the exact type name first and the values only when the type is exactly the
one the contract names (a subclass of Tensor or a list posing as an array sends no values), so the
check in the grading process decides; the fields are the observation format of docs/authoring.md,
which `autograder.graders.require_array`, `raised_name` and `scalar_type` read. The worker imports
this module before any submission and the integrity snapshot watches it: a submission cannot swap
a describer for one that reports what a check wants to see.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from autograder.sandbox.inside.spies import backward_runs, graph_nodes, optimizer_steps

__all__ = [
    "MESSAGE_LIMIT",
    "SENDABLE",
    "array",
    "as_tensor",
    "backward_runs",
    "exception",
    "graph_nodes",
    "hidden_run",
    "module_structure",
    "numbers",
    "optimizer_steps",
    "qualified",
    "scalar",
    "tensor",
    "type_name",
]

SENDABLE = frozenset({"bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"})
MESSAGE_LIMIT = 600  # characters of a student's exception message sent across
_CHAIN_LIMIT = 8
_MRO_LIMIT = 16
_FLOATS = (np.float16, np.float32, np.float64)


def type_name(value: Any) -> str:
    """The exact class name (`Tensor`, `Parameter`, `MyTensor`, `list`)."""
    return type(value).__name__


def qualified(cls: type) -> str:
    """module.qualname of a class: builtins.RuntimeError, _pickle.UnpicklingError (a student's own
    class named RuntimeError is not builtins.RuntimeError)."""
    module, name = getattr(cls, "__module__", None), getattr(cls, "__qualname__", None)
    if type(module) is not str or type(name) is not str:
        return "<unnamed>"
    return f"{module}.{name}"


def _message(exc: BaseException) -> str:
    try:
        text = str(exc)
    except BaseException:  # a student's __str__ may raise anything, even SystemExit
        return "<unreadable message>"
    text = text if type(text) is str else "<not a string>"
    return text if len(text) <= MESSAGE_LIMIT else text[:MESSAGE_LIMIT] + "..."


def exception(exc: BaseException) -> dict[str, Any]:
    """{type, mro, message, chain}: the type that reached the caller, the module.qualname of each of
    its classes (so a check accepts a subclass of the type the contract names), the message
    (truncated) and, for the feedback only, the type names of its chain (cause, context), outermost
    first."""
    chain: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(chain) < _CHAIN_LIMIT:
        seen.add(id(current))
        chain.append(type_name(current))
        current = current.__cause__ or current.__context__
    mro = [qualified(c) for c in type(exc).__mro__][:_MRO_LIMIT]
    return {"type": type_name(exc), "mro": mro, "message": _message(exc), "chain": chain}


def tensor(value: Any) -> dict[str, Any]:
    """{type, values, shape, dtype, device, requires_grad, has_grad_fn}: the fields after `type` only
    for an exact Tensor or Parameter; `values` (a NumPy copy) only on the CPU in a sendable dtype."""
    obs: dict[str, Any] = {"type": type_name(value), "values": None}
    if type(value) not in (torch.Tensor, nn.Parameter):
        return obs
    obs["shape"] = list(value.shape)
    obs["dtype"] = str(value.dtype).replace("torch.", "")
    obs["device"] = value.device.type
    obs["requires_grad"] = bool(value.requires_grad)
    obs["has_grad_fn"] = value.grad_fn is not None
    if obs["dtype"] in SENDABLE and value.device.type == "cpu":
        obs["values"] = np.array(value.detach().numpy(), copy=True)
    return obs


def array(value: Any) -> dict[str, Any]:
    """{type, values, shape, dtype}: the fields after `type` only for an exact np.ndarray."""
    obs: dict[str, Any] = {"type": type_name(value), "values": None}
    if type(value) is not np.ndarray:
        return obs
    obs["shape"] = list(value.shape)
    obs["dtype"] = value.dtype.name
    if value.dtype.name in SENDABLE:
        obs["values"] = np.array(value, copy=True)
    return obs


def scalar(value: Any) -> dict[str, Any]:
    """{type, value[, as_float]}: `value` only when the type is exactly int or float; anything else
    (a 0-d tensor, np.float64) also says what number it holds, for the feedback."""
    kind = type(value)
    out: dict[str, Any] = {"type": type_name(value), "value": value if kind in (int, float) else None}
    if kind not in (int, float, bool):
        try:
            out["as_float"] = float(value)
        except Exception:  # whatever the student returned may refuse float()
            out["as_float"] = None
    return out


def numbers(values: Any) -> dict[str, Any]:
    """{type, len, types, values, graphs} of a list of numbers the student returned (losses): each
    item's type, its value as a float (None when it holds no single float), and how many items
    still hold an autograd graph (a loss appended without .item())."""
    obs: dict[str, Any] = {"type": type_name(values), "len": None, "types": [], "values": [], "graphs": 0}
    if type(values) not in (list, tuple):
        return obs
    obs["len"] = len(values)
    for item in values:
        obs["types"].append(type_name(item))
        if type(item) is float:
            obs["values"].append(item)
        elif isinstance(item, torch.Tensor) and item.numel() == 1:
            obs["graphs"] += int(item.grad_fn is not None)
            obs["values"].append(float(item.detach().reshape(()).item()))
        elif type(item) in _FLOATS or (
            type(item) is np.ndarray and item.size == 1 and item.dtype.kind == "f"
        ):
            obs["values"].append(float(np.asarray(item).reshape(())))
        else:
            obs["values"].append(None)
    return obs


def as_tensor(values: Any) -> torch.Tensor:
    """A check's input (a NumPy array or nested lists) as a fresh tensor the student may change."""
    return torch.from_numpy(np.array(values, copy=True))


# A model's hidden run (structural checks): beside the describers, so probes import it from here. Last,
# because it uses them.
from autograder.sandbox.inside.model_runs import hidden_run, module_structure  # noqa: E402
