"""Probes of task `containers` (inside the sandboxed worker); helpers shared by tasks are in _shared.py."""

# Self-contained: stdlib, numpy, torch and the engine's probe API (autograder.sandbox.inside.observe,
# whose describers make the observations). A probe never judges: it runs the student's code on
# inputs the check sent and reports what it saw, with the exact type name of everything the
# student returned, so that the check (in the grading process) decides. Helpers and classes start
# with "_" so they are not probes.

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
import torch
from torch import nn

from autograder.sandbox.inside.observe import as_tensor, exception, hidden_run, tensor, type_name

# From _shared.py, run first in the same namespace: _all_linears, _load_layers, _params,
# _state_dict.


def _module_obs(model: nn.Module) -> dict[str, Any]:
    try:
        torch.optim.SGD(model.parameters(), lr=0.1)
        optimizer = None
    except Exception as exc:
        optimizer = exception(exc)
    return {"state_keys": list(_state_dict(model).keys()), "optimizer_error": optimizer, **_params(model)}


def containers_fixedmlp(mod, sizes, pool=None, xpool=None):
    model = mod.FixedMLP(list(sizes))
    layers = getattr(model, "layers", None)
    return {"layers_type": type_name(layers), **_module_obs(model), "run": hidden_run(model, pool, xpool)}


def containers_twohead(mod, x, pool=None, xpool=None):
    model = mod.TwoHead()
    heads_attr = getattr(model, "heads", None)
    with torch.no_grad():
        out = model(as_tensor(x))
    obs = {"heads_type": type_name(heads_attr), "out_type": type_name(out), "out": None, **_module_obs(model)}
    if type(out) in (dict, OrderedDict):
        obs["out"] = {str(k): tensor(v) for k, v in out.items()}
    return {**obs, "run": hidden_run(model, pool, xpool)}


def containers_double(mod, fixed_sizes, x_fixed, x_two, more_sizes=(), runs=None):
    """After .double(): the dtype of every nn.Linear's weight (registered or not) and of the outputs;
    also for FixedMLP of `more_sizes` (other depths), reported as "FixedMLP([...])". With `runs`
    (float64 hidden pools for FixedMLP and TwoHead), the hidden run on those converted models too."""
    report = {}
    cases = [("FixedMLP", mod.FixedMLP(list(fixed_sizes)), x_fixed), ("TwoHead", mod.TwoHead(), x_two)]
    cases += [
        (f"FixedMLP({list(sizes)})", mod.FixedMLP(list(sizes)), np.ones((2, sizes[0]), np.float32))
        for sizes in more_sizes
    ]
    for k, (name, model, x) in enumerate(cases):
        model = model.double()
        linears = _all_linears(model)
        with torch.no_grad():
            out = model(as_tensor(x).double())
        outs = (
            out.values()
            if type(out) in (dict, OrderedDict)
            else list(out)
            if type(out) in (tuple, list)
            else [out]
        )
        report[name] = {
            "linear_dtypes": [str(m.weight.dtype).replace("torch.", "") for m in linears],
            "out_dtypes": [
                str(o.dtype).replace("torch.", "") if type(o) is torch.Tensor else type_name(o) for o in outs
            ],
        }
        if runs is not None and k < len(runs):
            report[name]["run"] = hidden_run(model, runs[k]["pool"], runs[k]["xpool"])
    return report


def containers_fixedmlp_forward(mod, sizes, state, x, layers):
    """FixedMLP with the grader's weights in its layers (`_load_layers`), run on x."""
    model = mod.FixedMLP(list(sizes))
    load = _load_layers(model, state, layers)
    if load["missing"] or load["error"]:
        return {"load": load, "out": None}
    with torch.no_grad():
        out = model(as_tensor(x))
    return {"load": load, "out": tensor(out)}


def containers_twohead_forward(mod, state, x, layers):
    """TwoHead with the grader's weights in its layers (`_load_layers`), run on x."""
    model = mod.TwoHead()
    load = _load_layers(model, state, layers)
    if load["missing"] or load["error"]:
        return {"load": load, "out": None, "out_type": None}
    with torch.no_grad():
        out = model(as_tensor(x))
    obs = {"load": load, "out_type": type_name(out), "out": None}
    if type(out) in (dict, OrderedDict):
        obs["out"] = {str(k): tensor(v) for k, v in out.items()}
    return obs
