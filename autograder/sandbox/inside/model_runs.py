"""Inside the sandbox: a student's nn.Module filled with hidden values and its layers run alone.

A structural check (names, keys, shapes, counts, dtypes) must rest on values nobody can know in
advance, without judging anything but the structure: every floating tensor the model registers is
filled from a hidden pool in state_dict order, through the model's own keys and load_state_dict
(what the grading side recomputes from the keys and shapes reported here), and every registered
nn.Linear is then run alone on hidden inputs as wide as its weight. The outputs depend on the hidden
values and on the layer alone, so a slip in forward (or in another layer) never shows here, and a
made-up or replayed answer cannot match them. The grading side is autograder.check_builders.structure.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from autograder.sandbox.inside.observe import as_tensor, exception, tensor, type_name

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
