"""Probes of task `checkpoint` (inside the sandboxed worker); helpers shared by tasks are in _shared.py."""

# Self-contained: stdlib, numpy, torch and the engine's probe API (autograder.sandbox.inside.observe,
# whose describers make the observations). A probe never judges: it runs the student's code on
# inputs the check sent and reports what it saw, with the exact type name of everything the
# student returned, so that the check (in the grading process) decides. Helpers and classes start
# with "_" so they are not probes.

from __future__ import annotations

import os
import pathlib
import tempfile
from collections import OrderedDict
from typing import Any

import torch
from torch import nn

from autograder.sandbox.inside.observe import as_tensor, exception, tensor, type_name

# From _shared.py, run first in the same namespace: _state, _state_dict.


def _ckpt_model(head: str = "head", width: int = 2, in_features: int = 3, hidden: int = 5):
    """A grader-owned model built from torch classes only (so torch.save(model) can pickle it)."""
    return nn.Sequential(
        OrderedDict(
            [
                ("body", nn.Linear(in_features, hidden)),
                ("norm", nn.BatchNorm1d(hidden)),
                ("act", nn.ReLU()),
                (head, nn.Linear(hidden, width)),
            ]
        )
    )


def _ckpt_loaded(state, **kwargs):
    model = _ckpt_model(**kwargs)
    model.load_state_dict(_state(state))
    return model.eval()


def _save(mod, state, path_type):
    model = _ckpt_loaded(state)
    path: Any = os.path.join(tempfile.mkdtemp(prefix="ckpt_"), "weights.pt")
    if path_type == "pathlib":
        path = pathlib.Path(path)
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


def checkpoint_save(mod, state, path_types=("str",)):
    """save_weights, once per kind of path (str, pathlib.Path), and what the file holds, opened with
    weights_only=True: the first kind's exceptions propagate, the others' are reported under their kind."""
    first, *others = path_types
    obs = _save(mod, state, first)
    obs["others"] = {}
    for path_type in others:
        try:
            obs["others"][path_type] = {"raised": None, **_save(mod, state, path_type)}
        except Exception as exc:
            obs["others"][path_type] = {"raised": exception(exc)}
    return obs


def _round_trip(mod, state, x, path_type):
    """load_weights on a file the grader saved (a state_dict of `state`): whether the student's save
    writes one is save_is_state_dict's business, so a save slip is not charged here too."""
    source = _ckpt_loaded(state)
    path: Any = os.path.join(tempfile.mkdtemp(prefix="ckpt_"), "weights.pt")
    torch.save(source.state_dict(), path)
    if path_type == "pathlib":
        path = pathlib.Path(path)
    torch.manual_seed(12345)
    target = _ckpt_model()  # fresh random weights, default buffers
    returned = mod.load_weights(target, path)
    target.eval()
    with torch.no_grad():
        want = source(as_tensor(x))
        got = target(as_tensor(x))
    return {
        "returned_model": returned is target,
        "returned_type": type_name(returned),
        "want": tensor(want),
        "got": tensor(got),
        "state": {k: tensor(v) for k, v in target.state_dict().items()},
    }


def checkpoint_round_trip(mod, state, x, path_types=("str",)):
    """load_weights of a saved state_dict, once per kind of path (str, pathlib.Path): the first kind's
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


def _fits(fn, state):
    """`fn` (load_weights or load_partial) on a file of the grader's `state` that fits the model
    exactly: whether it raised (what the model then holds is round_trip's business)."""
    path = os.path.join(tempfile.mkdtemp(prefix="ckpt_"), "weights.pt")
    torch.save(OrderedDict(_state(state)), path)  # a state_dict's tensors, without building a model
    return _call_load(fn, _ckpt_model(), path)


def checkpoint_mismatch(mod, state, kind, renamed, wide_out):
    """load_weights on a model whose keys (renamed head) or shapes (wider head) differ."""
    path = os.path.join(tempfile.mkdtemp(prefix="ckpt_"), "weights.pt")
    torch.save(_ckpt_loaded(state).state_dict(), path)
    model = _ckpt_model(head=renamed) if kind == "renamed" else _ckpt_model(width=wide_out)
    return _call_load(mod.load_weights, model, path)


def checkpoint_widths(mod, state, widths):
    """load_weights of one file (a head of the grader model's width) into a model of each head width
    of `widths`, in the check's order: what each call raised."""
    path = os.path.join(tempfile.mkdtemp(prefix="ckpt_"), "weights.pt")
    torch.save(_ckpt_loaded(state).state_dict(), path)
    return [_call_load(mod.load_weights, _ckpt_model(width=width), path)["raised"] for width in widths]


class _Payload:
    """Unpickling this calls os.mkdir(marker): proof that a loader ran code from a file."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


def _unsafe(fn, state, kind):
    """`fn` on a whole pickled module ("whole") or a state_dict carrying a payload ("malicious")."""
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
    return _call_load(fn, _ckpt_model(), path, marker)


def checkpoint_refuse(mod, state, loader, kinds):
    """load_weights or load_partial on one file per entry of `kinds`, in the check's order: "whole",
    "malicious" (see _unsafe) or "fits" (a state_dict that fits); what each call raised, and whether
    a payload ran."""
    fn = mod.load_partial if loader == "load_partial" else mod.load_weights
    return [_fits(fn, state) if kind == "fits" else _unsafe(fn, state, kind) for kind in kinds]


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
