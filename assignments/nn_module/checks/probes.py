"""Probes: run inside the sandboxed worker on one student module and return plain observations."""

# Self-contained: stdlib, numpy, torch and the engine's probe API (autograder.sandbox.inside.observe,
# whose describers make the observations). A probe never judges: it runs the student's code on
# inputs the check sent and reports what it saw, with the exact type name of everything the
# student returned, so that the check (in the grading process) decides. Helpers and classes start
# with "_" so they are not probes.

from __future__ import annotations

import os
import pathlib
import random
import tempfile
from collections import OrderedDict
from typing import Any

import numpy as np
import torch
from torch import nn

from autograder.sandbox.inside.observe import array, as_tensor, exception, scalar, tensor, type_name

# nn.Module's own methods, called unbound: a student's class cannot override what the probe reads.
_named_parameters = nn.Module.named_parameters
_named_buffers = nn.Module.named_buffers
_named_modules = nn.Module.named_modules
_state_dict = nn.Module.state_dict


def _state(arrays: dict[str, Any]) -> dict[str, torch.Tensor]:
    return {k: as_tensor(v) for k, v in arrays.items()}


def _params(model: nn.Module) -> dict[str, Any]:
    named = list(_named_parameters(model))
    return {
        "names": [n for n, _ in named],
        "types": [type_name(p) for _, p in named],
        "shapes": [list(p.shape) for _, p in named],
        "count": int(sum(p.numel() for _, p in named)),
        "linears": _linear_shapes(model),
    }


def _own(module: Any, name: str) -> Any:
    """A parameter registered on `module` itself (nn.Module's own registry, not an attribute lookup)."""
    registry = getattr(module, "__dict__", {}).get("_parameters")
    return registry.get(name) if isinstance(registry, dict) else None


def _linear_shapes(model: nn.Module) -> list[list[Any]]:
    """Every registered nn.Linear in registration order: [name, weight shape, bias shape or None]."""
    found = []
    for name, module in _named_modules(model):
        weight, bias = _own(module, "weight"), _own(module, "bias")
        if isinstance(module, nn.Linear) and isinstance(weight, torch.Tensor):
            bias_shape = list(bias.shape) if isinstance(bias, torch.Tensor) else None
            found.append([name, list(weight.shape), bias_shape])
    return found


# ----------------------------------------------------------------------------- hidden runs

# A structural check judges the student's own model: its registered tensors are filled with values
# from a hidden pool, in state_dict order (what the grader recomputes from the keys and shapes the
# probe reports), and every registered nn.Linear is run alone on hidden inputs as wide as its weight.
# The outputs depend on the hidden values and on nothing but the layer, so a slip in forward (or in
# another layer's shape) never shows here; and a made-up or replayed answer cannot match them.


def _pool_slice(pool: torch.Tensor, offset: int, shape: tuple[int, ...]) -> torch.Tensor:
    """The next values of a hidden pool for a tensor of `shape`, starting at `offset`, cycling."""
    count = int(np.prod(shape)) if shape else 1
    return pool[(offset + torch.arange(count)) % len(pool)].reshape(shape)


def _fill(model: nn.Module, pool: Any) -> dict[str, Any]:
    """Load every floating tensor of the model's state_dict with the next values of `pool` (through
    load_state_dict and the model's own keys); report the keys and shapes it filled."""
    values = as_tensor(pool)
    entries = [(k, v) for k, v in _state_dict(model).items()
               if isinstance(v, torch.Tensor) and v.is_floating_point()]
    state, offset = {}, 0
    for key, held in entries:
        state[key] = _pool_slice(values, offset, tuple(held.shape)).to(held.dtype)
        offset += held.numel()
    report: dict[str, Any] = {"entries": [[k, list(v.shape)] for k, v in entries], "error": None}
    try:
        nn.Module.load_state_dict(model, state, strict=False)
    except Exception as exc:
        report["error"] = exception(exc)
    return report


