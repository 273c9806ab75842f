"""Probes: run inside the sandboxed worker on one student module and return plain observations."""

# Self-contained: stdlib, numpy, torch and the engine's probe API (autograder.sandbox.inside.observe,
# whose describers and spies make the observations). A probe never judges: it runs the student's
# code on inputs the check sent and reports what it saw, with the exact type name of everything the
# student returned, so that the check (in the grading process) decides. Helpers and classes start
# with "_" so they are not probes.

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn
from torch.optim.optimizer import register_optimizer_step_pre_hook

from autograder.sandbox.inside.observe import (
    array,
    as_tensor,
    backward_runs,
    exception,
    graph_nodes,
    numbers,
    scalar,
    tensor,
    type_name,
)


def _dtype(t: torch.Tensor) -> str:
    return str(t.dtype).replace("torch.", "")


_named_parameters = nn.Module.named_parameters
_named_buffers = nn.Module.named_buffers


# ----------------------------------------------------------------------------- tensors


def share_numpy(mod, arr, write_numpy, write_tensor):
    """share_numpy(arr); then a write into arr and a write into the tensor: does the other see it?"""
    a = np.ascontiguousarray(np.array(arr, copy=True))
    t = mod.share_numpy(a)
    obs = tensor(t)
    if obs["values"] is None:
        return obs
    a[...] = write_numpy
    obs["after_numpy_write"] = np.array(t.detach().numpy(), copy=True)
    try:
        with torch.no_grad():
            t.copy_(torch.from_numpy(np.array(write_tensor, copy=True)))
        obs["after_tensor_write"] = np.array(a, copy=True)
        obs["tensor_write_error"] = None
    except Exception as exc:
        obs["after_tensor_write"] = None
        obs["tensor_write_error"] = exception(exc)
    return obs


def to_numpy(mod, values, kind):
    """to_numpy on a plain tensor, a leaf with requires_grad=True, or a non-leaf (2 * leaf)."""
    base = as_tensor(values)
    if kind == "plain":
        t = base
    elif kind == "leaf":
        t = base.requires_grad_(True)
    else:
        t = base.requires_grad_(True) * 2
    before = t.detach().clone()
    grad_fn, leaf, rg = t.grad_fn, t.is_leaf, t.requires_grad
    out = mod.to_numpy(t)
    obs = array(out)
    obs["t_changed"] = not torch.equal(t.detach(), before)
    obs["t_flags_changed"] = (t.grad_fn is not grad_fn) or t.is_leaf != leaf or t.requires_grad != rg
    obs["t_requires_grad"] = bool(t.requires_grad)
    return obs


def row_dots(mod, a, b):
    return tensor(mod.row_dots(as_tensor(a), as_tensor(b)))


# ----------------------------------------------------------------------------- autograd


def autograd_grad(mod, X, Y, w, calls=1):
    """autograd_grad(X, Y, w) `calls` times, counting backward passes in autograd's engine."""
    Xt, Yt = as_tensor(X), as_tensor(Y)
    Xb, Yb = Xt.clone(), Yt.clone()
    results = []
    for _ in range(calls):
        with backward_runs() as spy:
            value = mod.autograd_grad(Xt, Yt, w)
        results.append({**scalar(value), "backward_runs": spy.runs})
    return {"results": results, "inputs_changed": not (torch.equal(Xt, Xb) and torch.equal(Yt, Yb))}


def manual_grad(mod, X, Y, w):
    Xa, Ya = np.array(X, copy=True), np.array(Y, copy=True)
    with backward_runs() as spy:
        value = mod.manual_grad(Xa, Ya, w)
    changed = not (np.array_equal(Xa, X) and np.array_equal(Ya, Y))
    return {**scalar(value), "inputs_changed": changed, "backward_runs": spy.runs}


# ----------------------------------------------------------------------------- descent


def fit_line(mod, X, Y, lr=None, steps=None):
    """fit_line(X, Y[, lr, steps]): the pair it returns, w and the losses as plain data."""
    kwargs = {} if lr is None else {"lr": lr, "steps": steps}
    with backward_runs() as spy:
        result = mod.fit_line(as_tensor(X), as_tensor(Y), **kwargs)
    obs: dict[str, Any] = {"type": type_name(result), "len": None, "backward_runs": spy.runs}
    if type(result) in (tuple, list):
        obs["len"] = len(result)
        if len(result) == 2:
            obs["w"] = scalar(result[0])
            obs["losses"] = numbers(result[1])
    return obs


def sgd_step(mod, values, grads, lr, parameters):
    """sgd_step(params, lr) on leaves (nn.Parameter or plain tensors) with the given grads."""
    params: list[torch.Tensor] = []
    for value, grad, is_param in zip(values, grads, parameters, strict=True):
        p = nn.Parameter(as_tensor(value)) if is_param else as_tensor(value).requires_grad_(True)
        if grad is not None:
            p.grad = as_tensor(grad)
        params.append(p)
    ids = [id(p) for p in params]
    given = list(params)
    with graph_nodes() as graph:
        result = mod.sgd_step(params, lr)
    return {
        "result_type": type_name(result),
        "values": [np.array(p.detach().numpy(), copy=True) for p in given],
        "same_list": [id(p) for p in params] == ids,
        "leaves": [bool(p.is_leaf) for p in given],
        "requires_grad": [bool(p.requires_grad) for p in given],
        "dtypes": [_dtype(p) for p in given],
        "graph_nodes": graph.nodes,
    }


