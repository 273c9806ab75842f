"""Probes of task `delivery` (inside the sandboxed worker); helpers shared by tasks are in _shared.py."""

# Self-contained: stdlib, numpy, torch and the engine's probe API (autograder.sandbox.inside.observe,
# whose describers make the observations). A probe never judges: it runs the student's code on
# inputs the check sent and reports what it saw, with the exact type name of everything the
# student returned, so that the check (in the grading process) decides. Helpers and classes start
# with "_" so they are not probes.

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from autograder.sandbox.inside.observe import as_tensor, hidden_run, tensor, type_name

# From _shared.py, run first in the same namespace: _delivery, _load_layers, _named_buffers,
# _named_modules, _named_parameters, _params, _reachable, _state_dict.


def _dropout_ps(model: nn.Module) -> list[float]:
    return [float(m.p) for _, m in _named_modules(model) if isinstance(m, nn.Dropout)]


def _delivery_structure(model: nn.Module) -> dict[str, Any]:
    return {
        "state_keys": list(_state_dict(model).keys()),
        "buffer_names": [n for n, _ in _named_buffers(model)],
        "hidden_type": type_name(getattr(model, "hidden", None)),
        "modules": [type_name(m) for _, m in _named_modules(model)],
        "dropout_ps": _dropout_ps(model),
        **_params(model),
    }


def _holders(model: nn.Module) -> dict[str, Any]:
    """Where the model keeps tensors: every buffer (persistent or not), every small parameter and every
    plain tensor attribute, with values and dtypes (the check finds the ones it gave the model)."""
    return {
        "buffers": {n: tensor(b) for n, b in _named_buffers(model)},
        "parameters": {n: tensor(p) for n, p in _named_parameters(model) if p.numel() <= 64},
        "attributes": {
            n: tensor(v)
            for n, v in model.__dict__.items()
            if isinstance(v, torch.Tensor) and not isinstance(v, nn.Parameter)
        },
    }


def delivery_structure(mod, x_mean, x_std, p_drop=None, pool=None, xpool=None):
    """What DeliveryMLP(x_mean, x_std) registers and where it keeps x_mean and x_std; with `p_drop`,
    the structure of DeliveryMLP(x_mean, x_std, p_drop) too; with a hidden `pool`, the hidden run."""
    model = _delivery(mod, x_mean, x_std)
    obs = {**_delivery_structure(model), "holders": _holders(model)}
    if p_drop is not None:
        explicit = _delivery(mod, x_mean, x_std, p_drop)
        obs["explicit"] = {**_delivery_structure(explicit), "holders": _holders(explicit)}
    obs["run"] = hidden_run(model, pool, xpool)
    return obs


def delivery_double(mod, x_mean, x_std, p_drop=None, pool=None, xpool=None):
    """After .double(): the dtypes of state_dict and where x_mean and x_std are kept (for p_drop too);
    with a float64 hidden `pool`, the hidden run on the converted model."""
    model = _delivery(mod, x_mean, x_std).double()
    obs: dict[str, Any] = {
        "state_dtypes": {k: str(v.dtype).replace("torch.", "") for k, v in _state_dict(model).items()},
        "holders": _holders(model),
    }
    if p_drop is not None:
        explicit = _delivery(mod, x_mean, x_std, p_drop).double()
        obs["explicit"] = {
            "state_dtypes": {k: str(v.dtype).replace("torch.", "") for k, v in _state_dict(explicit).items()},
            "holders": _holders(explicit),
        }
    obs["run"] = hidden_run(model, pool, xpool)
    return obs


def delivery_forward(mod, x_mean, x_std, state, xs, layers):
    """DeliveryMLP(x_mean, x_std) with the grader's weights and other buffer values loaded
    (`_load_layers`: the buffers by key where the model has them, else into what holds the x_mean and
    x_std it was given), run in eval mode on each x of `xs`."""
    model = _delivery(mod, x_mean, x_std)
    load = _load_layers(model, state, layers, given={"x_mean": x_mean, "x_std": x_std})
    if load["missing"] or load["error"]:
        return {"load": load, "outs": []}
    nn.Module.eval(model)
    for dropout in _reachable(model, nn.Dropout):  # eval() reaching them is the dropout check's business
        nn.Module.eval(dropout)
    with torch.no_grad():
        outs = [tensor(model(as_tensor(x))) for x in xs]
    return {"load": load, "outs": outs}