def _layer_runs(model: nn.Module, xpool: Any, rows: int) -> list[dict[str, Any]]:
    """Each registered nn.Linear run alone (no_grad) on `rows` rows of the hidden inputs."""
    xs = as_tensor(xpool)
    runs = []
    for name, module in _named_modules(model):
        weight = _own(module, "weight")
        if not isinstance(module, nn.Linear) or not isinstance(weight, torch.Tensor) or weight.dim() != 2:
            continue
        x = _pool_slice(xs, 0, (rows, int(weight.shape[1]))).to(weight.dtype)
        run: dict[str, Any] = {"name": name, "bias": isinstance(_own(module, "bias"), torch.Tensor),
                               "raised": None, "out": None}
        try:
            with torch.no_grad():
                run["out"] = tensor(module(x))
        except Exception as exc:
            run["raised"] = exception(exc)
        runs.append(run)
    return runs


def _hidden_run(model: nn.Module, pool: Any, xpool: Any, rows: int = 4) -> dict[str, Any] | None:
    """The hidden values filled in, then the buffers read back and every nn.Linear run alone."""
    if pool is None:
        return None
    run = _fill(model, pool)
    run["state_after"] = {k: tensor(v) for k, v in _state_dict(model).items()
                          if k.rpartition(".")[2] not in ("weight", "bias")}
    run["buffers"] = {n: tensor(b) for n, b in _named_buffers(model)}
    run["layers"] = _layer_runs(model, xpool, rows)
    return run


def _all_linears(model: nn.Module) -> list[nn.Linear]:
    """Every nn.Linear reachable from the model: registered ones in registration order, then any kept
    in a plain attribute, list or dict (which the model's registry does not know)."""
    return _reachable(model, nn.Linear)


def _reachable(model: nn.Module, kind: type) -> list[Any]:
    """Every module of type `kind` reachable from the model, registered or kept in a plain attribute,
    list or dict (registered ones first, in registration order)."""
    found: list[Any] = []
    seen: set[int] = set()

    def visit(obj: Any, depth: int) -> None:
        if depth > 6 or id(obj) in seen:
            return
        seen.add(id(obj))
        if isinstance(obj, kind):
            found.append(obj)
        if isinstance(obj, nn.Module):
            registry = obj.__dict__.get("_modules")
            for value in list(registry.values()) if isinstance(registry, dict) else []:
                visit(value, depth + 1)
            for value in list(obj.__dict__.values()):
                visit(value, depth + 1)
        elif type(obj) in (list, tuple):
            for value in obj:
                visit(value, depth + 1)
        elif type(obj) in (dict, OrderedDict):
            for value in obj.values():
                visit(value, depth + 1)

    visit(model, 0)
    return found


def _layers_by_role(model: nn.Module, layers: Any) -> dict[str, Any]:
    """The model's nn.Linear for each of the contract's layers `[prefix, in, out]`: the registered module
    of that name when the model has one for every prefix, otherwise its nn.Linear layers (registered
    or not) matched by weight shape, in the order they are found."""
    named = dict(_named_modules(model))

    def fits(module: Any, fan_in: int, fan_out: int) -> bool:
        weight = _own(module, "weight")
        return isinstance(module, nn.Linear) and isinstance(weight, torch.Tensor) and tuple(
            weight.shape) == (fan_out, fan_in)

    if all(fits(named.get(prefix), fan_in, fan_out) for prefix, fan_in, fan_out in layers):
        return {prefix: named[prefix] for prefix, _, _ in layers}
    free = _all_linears(model)
    roles: dict[str, Any] = {}
    for prefix, fan_in, fan_out in layers:
        match = next((m for m in free if fits(m, fan_in, fan_out)), None)
        roles[prefix] = match
        if match is not None:
            free.remove(match)
    return roles


def _load_layers(model: nn.Module, arrays: dict[str, Any], layers: Any,
                 given: dict[str, Any] | None = None) -> dict[str, Any]:
    """The grader's weights copied into the model's layer for each role (`_layers_by_role`), and its other
    tensors (buffers) by state_dict key where the model has that key, else (a buffer under another
    name, not persistent, or a plain attribute) into the tensors that hold what the constructor was
    `given` for it; then what each role's layer holds, read back (bias None: the layer has none). A
    role without a layer is `missing`."""
    roles = _layers_by_role(model, layers)
    report: dict[str, Any] = {"missing": [], "error": None, "held": {}}
    try:
        with torch.no_grad():
            for prefix, module in roles.items():
                if module is None:
                    report["missing"].append(prefix)
                    continue
                weight, bias = _own(module, "weight"), _own(module, "bias")
                weight.copy_(as_tensor(arrays[f"{prefix}.weight"]))
                if isinstance(bias, torch.Tensor) and f"{prefix}.bias" in arrays:
                    bias.copy_(as_tensor(arrays[f"{prefix}.bias"]))
            own = _state_dict(model)
            for key, value in arrays.items():
                if key.rpartition(".")[0] in roles:
                    continue
                if key in own:
                    own[key].copy_(as_tensor(value))
                elif given is not None and key in given:
                    for held in _holding(model, as_tensor(given[key])):
                        held.copy_(as_tensor(value))
    except Exception as exc:
        report["error"] = exception(exc)
        return report
    for prefix, module in roles.items():
        if module is not None:
            bias = _own(module, "bias")
            report["held"][prefix] = {"weight": tensor(_own(module, "weight")),
                                      "bias": tensor(bias) if isinstance(bias, torch.Tensor) else None}
    return report


