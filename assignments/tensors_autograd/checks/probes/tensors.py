"""Probes of task `tensors` (inside the sandboxed worker); helpers shared by tasks are in _shared.py."""

# Self-contained: stdlib, numpy, torch and the engine's probe API (autograder.sandbox.inside.observe,
# whose describers and spies make the observations). A probe never judges: it runs the student's
# code on inputs the check sent and reports what it saw, with the exact type name of everything the
# student returned, so that the check (in the grading process) decides. Helpers and classes start
# with "_" so they are not probes.

from __future__ import annotations

import numpy as np
import torch

from autograder.sandbox.inside.observe import (
    array,
    as_tensor,
    exception,
    tensor,
)


def tensors_share_numpy(mod, arr, write_numpy, write_tensor):
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


def tensors_to_numpy(mod, values, kind):
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


def tensors_row_dots(mod, a, b):
    return tensor(mod.row_dots(as_tensor(a), as_tensor(b)))
