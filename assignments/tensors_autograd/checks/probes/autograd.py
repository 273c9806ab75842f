"""Probes of task `autograd` (inside the sandboxed worker); helpers shared by tasks are in _shared.py."""

# Self-contained: stdlib, numpy, torch and the engine's probe API (autograder.sandbox.inside.observe,
# whose describers and spies make the observations). A probe never judges: it runs the student's
# code on inputs the check sent and reports what it saw, with the exact type name of everything the
# student returned, so that the check (in the grading process) decides. Helpers and classes start
# with "_" so they are not probes.

from __future__ import annotations

import numpy as np
import torch

from autograder.sandbox.inside.observe import (
    as_tensor,
    backward_runs,
    scalar,
)


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


def autograd_manual_grad(mod, X, Y, w):
    Xa, Ya = np.array(X, copy=True), np.array(Y, copy=True)
    with backward_runs() as spy:
        value = mod.manual_grad(Xa, Ya, w)
    changed = not (np.array_equal(Xa, X) and np.array_equal(Ya, Y))
    return {**scalar(value), "inputs_changed": changed, "backward_runs": spy.runs}