def _holding(model: nn.Module, value: torch.Tensor) -> list[torch.Tensor]:
    """The model's buffers and plain tensor attributes equal to `value` (what it keeps of an input)."""
    found = [b for _, b in _named_buffers(model)]
    found += [v for v in model.__dict__.values()
              if isinstance(v, torch.Tensor) and not isinstance(v, nn.Parameter)]
    return [t for t in found if t.shape == value.shape and torch.equal(t.to(value.dtype), value)]


def _reseed_globals(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


# ----------------------------------------------------------------------------- tinynet


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
    return {**obs, "run": _hidden_run(model, pool, xpool)}


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
    on unchanged weights counts once, and weights that never change give a single loss)."""

    def __init__(self, y: torch.Tensor, width: int):
        self.y, self.width = y, width
        self.calls = 0
        self.losses: list[float] = []
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

    def report(self) -> dict[str, Any]:
        return {"hook_calls": self.calls, "hook_losses": self.losses, "first_logits": self.first}


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


# ----------------------------------------------------------------------------- delivery


def _delivery(mod, x_mean, x_std, p_drop=None):
    args = (as_tensor(x_mean), as_tensor(x_std)) + (() if p_drop is None else (p_drop,))
    return mod.DeliveryMLP(*args)


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
        "attributes": {n: tensor(v) for n, v in model.__dict__.items()
                       if isinstance(v, torch.Tensor) and not isinstance(v, nn.Parameter)},
    }


def delivery_structure(mod, x_mean, x_std, p_drop=None, pool=None, xpool=None):
    """What DeliveryMLP(x_mean, x_std) registers and where it keeps x_mean and x_std; with `p_drop`,
    the structure of DeliveryMLP(x_mean, x_std, p_drop) too; with a hidden `pool`, the hidden run."""
    model = _delivery(mod, x_mean, x_std)
    obs = {**_delivery_structure(model), "holders": _holders(model)}
    if p_drop is not None:
        explicit = _delivery(mod, x_mean, x_std, p_drop)
        obs["explicit"] = {**_delivery_structure(explicit), "holders": _holders(explicit)}
    obs["run"] = _hidden_run(model, pool, xpool)
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
    obs["run"] = _hidden_run(model, pool, xpool)
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
    return {"outs": outs, "run": _hidden_run(model, pool, xpool)}


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
    return {"dropout_ps": _dropout_ps(model), "default_ps": default_ps, "dropouts": runs, "train": train,
            "eval": evals}


def delivery_predict(mod, x_mean, x_std, x, calls, pool, xpool, x_single=None, p_drop=None, seed=0):
    """predict() on a model of hidden values (the hidden run) left in train mode; a hook records the
    modes its forward ran in. With x_single (N = 1): one more call on it, the model put back in train
    mode first. Then the model's own eval-mode outputs on the same inputs, to compare with; the torch
    seed is set to `seed` before each of these calls (so a Dropout that eval() cannot reach draws
    the same masks in both). With p_drop: the model built with that p_drop."""
    model = _delivery(mod, x_mean, x_std, p_drop)
    run = _hidden_run(model, pool, xpool)
    nn.Module.train(model, True)
    dropouts = [m for _, m in _named_modules(model) if isinstance(m, nn.Dropout)]
    seen = []

    def hook(module, args, out):
        seen.append({
            "grad_enabled": torch.is_grad_enabled(),
            "inference_mode": torch.is_inference_mode_enabled(),
            "training": module.training,
            "dropout_training": any(d.training for d in dropouts),
        })

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


# ----------------------------------------------------------------------------- counting


def _layer(spec):
    kind = spec[0]
    if kind == "linear":
        return nn.Linear(spec[1], spec[2], bias=spec[3])
    if kind == "bn":
        return nn.BatchNorm1d(spec[1])
    if kind == "relu":
        return nn.ReLU()
    if kind == "dropout":
        return nn.Dropout(0.1)
    if kind == "seq":
        return nn.Sequential(*[_layer(s) for s in spec[1]])
    if kind == "dict":
        return nn.ModuleDict(OrderedDict((name, _layer(s)) for name, s in spec[1]))
    raise ValueError(f"unknown layer spec {spec!r}")


def _build_counting_model(spec):
    """A model described by plain data (the grading process builds the very same one)."""
    root = nn.Module()
    for name, layer in spec.get("modules", []):
        root.add_module(name, _layer(layer))
    if spec.get("tie"):
        vocab, dim = spec["tie"]
        root.emb = nn.Embedding(vocab, dim)
        root.out = nn.Linear(dim, vocab)
        root.out.weight = root.emb.weight  # tied: one Parameter, two modules
    if spec.get("root_param"):
        root.scale = nn.Parameter(torch.ones(spec["root_param"]))
    for i, size in enumerate(spec.get("buffers", [])):
        root.register_buffer(f"stat{i}", torch.zeros(size))
    for name, p in root.named_parameters():
        if any(name == f or name.startswith(f + ".") for f in spec.get("frozen", [])):
            p.requires_grad_(False)
    return root


def counting_stack(mod, cases):
    """count_linear_stack on each [sizes, bias] or [sizes, bias, "tuple"] (sizes passed as a tuple);
    bias None: the default (not passed); exceptions are observations here."""
    out = []
    for case in cases:
        sizes, bias = case[0], case[1]
        sizes = tuple(sizes) if case[2:] == ["tuple"] else list(sizes)
        try:
            if bias is None:
                value = mod.count_linear_stack(sizes)
            else:
                value = mod.count_linear_stack(sizes, bias=bias)
        except Exception as exc:
            out.append({"raised": exception(exc), "type": None, "value": None})
            continue
        out.append({"raised": None, **scalar(value)})
    return out


def counting_model(mod, spec):
    model = _build_counting_model(spec)
    total = mod.count_parameters(model)
    trainable = mod.count_parameters(model, trainable_only=True)
    explicit = mod.count_parameters(model, trainable_only=False)
    return {"total": scalar(total), "trainable": scalar(trainable), "explicit": scalar(explicit)}


def counting_per_layer(mod, spec):
    model = _build_counting_model(spec)
    result = mod.per_layer(model)
    obs: dict[str, Any] = {"type": type_name(result), "items": None, "bad": []}
    if type(result) in (dict, OrderedDict):
        items = []
        for key, value in result.items():
            if type(key) is str and type(value) is int:
                items.append([key, value])
            else:
                obs["bad"].append(f"{type_name(key)} -> {type_name(value)}")
        obs["items"] = items
    return obs


# ----------------------------------------------------------------------------- containers


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
    return {"layers_type": type_name(layers), **_module_obs(model), "run": _hidden_run(model, pool, xpool)}


def containers_twohead(mod, x, pool=None, xpool=None):
    model = mod.TwoHead()
    heads_attr = getattr(model, "heads", None)
    with torch.no_grad():
        out = model(as_tensor(x))
    obs = {"heads_type": type_name(heads_attr), "out_type": type_name(out), "out": None, **_module_obs(model)}
    if type(out) in (dict, OrderedDict):
        obs["out"] = {str(k): tensor(v) for k, v in out.items()}
    return {**obs, "run": _hidden_run(model, pool, xpool)}


def containers_double(mod, fixed_sizes, x_fixed, x_two, more_sizes=(), runs=None):
    """After .double(): the dtype of every nn.Linear's weight (registered or not) and of the outputs;
    also for FixedMLP of `more_sizes` (other depths), reported as "FixedMLP([...])". With `runs`
    (float64 hidden pools for FixedMLP and TwoHead), the hidden run on those converted models too."""
    report = {}
    cases = [("FixedMLP", mod.FixedMLP(list(fixed_sizes)), x_fixed), ("TwoHead", mod.TwoHead(), x_two)]
    cases += [(f"FixedMLP({list(sizes)})", mod.FixedMLP(list(sizes)), np.ones((2, sizes[0]), np.float32))
              for sizes in more_sizes]
    for k, (name, model, x) in enumerate(cases):
        model = model.double()
        linears = _all_linears(model)
        with torch.no_grad():
            out = model(as_tensor(x).double())
        outs = out.values() if type(out) in (dict, OrderedDict) else list(out) if type(out) in (
            tuple, list) else [out]
        report[name] = {
            "linear_dtypes": [str(m.weight.dtype).replace("torch.", "") for m in linears],
            "out_dtypes": [str(o.dtype).replace("torch.", "") if type(o) is torch.Tensor else type_name(o)
                           for o in outs],
        }
        if runs is not None and k < len(runs):
            report[name]["run"] = _hidden_run(model, runs[k]["pool"], runs[k]["xpool"])
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


# ----------------------------------------------------------------------------- checkpoint


def _ckpt_model(head: str = "head", width: int = 2, in_features: int = 3, hidden: int = 5):
    """A grader-owned model built from torch classes only (so torch.save(model) can pickle it)."""
    return nn.Sequential(OrderedDict([
        ("body", nn.Linear(in_features, hidden)),
        ("norm", nn.BatchNorm1d(hidden)),
        ("act", nn.ReLU()),
        (head, nn.Linear(hidden, width)),
    ]))


def _ckpt_loaded(state, **kwargs):
    model = _ckpt_model(**kwargs)
    model.load_state_dict(_state(state))
    return model.eval()


def checkpoint_save(mod, state):
    model = _ckpt_loaded(state)
    path = os.path.join(tempfile.mkdtemp(prefix="ckpt_"), "weights.pt")
    mod.save_weights(model, path)
    obs: dict[str, Any] = {"exists": os.path.exists(path), "error": None, "saved_type": None}
    if not obs["exists"]:
        return obs
    try:
        saved = torch.load(path, weights_only=True)
    except Exception as exc:
        obs["error"] = exception(exc)
        try:  # what was saved? (the file is the student's own; this worker already runs their code)
            obs["saved_type"] = type_name(torch.load(path, weights_only=False))
        except Exception:
            obs["saved_type"] = None
        return obs
    obs["saved_type"] = type_name(saved)
    if type(saved) in (dict, OrderedDict):
        obs["keys"] = [k if type(k) is str else type_name(k) for k in saved]
        obs["values"] = {k: tensor(v) for k, v in saved.items() if type(k) is str}
    return obs


def _round_trip(mod, state, x, path_type):
    source = _ckpt_loaded(state)
    path: Any = os.path.join(tempfile.mkdtemp(prefix="ckpt_"), "weights.pt")
    if path_type == "pathlib":
        path = pathlib.Path(path)
    mod.save_weights(source, path)
    try:  # what save_weights wrote must open safely, whatever kind of path it was given
        saved_type, saved_error = type_name(torch.load(path, weights_only=True)), None
    except Exception as exc:
        saved_type, saved_error = None, exception(exc)
    torch.manual_seed(12345)
    target = _ckpt_model()  # fresh random weights, default buffers
    returned = mod.load_weights(target, path)
    target.eval()
    with torch.no_grad():
        want = source(as_tensor(x))
        got = target(as_tensor(x))
    return {
        "saved_type": saved_type,
        "saved_error": saved_error,
        "returned_model": returned is target,
        "returned_type": type_name(returned),
        "want": tensor(want),
        "got": tensor(got),
        "state": {k: tensor(v) for k, v in target.state_dict().items()},
    }


def checkpoint_round_trip(mod, state, x, path_types=("str",)):
    """save_weights then load_weights, once per kind of path (str, pathlib.Path): the first kind's
    exceptions propagate as before, the others' are reported under their kind."""
    first, *others = path_types
    obs = _round_trip(mod, state, x, first)
    obs["others"] = {}
    for path_type in others:
        try:
            obs["others"][path_type] = {"raised": None, **_round_trip(mod, state, x, path_type)}
        except Exception as exc:
            obs["others"][path_type] = {"raised": exception(exc)}
    return obs


