"""Hidden challenges of the checks: what they draw, and what the student's own model must give."""

# One mistake, one charge: a check judges its own property on the student's own model, and the points
# still rest on values computed from inputs nobody can know in advance.
# - A structural check (names, keys, shapes, counts, dtypes) has the probe fill every tensor the model
#   registers from a hidden pool (in state_dict order, through the model's own keys) and run each
#   registered nn.Linear alone on hidden inputs: each output must be x @ W.T + b of the very values
#   that went into that layer (`judge_layers`). That needs the layer's computation, and nothing else:
#   a slip in forward, in another layer or in a name other checks judge never shows here.
# - A forward check puts the contract's (or hidden) weights into the model's layers, by name or, when
#   the names are not the contract's, by weight shape (`probes._load_layers`), reads back what each
#   layer holds and compares forward with the contract's formula on exactly those weights: a missing
#   bias or a renamed layer is the structural checks' business, the formula is this one's.

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

import numpy as np

from autograder.graders import close, describe, fail, fmt_shape

from .support import call_once, fail_if_not_implemented, raised_name, relu

once_per_task = call_once  # a probe call shared by the checks that judge one run (autograder.probe_calls)


# ----------------------------------------------------------------------------- drawing hidden values


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


# ----------------------------------------------------------------------------- judging a hidden run
# (pools, filled, judge_layers, read_back: the engine's structure builder, autograder.graders)


def layer_state(load: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """What the model's layers held after `probes._load_layers`: prefix.weight / prefix.bias (a layer
    without a bias has none), in float64."""
    state: dict[str, np.ndarray] = {}
    for prefix, held in load["held"].items():
        for part in ("weight", "bias"):
            got = held.get(part)
            if type(got) is dict and got.get("values") is not None:
                state[f"{prefix}.{part}"] = got["values"].astype(np.float64)
    return state


def judge_loaded(load: Mapping[str, Any], sent: Mapping[str, np.ndarray], key: str, **params: Any) -> dict:
    """Fail (message `key`, with `detail`) unless every role got a layer and each layer holds what was
    sent to it; return the weights held (a bias the layer does not have is left out)."""
    if load["error"]:
        fail(key, detail=raised_name(load["error"]), **params)
    if load["missing"]:
        fail(key, detail=f"nn.Linear: {', '.join(load['missing'])} == None", **params)
    held = layer_state(load)
    for name, value in held.items():
        want = sent.get(name)
        if want is not None and (value.shape != want.shape or not close(value, want.astype(np.float64), 0.0)):
            fail(key, detail=f"{name} != state[{name!r}]", **params)
    return held


# ----------------------------------------------------------------------------- the contract's formulas


def _linear(state: Mapping[str, np.ndarray], prefix: str, h: np.ndarray) -> np.ndarray:
    out = h @ state[f"{prefix}.weight"].astype(np.float64).T
    bias = state.get(f"{prefix}.bias")
    return out if bias is None else out + bias.astype(np.float64)


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
    """head(hidden((x - x_mean) / x_std)) in eval mode, shape (N,); also unstandardized."""
    mean, std = state["x_mean"].astype(np.float64), state["x_std"].astype(np.float64)
    x64 = x.astype(np.float64)
    return {name: mlp_outputs(state, prefixes, z)["right"][:, 0]
            for name, z in (("right", (x64 - mean) / std), ("no_standardization", x64))}


def fixedmlp_layers(sizes: Sequence[int]) -> list[tuple[str, int, int]]:
    return [(f"layers.{i}", a, b) for i, (a, b) in enumerate(pairwise(sizes))]


def twohead_layers(in_features: int, body: int,
                   heads: Sequence[tuple[str, int]]) -> list[tuple[str, int, int]]:
    return [("body.0", in_features, body)] + [(f"heads.{name}", body, width) for name, width in heads]


def twohead_outputs(state: Mapping[str, np.ndarray], heads: Sequence[tuple[str, int]],
                    x: np.ndarray) -> dict[str, np.ndarray]:
    """Each head on relu(body.0(x)), by head name."""
    features = relu(_linear(state, "body.0", x.astype(np.float64)))
    return {name: _linear(state, f"heads.{name}", features) for name, _ in heads}


# ----------------------------------------------------------------------------- judging model outputs


def judge_output(obs: Mapping[str, Any], wants: Sequence[Mapping[str, np.ndarray]], tol: float,
                 call_text: str, model: str, key: str = "common.challenge_values") -> None:
    """Fail unless each of a run's outputs (`obs["outs"]`) is one of the matching `wants` (compared as
    flat values: the output's shape is other checks' business)."""
    if obs["raised"]:
        fail_if_not_implemented(obs["raised"], call_text)
        fail("common.challenge_raised", call=call_text, raised=raised_name(obs["raised"]))
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

