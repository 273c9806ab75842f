"""Probes of task `tinynet` (inside the sandboxed worker); helpers shared by tasks are in _shared.py."""

# Self-contained: stdlib, numpy, torch and the engine's probe API (autograder.sandbox.inside.observe,
# whose describers make the observations). A probe never judges: it runs the student's code on
# inputs the check sent and reports what it saw, with the exact type name of everything the
# student returned, so that the check (in the grading process) decides. Helpers and classes start
# with "_" so they are not probes.

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from autograder.sandbox.inside.observe import as_tensor, hidden_run, tensor, type_name

# From _shared.py, run first in the same namespace: _load_layers, _params, _state,
# _state_dict.


class _GraderTinyNet(nn.Module):
    """The grader's own TinyNet, so that train_tinynet is graded even when TinyNet is broken."""

    def __init__(self, in_features: int, hidden: int, out_features: int):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


def tinynet_structure(mod, in_features, hidden, out_features, pool=None, xpool=None):
    """The parameters TinyNet registers; with a hidden `pool`, the hidden run on them too."""
    model = mod.TinyNet(in_features, hidden, out_features)
    obs = {"is_module": isinstance(model, nn.Module), "model_type": type_name(model), **_params(model)}
    return {**obs, "run": hidden_run(model, pool, xpool)}


def tinynet_forward(mod, sizes, state, xs):
    """One TinyNet with the grader's weights in its fc1 and fc2 (`_load_layers`), run on each input of
    `xs` (batches of several sizes)."""
    i, h, o = sizes
    model = mod.TinyNet(*sizes)
    load = _load_layers(model, state, [["fc1", i, h], ["fc2", h, o]])
    if load["missing"] or load["error"]:
        return {"load": load, "outs": []}
    with torch.no_grad():
        outs = [tensor(model(as_tensor(x))) for x in xs]
    return {"load": load, "outs": outs}


def _number(item: Any) -> float | None:
    """The value of a returned loss of a kind that holds one number (float, a one-element tensor or
    NumPy value); the check judges the kind from the type names, the values serve other checks."""
    kind = type(item)
    if kind is float:
        return item
    if kind in (torch.Tensor, nn.Parameter) and item.numel() == 1 and item.is_floating_point():
        return float(item.detach().reshape(()).item())
    if kind in (np.float16, np.float32, np.float64):
        return float(item)
    if kind is np.ndarray and item.size == 1 and item.dtype.kind == "f":
        return float(item.reshape(()))
    return None


def _returned(losses: Any) -> dict[str, Any]:
    obs: dict[str, Any] = {"type": type_name(losses), "len": None, "types": [], "values": []}
    if type(losses) in (list, tuple):
        obs["len"] = len(losses)
        obs["types"] = [type_name(item) for item in losses]
        obs["values"] = [_number(item) for item in losses]
    return obs


class _Watch:
    """A forward hook on the grader's TinyNet: counts the calls, keeps the first call's logits and the
    cross-entropy of every call on weights other than the previous recorded call's (so a pass repeated
    on unchanged weights counts once, and weights that never change give a single loss), and the
    logits of the first LOGITS such passes (what the loop's returned losses are judged against)."""

    LOGITS = 20

    def __init__(self, y: torch.Tensor, width: int):
        self.y, self.width = y, width
        self.calls = 0
        self.losses: list[float] = []
        self.logits: list[Any] = []
        self.first: Any = None
        self._last: Any = None

    def __call__(self, module: nn.Module, args: Any, out: Any) -> None:
        self.calls += 1
        if type(out) is not torch.Tensor or tuple(out.shape) != (len(self.y), self.width):
            return
        with torch.no_grad():
            flat = torch.cat([p.detach().reshape(-1) for p in module.parameters()])
            if self._last is not None and torch.equal(flat, self._last):
                return
            self._last = flat.clone()
            if self.first is None:
                self.first = tensor(out.detach())
            self.losses.append(float(nn.functional.cross_entropy(out.detach(), self.y).item()))
            if len(self.logits) < self.LOGITS:
                self.logits.append(out.detach().numpy().copy())

    def report(self) -> dict[str, Any]:
        return {"hook_calls": self.calls, "hook_losses": self.losses, "first_logits": self.first,
                "hook_logits": self.logits}


class _GradWatch:
    """What each optimizer step on the grader's TinyNet finds in .grad, against the gradients the
    backward passes since the previous step computed (a parameter's hook sees each pass's own
    gradient before it is added to .grad): "fresh" when .grad is exactly those, "stale" when earlier
    epochs' are still added in (no zero_grad), "cleared" when it is gone (zero_grad after backward)."""

    LIMIT = 200

    def __init__(self, model: nn.Module):
        self.params = list(model.parameters())
        self.ids = {id(p) for p in self.params}
        self.fresh: list[Any] = [None] * len(self.params)
        self.steps: list[str] = []
        self.first: Any = None  # fc2.bias's gradient in the first backward pass
        self.handles = [p.register_hook(self._seen(i)) for i, p in enumerate(self.params)]
        from torch.optim.optimizer import register_optimizer_step_pre_hook

        self.handles.append(register_optimizer_step_pre_hook(self._step))

    def _seen(self, i: int) -> Any:
        def hook(grad: torch.Tensor) -> None:
            g = grad.detach().clone()
            self.fresh[i] = g if self.fresh[i] is None else self.fresh[i] + g
            if i == len(self.params) - 1 and self.first is None:
                self.first = tensor(g)

        return hook

    def _step(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        if not any(id(p) in self.ids for group in optimizer.param_groups for p in group["params"]):
            return
        state = "fresh"
        for p, fresh in zip(self.params, self.fresh, strict=True):
            if fresh is None:
                continue
            g = p.grad
            if g is None or (not torch.any(g != 0) and torch.any(fresh != 0)):
                state = "cleared"
                break
            if g.shape != fresh.shape or not torch.allclose(g, fresh, rtol=1e-4, atol=1e-6):
                state = "stale"
        if len(self.steps) < self.LIMIT:
            self.steps.append(state)
        self.fresh = [None] * len(self.params)

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def report(self) -> dict[str, Any]:
        return {"grad_steps": self.steps, "first_grad": self.first}


def tinynet_train(mod, sizes, state, X, y, epochs=None, lr=None, x_hidden=None):
    """train_tinynet on the grader's own TinyNet of weights `state` (epochs and lr passed, or with None
    the defaults): what it returned, what the forward hook saw; with `x_hidden`, the trained model's
    outputs on X and there, and its trained weights."""
    model = _GraderTinyNet(*sizes)
    model.load_state_dict(_state(state))
    Xt, yt = as_tensor(X), as_tensor(y)
    watch = _Watch(yt, sizes[2])
    handle = model.register_forward_hook(watch)
    grads = _GradWatch(model)
    try:
        if epochs is None:
            losses = mod.train_tinynet(model, Xt, yt)
        else:
            losses = mod.train_tinynet(model, Xt, yt, epochs, lr)
    finally:
        grads.remove()
    handle.remove()
    obs = {**_returned(losses), **watch.report(), **grads.report()}
    if x_hidden is not None:
        with torch.no_grad():
            obs["logits"] = tensor(model(Xt))
            obs["hidden_logits"] = tensor(model(as_tensor(x_hidden)))
        obs["weights"] = {k: tensor(v) for k, v in _state_dict(model).items()}
    return obs