def _call_load(fn, model, path, marker=None):
    try:
        fn(model, path)
        raised = None
    except Exception as exc:
        raised = exception(exc)
    return {"raised": raised, "marker": None if marker is None else os.path.exists(marker)}


def _good_load(fn, good):
    """`fn` (load_weights or load_partial) on a file of the grader's `good` weights that fits the
    model exactly: what the model holds afterwards (a loader that refuses everything shows here)."""
    path = os.path.join(tempfile.mkdtemp(prefix="ckpt_"), "weights.pt")
    torch.save(OrderedDict(_state(good)), path)  # a state_dict's tensors, without building a model
    torch.manual_seed(24680)
    model = _ckpt_model()  # fresh random weights, default buffers: nothing of `good` until loaded
    try:
        fn(model, path)
    except Exception as exc:
        return {"raised": exception(exc), "state": None}
    return {"raised": None, "state": {k: tensor(v) for k, v in _state_dict(model).items()}}


def checkpoint_mismatch(mod, state, kind, renamed, wide_out, good=None):
    """load_weights on a model whose keys (renamed head) or shapes (wider head) differ; then, with
    `good` weights, on a file that fits."""
    path = os.path.join(tempfile.mkdtemp(prefix="ckpt_"), "weights.pt")
    torch.save(_ckpt_loaded(state).state_dict(), path)
    model = _ckpt_model(head=renamed) if kind == "renamed" else _ckpt_model(width=wide_out)
    obs = _call_load(mod.load_weights, model, path)
    if good is not None:
        obs["good"] = _good_load(mod.load_weights, good)
    return obs