def delivery_output_shapes(mod, x_mean, x_std, xs, pool=None, xpool=None):
    """DeliveryMLP(x_mean, x_std) in eval mode on each x of `xs` (what model(x) returns: type, shape,
    dtype), then the hidden run on the same model."""
    model = _delivery(mod, x_mean, x_std)
    nn.Module.eval(model)
    for dropout in _reachable(model, nn.Dropout):  # eval() reaching them is the dropout check's business
        nn.Module.eval(dropout)
    with torch.no_grad():
        outs = [tensor(model(as_tensor(x))) for x in xs]
    return {"outs": outs, "run": hidden_run(model, pool, xpool)}


def delivery_train_mode(mod, x_mean, x_std, p_drop, x, h):
    """DeliveryMLP with an explicit p_drop: its nn.Dropout layers' p and each of them run alone in train
    mode on the hidden `h`; two passes of the model in train mode and two in eval mode; the Dropout p
    of the default path too."""
    default_ps = _dropout_ps(_delivery(mod, x_mean, x_std))
    model = _delivery(mod, x_mean, x_std, p_drop)
    ht = as_tensor(h)
    runs = []
    with torch.no_grad():
        for name, module in _named_modules(model):
            if isinstance(module, nn.Dropout):
                nn.Module.train(module, True)
                runs.append({"name": name, "p": float(module.p), "out": tensor(module(ht))})
        xt = as_tensor(x)
        nn.Module.train(model, True)
        train = [tensor(model(xt)), tensor(model(xt))]
        nn.Module.eval(model)
        evals = [tensor(model(xt)), tensor(model(xt))]
    return {
        "dropout_ps": _dropout_ps(model),
        "default_ps": default_ps,
        "dropouts": runs,
        "train": train,
        "eval": evals,
    }


def delivery_predict(mod, x_mean, x_std, x, calls, pool, xpool, x_single=None, p_drop=None, seed=0):
    """predict() on a model of hidden values (the hidden run) left in train mode; a hook records the
    modes its forward ran in. With x_single (N = 1): one more call on it, the model put back in train
    mode first. Then the model's own eval-mode outputs on the same inputs, to compare with; the torch
    seed is set to `seed` before each of these calls (so a Dropout that eval() cannot reach draws
    the same masks in both). With p_drop: the model built with that p_drop."""
    model = _delivery(mod, x_mean, x_std, p_drop)
    run = hidden_run(model, pool, xpool)
    nn.Module.train(model, True)
    dropouts = [m for _, m in _named_modules(model) if isinstance(m, nn.Dropout)]
    seen = []

    def hook(module, args, out):
        seen.append(
            {
                "grad_enabled": torch.is_grad_enabled(),
                "inference_mode": torch.is_inference_mode_enabled(),
                "training": module.training,
                "dropout_training": any(d.training for d in dropouts),
            }
        )

    handle = model.register_forward_hook(hook)
    outs = []
    for _ in range(calls):
        torch.manual_seed(seed)
        outs.append(tensor(mod.predict(model, as_tensor(x))))
    single = None
    if x_single is not None:
        nn.Module.train(model, True)
        torch.manual_seed(seed)
        single = tensor(mod.predict(model, as_tensor(x_single)))
    handle.remove()
    nn.Module.eval(model)
    with torch.no_grad():
        torch.manual_seed(seed)
        own = tensor(model(as_tensor(x)))
        torch.manual_seed(seed)
        own_single = tensor(model(as_tensor(x_single))) if x_single is not None else None
    return {"run": run, "outs": outs, "single": single, "seen": seen, "own": own, "own_single": own_single}