# ----------------------------------------------------------------------------- device


def pick_device(mod, pattern):
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


def to_device(mod, X, y, sizes, as_object=False):
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
            obs[name] = {"type": type_name(value), "device": value.device.type, "dtype": _dtype(value),
                         "shape": list(value.shape)}
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


# ----------------------------------------------------------------------------- training


class _GraderNet(nn.Module):
    """The grader's own TinyNet (optionally with dropout), so the loop is graded on its own."""

    def __init__(self, in_features: int, hidden: int, out_features: int, p_drop: float = 0.0):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.relu = nn.ReLU()
        self.drop = nn.Dropout(p_drop)
        self.fc2 = nn.Linear(hidden, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.drop(self.relu(self.fc1(x))))


def _grader_net(sizes, state, p_drop=0.0) -> nn.Module:
    model = _GraderNet(*sizes, p_drop=p_drop)
    model.load_state_dict({k: as_tensor(v) for k, v in state.items()})
    return model


class _GradWatch:
    """Per optimizer step, .grad against the backward passes' own gradients since the last step: "fresh",
    "stale" (no zero_grad) or "cleared" (zero_grad after backward); fc2.bias's first gradient."""

    def __init__(self, model: nn.Module):
        self.params = list(model.parameters())
        self.fresh: list[Any] = [None] * len(self.params)
        self.steps, self.first = [], None
        self.handles = [p.register_hook(self._seen(i)) for i, p in enumerate(self.params)]
        self.handles.append(register_optimizer_step_pre_hook(self._step))

    def _seen(self, i: int) -> Any:
        def hook(grad: torch.Tensor) -> None:
            g = grad.detach().clone()
            self.fresh[i] = g if self.fresh[i] is None else self.fresh[i] + g
            if i == len(self.params) - 1 and self.first is None:
                self.first = tensor(g)
        return hook

    def _step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        if not any(p is q for group in optimizer.param_groups for p in group["params"] for q in self.params):
            return
        state = "fresh"
        for p, fresh in [(p, f) for p, f in zip(self.params, self.fresh, strict=True) if f is not None]:
            if p.grad is None or (not torch.any(p.grad != 0) and torch.any(fresh != 0)):
                state = "cleared"
                break
            if p.grad.shape != fresh.shape or not torch.allclose(p.grad, fresh, rtol=1e-4, atol=1e-6):
                state = "stale"
        self.steps.append(state)
        self.fresh = [None] * len(self.params)

    def remove(self) -> dict[str, Any]:
        for handle in self.handles:
            handle.remove()
        return {"grad_steps": self.steps[:200], "first_grad": self.first}


def train(mod, sizes, state, X, y, epochs, lr):
    model = _grader_net(sizes, state)
    grads = _GradWatch(model)
    try:
        losses = mod.train(model, as_tensor(X), as_tensor(y), epochs, lr)
    finally:
        seen = grads.remove()
    return {**numbers(losses), **seen}


def accuracy(mod, sizes, state, X, y, p_drop=0.0, calls=1):
    """accuracy(model, X, y) on a model put in train mode before every call."""
    model = _grader_net(sizes, state, p_drop)
    Xt, yt = as_tensor(X), as_tensor(y)
    results = []
    hooked: list[int] = []
    handle = model.register_forward_hook(lambda m, a, out: hooked.append(int(out.grad_fn is not None)))
    for _ in range(calls):
        model.train()
        hooked.clear()
        with graph_nodes() as graph:
            value = mod.accuracy(model, Xt, yt)
        results.append({**scalar(value), "graph_nodes": graph.nodes + sum(hooked)})
    handle.remove()
    return {"results": results}


def tuned(mod):
    """The module's TUNED, as plain data (the check trains it with the reference's loop).

    Without TUNED, tuned_values() itself: a notebook's cells keep definitions only, so its
    `TUNED = tuned_values()` line is never run (a stub's NotImplementedError propagates)."""
    value = getattr(mod, "TUNED", None)
    if value is None and callable(getattr(mod, "tuned_values", None)):
        value = mod.tuned_values()
    obs: dict[str, Any] = {"type": type_name(value), "items": None}
    if type(value) is dict:
        obs["items"] = {
            str(k): {"type": type_name(v), "value": v if type(v) in (int, float) else None}
            for k, v in value.items()
        }
    return obs


# ----------------------------------------------------------------------------- counting


def tinynet_count(mod, in_features, hidden, out_features):
    return scalar(mod.tinynet_count(in_features, hidden, out_features))


def growth(mod, in_features, out_features, hidden_from, hidden_to):
    return scalar(mod.growth(in_features, out_features, hidden_from, hidden_to))
