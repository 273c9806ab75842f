"""Hidden-weight challenges of the structural checks: what they draw, what a real model gives."""

# A structural check (names, keys, shapes, counts, dtypes) also loads weights drawn from its
# `challenge` through the names the model registers, runs the model on inputs drawn the same way
# and compares the output here with what a model built of the contract's layers gives. Forging the
# structure is then worthless: the answer needs the model's computation. Where the ReLU sits (or
# whether the inputs are standardized) is other checks' business: an output matching a model of the
# contract's layers with a known wrong activation also shows that the registered layers are the ones
# forward uses, so a forward mistake is not charged twice.

from __future__ import annotations

import copy
import hashlib
import weakref
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

import numpy as np

from autograder.checks import fail
from autograder.compare import close, describe, fmt_shape

from .support import call, fail_if_not_implemented, load_problem, raised_name, relu

_ANSWERS: weakref.WeakKeyDictionary[Any, dict[Any, Any]] = weakref.WeakKeyDictionary()


def once_per_task(worker: Any, probe: str, what: str, hints: Mapping[str, str] | None = None,
                  **inputs: Any) -> dict:
    """`call(worker, probe, ...)` once per task session for the very same inputs: the checks of a task
    that ask the same question with the same (shared) hidden inputs get a copy of one answer instead
    of each paying for a run. (An exam's second judging, with another variant's numbers, asks anew.)"""
    answers = _ANSWERS.setdefault(worker, {})
    key = hashlib.sha256(repr((probe, _plain(inputs))).encode()).hexdigest()
    if key not in answers:  # a failure is not kept: the next check asks again, and fails the same way
        answers[key] = call(worker, probe, what, hints, **inputs)
    return copy.deepcopy(answers[key])


def _plain(value: Any) -> Any:
    """`value` with every array spelled out in full (repr would abbreviate a large one)."""
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), _plain(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_plain(v) for v in value)
    return value


def linear_state(gen: np.random.Generator, layers: Sequence[tuple[str, int, int]],
                 scale: float = 1.5) -> dict[str, np.ndarray]:
    """Weights for Linear layers `prefix: (in, out)`, drawn from `gen` (float32, roughly nn.Linear's size,
    wider so that some pre-activations are negative and the activation shows)."""
    state: dict[str, np.ndarray] = {}
    for prefix, fan_in, fan_out in layers:
        bound = scale / np.sqrt(fan_in)
        state[f"{prefix}.weight"] = gen.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32)
        state[f"{prefix}.bias"] = gen.uniform(-bound, bound, (fan_out,)).astype(np.float32)
    return state


def inputs(gen: np.random.Generator, n: int, features: int, scale: float = 1.5) -> np.ndarray:
    return gen.normal(0, scale, (n, features)).astype(np.float32)