class _Payload:
    """Unpickling this calls os.mkdir(marker): proof that a loader ran code from a file."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


def checkpoint_refuse(mod, state, kind, loader, good=None):
    """load_weights/load_partial on a whole pickled module, or on a state_dict carrying a payload;
    then, with `good` weights, the same loader on a file that fits."""
    folder = tempfile.mkdtemp(prefix="ckpt_")
    path = os.path.join(folder, "weights.pt")
    marker = os.path.join(folder, "payload_ran")
    source = _ckpt_loaded(state)
    if kind == "whole":
        torch.save(source, path)
    else:
        evil = OrderedDict(source.state_dict())
        evil["payload"] = _Payload(marker)
        torch.save(evil, path)
    fn = mod.load_partial if loader == "load_partial" else mod.load_weights
    obs = _call_load(fn, _ckpt_model(), path, marker)
    if good is not None:
        obs["good"] = _good_load(fn, good)
    return obs


def _partial(mod, state, renamed, path_type):
    path: Any = os.path.join(tempfile.mkdtemp(prefix="ckpt_"), "weights.pt")
    torch.save(_ckpt_loaded(state).state_dict(), path)
    if path_type == "pathlib":
        path = pathlib.Path(path)
    torch.manual_seed(54321)
    model = _ckpt_model(head=renamed)
    before = {k: tensor(v) for k, v in model.state_dict().items()}
    result = mod.load_partial(model, path)
    obs: dict[str, Any] = {"type": type_name(result), "parts": None, "before": before}
    obs["after"] = {k: tensor(v) for k, v in model.state_dict().items()}
    accepted = (tuple, list, torch.nn.modules.module._IncompatibleKeys)
    if type(result) in accepted and len(result) == 2:
        parts = []
        for part in result:
            if type(part) in (list, tuple):
                items = [k if type(k) is str else None for k in part]
                parts.append({"type": type_name(part), "items": items})
            else:
                parts.append({"type": type_name(part), "items": None})
        obs["parts"] = parts
    return obs


def checkpoint_partial(mod, state, renamed, path_types=("str",)):
    """load_partial into a model with a renamed head, once per kind of path (as checkpoint_round_trip)."""
    first, *others = path_types
    obs = _partial(mod, state, renamed, first)
    obs["others"] = {}
    for path_type in others:
        try:
            obs["others"][path_type] = {"raised": None, **_partial(mod, state, renamed, path_type)}
        except Exception as exc:
            obs["others"][path_type] = {"raised": exception(exc)}
    return obs


# ----------------------------------------------------------------------------- dropout


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def dropout_construct(mod, ps):
    out = []
    for p in ps:
        try:
            mod.Dropout(p, _rng(0))
            out.append(None)
        except Exception as exc:
            out.append(exception(exc))
    return out


def _changed(original: np.ndarray, passed: Any) -> int:
    """How many values of the array handed to the student differ from a copy kept before the call."""
    if type(passed) is not np.ndarray or passed.shape != original.shape:
        return int(original.size)
    return int(np.sum(~((passed == original) | (np.isnan(passed) & np.isnan(original)))))


def dropout_modes(mod, p, h, seed):
    """The identity paths: eval (p, and p == 1) and p == 0 in train mode; each call gets its own copy
    of h, and `h_changed` counts the values each call changed in place."""
    drop = mod.Dropout(p, _rng(seed))
    obs: dict[str, Any] = {"initial": _scalar_bool(getattr(drop, "training", None))}
    returned = drop.eval()
    obs["eval_returns_self"] = returned is drop
    obs["after_eval"] = _scalar_bool(getattr(drop, "training", None))
    changed: dict[str, int] = {}
    h_eval = np.array(h, copy=True)
    obs["eval_out"] = array(drop(h_eval))
    changed["eval"] = _changed(h, h_eval)
    returned = drop.train()
    obs["train_returns_self"] = returned is drop
    obs["after_train"] = _scalar_bool(getattr(drop, "training", None))
    h_train = np.array(h, copy=True)  # train mode again, after eval(): dropout is back on
    obs["train_again_out"] = array(drop(h_train))
    changed["train_again"] = _changed(h, h_train)
    obs["train_again_second"] = array(drop(np.array(h, copy=True)))  # and a fresh mask per call
    zero = mod.Dropout(0.0, _rng(seed))
    h_zero = np.array(h, copy=True)
    obs["p0_out"] = array(zero(h_zero))
    changed["p0"] = _changed(h, h_zero)
    try:  # Dropout(1.0) refused: graded by the ValueError check, not here
        one = mod.Dropout(1.0, _rng(seed))
    except Exception as exc:
        obs["eval_p1_out"], obs["p1_refused"] = None, exception(exc)
    else:
        one.eval()
        h_one = np.array(h, copy=True)
        obs["eval_p1_out"], obs["p1_refused"] = array(one(h_one)), None
        changed["eval_p1"] = _changed(h, h_one)
    obs["h_changed"] = changed
    return obs


def dropout_shapes(mod, p, hs, seed):
    """Train-mode layers on inputs of other ranks (1-D, 3-D). Per h: two calls of one layer (global
    seeds 1), a layer with the same rng seed under other global seeds (2) and one with the next rng
    seed; the values the first call changed in h in place, or the error."""
    out = []
    for h in hs:
        passed = np.array(h, copy=True)
        try:
            _reseed_globals(1)
            layer = mod.Dropout(p, _rng(seed))
            first = layer(passed)
            second = layer(np.array(h, copy=True))
            _reseed_globals(2)
            same = mod.Dropout(p, _rng(seed))(np.array(h, copy=True))
            other = mod.Dropout(p, _rng(seed + 1))(np.array(h, copy=True))
        except Exception as exc:
            out.append({"raised": exception(exc), "outs": [], "h_changed": 0})
            continue
        outs = [array(result) for result in (first, second, same, other)]
        out.append({"raised": None, "outs": outs, "h_changed": _changed(h, passed)})
    return out


def _scalar_bool(value: Any) -> dict[str, Any]:
    return {"type": type_name(value), "value": value if type(value) is bool else None}


def dropout_sample(mod, p, h, seed, calls):
    """`calls` training-mode calls on the same h; h is returned too, to see if it was modified."""
    drop = mod.Dropout(p, _rng(seed))
    outs = [array(drop(h)) for _ in range(calls)]
    return {"outs": outs, "h_after": h}


def dropout_rng(mod, p, h, seed):
    """Same rng seed under different global seeds, and a different rng seed under the same one."""
    runs = []
    for global_seed, rng_seed in ((1, seed), (2, seed), (2, seed + 1)):
        _reseed_globals(global_seed)
        runs.append(array(mod.Dropout(p, _rng(rng_seed))(np.array(h, copy=True))))
    return runs


# ----------------------------------------------------------------------------- numpy_forward


def numpy_linear(mod, x, W, b):
    return array(mod.linear(x, W, b))


def numpy_delivery_cases(mod, cases):
    """delivery_forward on each [state, x] in one call; a case that raises is reported, not fatal."""
    out = []
    for state, x in cases:
        try:
            out.append({"raised": None, "out": array(mod.delivery_forward(dict(state), x))})
        except Exception as exc:
            out.append({"raised": exception(exc), "out": None})
    return out
