"""Probes of task `dropout` (inside the sandboxed worker); helpers shared by tasks are in _shared.py."""

# Self-contained: stdlib, numpy, torch and the engine's probe API (autograder.sandbox.inside.observe,
# whose describers make the observations). A probe never judges: it runs the student's code on
# inputs the check sent and reports what it saw, with the exact type name of everything the
# student returned, so that the check (in the grading process) decides. Helpers and classes start
# with "_" so they are not probes.

from __future__ import annotations

import random
from typing import Any

import numpy as np
import torch

from autograder.sandbox.inside.observe import array, exception, type_name


def _reseed_globals(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


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
