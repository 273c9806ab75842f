"""Probes of task `descent` (inside the sandboxed worker); helpers shared by tasks are in _shared.py."""

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

from autograder.sandbox.inside.observe import (
    as_tensor,
    backward_runs,
    graph_nodes,
    numbers,
    scalar,
    type_name,
)

# From _shared.py, run first in the same namespace: _dtype.


def descent_fit_line(mod, X, Y, lr=None, steps=None):
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


def descent_sgd_step(mod, values, grads, lr, parameters):
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
