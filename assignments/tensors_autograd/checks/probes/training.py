"""Probes of task `training` (inside the sandboxed worker); helpers shared by tasks are in _shared.py."""

# Self-contained: stdlib, numpy, torch and the engine's probe API (autograder.sandbox.inside.observe,
# whose describers and spies make the observations). A probe never judges: it runs the student's
# code on inputs the check sent and reports what it saw, with the exact type name of everything the
# student returned, so that the check (in the grading process) decides. Helpers and classes start
# with "_" so they are not probes.

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.optim.optimizer import register_optimizer_step_pre_hook

from autograder.sandbox.inside.observe import (
    as_tensor,
    graph_nodes,
    numbers,
    scalar,
    tensor,
    type_name,
)


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


def training_train(mod, sizes, state, X, y, epochs, lr):
    model = _grader_net(sizes, state)
    grads = _GradWatch(model)
    try:
        losses = mod.train(model, as_tensor(X), as_tensor(y), epochs, lr)
    finally:
        seen = grads.remove()
    return {**numbers(losses), **seen}


def training_accuracy(mod, sizes, state, X, y, p_drop=0.0, calls=1):
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


def training_tuned(mod):
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
