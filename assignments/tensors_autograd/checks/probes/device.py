"""Probes of task `device` (inside the sandboxed worker); helpers shared by tasks are in _shared.py."""

# Self-contained: stdlib, numpy, torch and the engine's probe API (autograder.sandbox.inside.observe,
# whose describers and spies make the observations). A probe never judges: it runs the student's
# code on inputs the check sent and reports what it saw, with the exact type name of everything the
# student returned, so that the check (in the grading process) decides. Helpers and classes start
# with "_" so they are not probes.

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from autograder.sandbox.inside.observe import (
    as_tensor,
    exception,
    type_name,
)

# From _shared.py, run first in the same namespace: _dtype.


_named_parameters = nn.Module.named_parameters
_named_buffers = nn.Module.named_buffers


def device_pick(mod, pattern):
    """pick_device() once for each answer in `pattern` of torch.cuda.is_available() (the grader decides)."""
    real = torch.cuda.is_available
    calls = []
    for available in pattern:
        torch.cuda.is_available = lambda available=bool(available): available
        try:
            result = mod.pick_device()
        finally:
            torch.cuda.is_available = real
        shown = exception(ValueError(repr(result)))["message"][:80]  # a repr that cannot blow up
        obs: dict[str, Any] = {"type": type_name(result), "repr": shown}
        try:
            obs["device_type"] = torch.device(result).type
        except Exception as exc:
            obs["device_type"] = None
            obs["error"] = exception(exc)
        calls.append(obs)
    return {"calls": calls}


def _device_model(sizes) -> nn.Module:
    f, h, o = sizes
    return nn.Sequential(nn.Linear(f, h), nn.BatchNorm1d(h), nn.ReLU(), nn.Linear(h, o))


def device_move(mod, X, y, sizes, as_object=False):
    """to_device(model, X, y, "meta") on a model of `sizes`: where every parameter, buffer and tensor
    ended up, with their shapes."""
    model = _device_model(sizes)
    Xt, yt = as_tensor(X), as_tensor(y)
    device = torch.device("meta") if as_object else "meta"
    result = mod.to_device(model, Xt, yt, device)
    obs: dict[str, Any] = {"type": type_name(result), "len": None}
    if type(result) not in (tuple, list) or len(result) != 3:
        obs["len"] = len(result) if type(result) in (tuple, list) else None
        return obs
    obs["len"] = 3
    m, Xo, yo = result
    obs["model_type"] = type_name(m)
    if isinstance(m, nn.Module):
        obs["params"] = {n: p.device.type for n, p in _named_parameters(m)}
        obs["param_shapes"] = {n: list(p.shape) for n, p in _named_parameters(m)}
        obs["buffers"] = {n: b.device.type for n, b in _named_buffers(m)}
    for name, value in (("X", Xo), ("y", yo)):
        if isinstance(value, torch.Tensor):
            obs[name] = {
                "type": type_name(value),
                "device": value.device.type,
                "dtype": _dtype(value),
                "shape": list(value.shape),
            }
        else:
            obs[name] = {"type": type_name(value)}
    obs["model_call"] = None
    if isinstance(m, nn.Module) and isinstance(Xo, torch.Tensor):
        try:
            m.eval()
            out = m(Xo)
            obs["model_call"] = {"device": out.device.type, "shape": list(out.shape)}
        except Exception as exc:
            obs["model_call"] = {"error": exception(exc)}
    return obs
