"""Helpers the probes of several tasks share (inside the sandboxed worker; loaded before them)."""

# Self-contained: stdlib, numpy, torch and the engine's probe API (autograder.sandbox.inside.observe,
# whose describers make the observations). A probe never judges: it runs the student's code on
# inputs the check sent and reports what it saw, with the exact type name of everything the
# student returned, so that the check (in the grading process) decides. Helpers and classes start
# with "_" so they are not probes.

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import torch
from torch import nn

from autograder.sandbox.inside.observe import as_tensor, exception, tensor, type_name

# nn.Module's own methods, called unbound: a student's class cannot override what the probe reads.
_named_parameters = nn.Module.named_parameters
_named_buffers = nn.Module.named_buffers
_named_modules = nn.Module.named_modules
_state_dict = nn.Module.state_dict


def _state(arrays: dict[str, Any]) -> dict[str, torch.Tensor]:
    return {k: as_tensor(v) for k, v in arrays.items()}


def _params(model: nn.Module) -> dict[str, Any]:
    named = list(_named_parameters(model))
    return {
        "names": [n for n, _ in named],
        "types": [type_name(p) for _, p in named],
        "shapes": [list(p.shape) for _, p in named],
        "count": int(sum(p.numel() for _, p in named)),
        "linears": _linear_shapes(model),
    }


def _own(module: Any, name: str) -> Any:
    """A parameter registered on `module` itself (nn.Module's own registry, not an attribute lookup)."""
    registry = getattr(module, "__dict__", {}).get("_parameters")
    return registry.get(name) if isinstance(registry, dict) else None


def _linear_shapes(model: nn.Module) -> list[list[Any]]:
    """Every registered nn.Linear in registration order: [name, weight shape, bias shape or None]."""
    found = []
    for name, module in _named_modules(model):
        weight, bias = _own(module, "weight"), _own(module, "bias")
        if isinstance(module, nn.Linear) and isinstance(weight, torch.Tensor):
            bias_shape = list(bias.shape) if isinstance(bias, torch.Tensor) else None
            found.append([name, list(weight.shape), bias_shape])
    return found


# A structural check's hidden run (the model filled with hidden values, each nn.Linear run alone) is the
# engine's: autograder.sandbox.inside.observe.hidden_run.


def _all_linears(model: nn.Module) -> list[nn.Linear]:
    """Every nn.Linear reachable from the model: registered ones in registration order, then any kept
    in a plain attribute, list or dict (which the model's registry does not know)."""
    return _reachable(model, nn.Linear)


def _reachable(model: nn.Module, kind: type) -> list[Any]:
    """Every module of type `kind` reachable from the model, registered or kept in a plain attribute,
    list or dict (registered ones first, in registration order)."""
    found: list[Any] = []
    seen: set[int] = set()

    def visit(obj: Any, depth: int) -> None:
        if depth > 6 or id(obj) in seen:
            return
        seen.add(id(obj))
        if isinstance(obj, kind):
            found.append(obj)
        if isinstance(obj, nn.Module):
            registry = obj.__dict__.get("_modules")
            for value in list(registry.values()) if isinstance(registry, dict) else []:
                visit(value, depth + 1)
            for value in list(obj.__dict__.values()):
                visit(value, depth + 1)
        elif type(obj) in (list, tuple):
            for value in obj:
                visit(value, depth + 1)
        elif type(obj) in (dict, OrderedDict):
            for value in obj.values():
                visit(value, depth + 1)

    visit(model, 0)
    return found


def _layers_by_role(model: nn.Module, layers: Any) -> dict[str, Any]:
    """The model's nn.Linear for each of the contract's layers `[prefix, in, out]`: the registered module
    of that name when the model has one for every prefix, otherwise its nn.Linear layers (registered
    or not) matched by weight shape, in the order they are found."""
    named = dict(_named_modules(model))

    def fits(module: Any, fan_in: int, fan_out: int) -> bool:
        weight = _own(module, "weight")
        return (
            isinstance(module, nn.Linear)
            and isinstance(weight, torch.Tensor)
            and tuple(weight.shape) == (fan_out, fan_in)
        )

    if all(fits(named.get(prefix), fan_in, fan_out) for prefix, fan_in, fan_out in layers):
        return {prefix: named[prefix] for prefix, _, _ in layers}
    free = _all_linears(model)
    roles: dict[str, Any] = {}
    for prefix, fan_in, fan_out in layers:
        match = next((m for m in free if fits(m, fan_in, fan_out)), None)
        roles[prefix] = match
        if match is not None:
            free.remove(match)
    return roles


def _load_layers(
    model: nn.Module, arrays: dict[str, Any], layers: Any, given: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The grader's weights copied into the model's layer for each role (`_layers_by_role`), and its other
    tensors (buffers) by state_dict key where the model has that key, else (a buffer under another
    name, not persistent, or a plain attribute) into the tensors that hold what the constructor was
    `given` for it; then what each role's layer holds, read back (bias None: the layer has none). A
    role without a layer is `missing`."""
    roles = _layers_by_role(model, layers)
    report: dict[str, Any] = {"missing": [], "error": None, "held": {}}
    try:
        with torch.no_grad():
            for prefix, module in roles.items():
                if module is None:
                    report["missing"].append(prefix)
                    continue
                weight, bias = _own(module, "weight"), _own(module, "bias")
                weight.copy_(as_tensor(arrays[f"{prefix}.weight"]))
                if isinstance(bias, torch.Tensor) and f"{prefix}.bias" in arrays:
                    bias.copy_(as_tensor(arrays[f"{prefix}.bias"]))
            own = _state_dict(model)
            for key, value in arrays.items():
                if key.rpartition(".")[0] in roles:
                    continue
                if key in own:
                    own[key].copy_(as_tensor(value))
                elif given is not None and key in given:
                    for held in _holding(model, as_tensor(given[key])):
                        held.copy_(as_tensor(value))
    except Exception as exc:
        report["error"] = exception(exc)
        return report
    for prefix, module in roles.items():
        if module is not None:
            bias = _own(module, "bias")
            report["held"][prefix] = {
                "weight": tensor(_own(module, "weight")),
                "bias": tensor(bias) if isinstance(bias, torch.Tensor) else None,
            }
    return report


def _holding(model: nn.Module, value: torch.Tensor) -> list[torch.Tensor]:
    """The model's buffers and plain tensor attributes equal to `value` (what it keeps of an input)."""
    found = [b for _, b in _named_buffers(model)]
    found += [
        v for v in model.__dict__.values() if isinstance(v, torch.Tensor) and not isinstance(v, nn.Parameter)
    ]
    return [t for t in found if t.shape == value.shape and torch.equal(t.to(value.dtype), value)]


def _delivery(mod, x_mean, x_std, p_drop=None):
    args = (as_tensor(x_mean), as_tensor(x_std)) + (() if p_drop is None else (p_drop,))
    return mod.DeliveryMLP(*args)
