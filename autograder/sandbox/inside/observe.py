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
check in the grading process decides; the fields are the observation format of docs/authors/authoring.md,
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

# ----------------------------------------------------------------------------- a model's hidden run
# A structural check (names, keys, shapes, counts, dtypes) must rest on values nobody can know in
# advance, without judging anything but the structure: every floating tensor the model registers is
# filled from a hidden pool in state_dict order, through the model's own keys and load_state_dict
# (what the grading side recomputes from the keys and shapes reported here), and every registered
# nn.Linear is then run alone on hidden inputs as wide as its weight. The outputs depend on the
# hidden values and on the layer alone, so a slip in forward (or in another layer) never shows here,
# and a made-up or replayed answer cannot match them (grading side: autograder.check_builders.structure).

# nn.Module's own methods, called unbound: a student's class cannot override what is read.
_named_parameters = nn.Module.named_parameters
_named_buffers = nn.Module.named_buffers
_named_modules = nn.Module.named_modules
_state_dict = nn.Module.state_dict
_load_state_dict = nn.Module.load_state_dict


def own_parameter(module: Any, name: str) -> Any:
    """A parameter registered on `module` itself (nn.Module's own registry, not an attribute lookup)."""
    registry = getattr(module, "__dict__", {}).get("_parameters")
    return registry.get(name) if isinstance(registry, dict) else None


def _pool_slice(pool: torch.Tensor, offset: int, shape: tuple[int, ...]) -> torch.Tensor:
    """The next values of a hidden pool for a tensor of `shape`, starting at `offset`, cycling."""
    count = int(np.prod(shape)) if shape else 1
    return pool[(offset + torch.arange(count)) % len(pool)].reshape(shape)


def _fill(model: nn.Module, pool: Any) -> dict[str, Any]:
    """Load every floating tensor of the model's state_dict with the next values of `pool` (through
    load_state_dict and the model's own keys); report the keys and shapes it filled."""
    values = as_tensor(pool)
    entries = [
        (k, v) for k, v in _state_dict(model).items() if isinstance(v, torch.Tensor) and v.is_floating_point()
    ]
    state, offset = {}, 0
    for key, held in entries:
        state[key] = _pool_slice(values, offset, tuple(held.shape)).to(held.dtype)
        offset += held.numel()
    report: dict[str, Any] = {"entries": [[k, list(v.shape)] for k, v in entries], "error": None}
    try:
        _load_state_dict(model, state, strict=False)
    except Exception as exc:
        report["error"] = exception(exc)
    return report


def _layer_runs(model: nn.Module, xpool: Any, rows: int) -> list[dict[str, Any]]:
    """Each registered nn.Linear run alone (no_grad) on `rows` rows of the hidden inputs."""
    xs = as_tensor(xpool)
    runs = []
    for name, module in _named_modules(model):
        weight = own_parameter(module, "weight")
        if not isinstance(module, nn.Linear) or not isinstance(weight, torch.Tensor) or weight.dim() != 2:
            continue
        x = _pool_slice(xs, 0, (rows, int(weight.shape[1]))).to(weight.dtype)
        run: dict[str, Any] = {
            "name": name,
            "bias": isinstance(own_parameter(module, "bias"), torch.Tensor),
            "raised": None,
            "out": None,
        }
        try:
            with torch.no_grad():
                run["out"] = tensor(module(x))
        except Exception as exc:
            run["raised"] = exception(exc)
        runs.append(run)
    return runs


def hidden_run(model: nn.Module, pool: Any, xpool: Any, rows: int = 4) -> dict[str, Any] | None:
    """The hidden values filled in, then the buffers read back and every nn.Linear run alone (None
    without a pool: a check that draws none)."""
    if pool is None:
        return None
    run = _fill(model, pool)
    run["state_after"] = {
        k: tensor(v) for k, v in _state_dict(model).items() if k.rpartition(".")[2] not in ("weight", "bias")
    }
    run["buffers"] = {n: tensor(b) for n, b in _named_buffers(model)}
    run["layers"] = _layer_runs(model, xpool, rows)
    return run


def module_structure(model: Any, pool: Any = None, xpool: Any = None, rows: int = 4) -> dict[str, Any]:
    """What `autograder.graders.judge_structure` reads: whether `model` is an nn.Module, its type,
    its parameters and buffers (names in registration order, shapes, dtypes, exact types) and their
    count, then the hidden run on `pool` and `xpool` (`hidden_run`)."""
    obs: dict[str, Any] = {"is_module": isinstance(model, nn.Module), "model_type": type_name(model)}
    if not obs["is_module"]:
        return obs
    parameters = list(_named_parameters(model))
    buffers = list(_named_buffers(model))
    obs["parameters"] = [[n, list(p.shape), str(p.dtype).replace("torch.", ""), type_name(p)]
                         for n, p in parameters]
    obs["buffers"] = [[n, list(b.shape), str(b.dtype).replace("torch.", "")] for n, b in buffers]
    obs["count"] = int(sum(p.numel() for _, p in parameters))
    obs["run"] = hidden_run(model, pool, xpool, rows)
    return obs