def finer(gen: np.random.Generator, arrays: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The arrays in float64 with digits float32 does not have: only a model really converted to
    float64 (.double()) reproduces them to float64 precision."""
    return {k: v.astype(np.float64) + gen.normal(0, 1e-9, v.shape) for k, v in arrays.items()}


def _linear(state: Mapping[str, np.ndarray], prefix: str, h: np.ndarray) -> np.ndarray:
    return h @ state[f"{prefix}.weight"].astype(np.float64).T + state[f"{prefix}.bias"].astype(np.float64)


def _sigmoid(a: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-a))


def tinynet_outputs(state: Mapping[str, np.ndarray], x: np.ndarray) -> dict[str, np.ndarray]:
    """fc2(relu(fc1(x))), and the same two layers with another activation (or none)."""
    pre = _linear(state, "fc1", x.astype(np.float64))
    right = _linear(state, "fc2", relu(pre))
    return {"right": right, "no_relu": _linear(state, "fc2", pre), "relu_after": relu(right),
            "sigmoid": _linear(state, "fc2", _sigmoid(pre))}


def mlp_outputs(state: Mapping[str, np.ndarray], prefixes: Sequence[str],
                x: np.ndarray) -> dict[str, np.ndarray]:
    """Linear layers `prefixes` with a ReLU between them, none after the last; and the usual slips:
    a ReLU after the last too, none between the last two, a sigmoid instead of the ReLU."""
    def run(act: Any, last_act: bool = False, skip_last_gap: bool = False) -> np.ndarray:
        h = x.astype(np.float64)
        last = len(prefixes) - 1
        for i, prefix in enumerate(prefixes):
            h = _linear(state, prefix, h)
            if (i < last and not (skip_last_gap and i == last - 1)) or (last_act and i == last):
                h = act(h)
        return h

    return {"right": run(relu), "relu_after_last": run(relu, last_act=True),
            "relu_off_by_one": run(relu, skip_last_gap=True), "sigmoid_between": run(_sigmoid)}


def delivery_outputs(state: Mapping[str, np.ndarray], prefixes: Sequence[str],
                     x: np.ndarray) -> dict[str, np.ndarray]:
    """head(hidden((x - x_mean) / x_std)) in eval mode; also unstandardized, and `x - x_mean / x_std`."""
    mean, std = state["x_mean"].astype(np.float64), state["x_std"].astype(np.float64)
    x64 = x.astype(np.float64)
    found: dict[str, np.ndarray] = {}
    for name, z in (("right", (x64 - mean) / std), ("no_standardization", x64),
                    ("precedence", x64 - mean / std)):
        found[name] = mlp_outputs(state, prefixes, z)["right"]
    return found


def fixedmlp_layers(sizes: Sequence[int]) -> list[tuple[str, int, int]]:
    return [(f"layers.{i}", a, b) for i, (a, b) in enumerate(pairwise(sizes))]


def twohead_layers(in_features: int, body: int,
                   heads: Sequence[tuple[str, int]]) -> list[tuple[str, int, int]]:
    return [("body.0", in_features, body)] + [(f"heads.{name}", body, width) for name, width in heads]


def twohead_outputs(state: Mapping[str, np.ndarray], heads: Sequence[tuple[str, int]],
                    x: np.ndarray) -> list[dict[str, np.ndarray]]:
    """Each head on relu(body.0(x)), in the order of `heads`."""
    features = relu(_linear(state, "body.0", x.astype(np.float64)))
    return [{"right": _linear(state, f"heads.{name}", features)} for name, _ in heads]


def judge_output(obs: Mapping[str, Any], wants: Sequence[Mapping[str, np.ndarray]], tol: float,
                 call_text: str, model: str, names: Sequence[str], kept: Sequence[str] = (),
                 key: str = "common.challenge_values") -> None:
    """Fail unless the challenge's run loaded every weight (`names`) and each of its outputs
    (`obs["outs"]`) is one of the matching `wants` (compared as flat values: the output's shape is
    other checks' business). `kept`: keys the challenge did not send (the model keeps its own)."""
    load = {**obs["load"], "missing": [k for k in obs["load"]["missing"] if k not in kept]}
    detail = load_problem(load)
    if detail:
        fail("common.challenge_load", detail=detail, names=", ".join(names))
    if obs["raised"]:
        fail_if_not_implemented(obs["raised"], call_text)
        fail("common.challenge_raised", call=call_text, raised=raised_name(obs["raised"]))
    if len(obs["outs"]) != len(wants):
        fail("common.wrong_type", call=call_text, got_type=f"{len(obs['outs'])} outputs",
             want_type=f"{len(wants)} outputs")
    for out, want in zip(obs["outs"], wants, strict=True):
        if type(out) is not dict or out.get("values") is None:
            got_type = out.get("type") if type(out) is dict else type(out).__name__
            fail("common.wrong_type", call=call_text, got_type=got_type, want_type="Tensor")
        got = out["values"].astype(np.float64).ravel()
        if any(v.size == got.size and close(got, v.ravel(), tol) for v in want.values()):
            continue
        right = want["right"].ravel()
        error = describe(got, right) if got.size == right.size else (
            f"{got.size} values (shape {fmt_shape(out.get('shape', ()))}) where {right.size} were expected")
        fail(key, call=call_text, error=error, model=model)
