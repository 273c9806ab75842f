"""Hidden checks of task containers: outputs equal the reference's with the same weights."""

from __future__ import annotations

import functools
from itertools import pairwise

import numpy as np

from autograder.graders import close, describe, fail, fmt_shape, points, require_array

from ..challenges import fixedmlp_layers, judge_loaded, mlp_outputs, twohead_layers, twohead_outputs
from ..support import call, mlp_state, rng


@functools.lru_cache(maxsize=8)
def _fixed_case(P, k: int) -> tuple[tuple[int, ...], dict[str, np.ndarray], np.ndarray]:
    sizes = P.forward_sizes[k]
    layers = [(f"layers.{i}", a, b) for i, (a, b) in enumerate(pairwise(sizes))]
    state = mlp_state(P.state_seed + k, layers, scale=2.0)  # larger weights: some outputs negative
    x = rng(P.state_seed + 50 + k).normal(0, 2.0, (P.batch, sizes[0])).astype(np.float32)
    return sizes, state, x


@points(3)
def test_fixedmlp_matches_reference(worker, params):
    """With the same weights, FixedMLP equals the reference (ReLU between layers, none after the last)

    The weights go into layers.i (or, when the layers are kept otherwise, into the nn.Linear layers
    of those shapes), and forward is compared with the contract's on what those layers hold."""
    P = params.containers
    tol = params.tol.float32
    for k in range(len(P.forward_sizes)):
        sizes, state, x = _fixed_case(P, k)
        what = f"FixedMLP({list(sizes)})(x)"
        layers = fixedmlp_layers(sizes)
        obs = call(worker, "containers_fixedmlp_forward", what, sizes=list(sizes), state=state, x=x,
                   layers=[list(layer) for layer in layers])
        held = judge_loaded(obs["load"], state, "containers.forward_load", model=f"FixedMLP({list(sizes)})",
                            head_keys=P.head_keys_text)
        got = require_array(obs["out"], what, (P.batch, sizes[-1]))
        want = mlp_outputs(held, [p for p, _, _ in layers], x)
        if close(got, want["right"], tol):
            continue
        if len(layers) > 1 and close(got, want["relu_after_last"], tol):
            fail("containers.relu_after_last", call=what)
        fail("containers.forward_values", call=what, error=describe(got, want["right"]))


@functools.lru_cache(maxsize=8)
def _twohead_case(P) -> tuple[dict[str, np.ndarray], np.ndarray]:
    layers = [("body.0", P.in_features, P.body)] + [
        (f"heads.{n}", P.body, w) for n, w in zip(P.head_names, P.head_widths, strict=True)
    ]
    state = mlp_state(P.state_seed + 99, layers, scale=2.0)
    x = rng(P.state_seed + 98).normal(0, 2.0, (P.batch, P.in_features)).astype(np.float32)
    return state, x


@points(2)
def test_twohead_matches_reference(worker, params):
    """With the same weights, TwoHead's {p.containers.head_names_text} outputs equal the reference's

    forward returns a dict of the heads' outputs, {p.containers.outputs_text}, each head on body(x)."""
    P = params.containers
    state, x = _twohead_case(P)
    layers = twohead_layers(P.in_features, P.body, P.heads)
    obs = call(worker, "containers_twohead_forward", "TwoHead()(x)", state=state, x=x,
               layers=[list(layer) for layer in layers])
    held = judge_loaded(obs["load"], state, "containers.forward_load", model="TwoHead()",
                        head_keys=P.head_keys_text)
    if obs["out"] is None:
        fail("containers.twohead_out_type", got_type=obs["out_type"], outputs=P.outputs_text)
    want = twohead_outputs(held, P.heads, x)
    for name, width in zip(P.head_names, P.head_widths, strict=True):
        if name not in obs["out"]:
            fail("containers.twohead_out_keys", keys=sorted(obs["out"]), want=sorted(P.head_names),
                 names=", ".join(P.head_names))
        what = f'TwoHead()(x)["{name}"]'
        got = require_array(obs["out"][name], what, (P.batch, width),
                            keys={"shape": "containers.head_shape_values"})
        if not close(got, want[name], params.tol.float32):
            fail("containers.twohead_values", call=what, error=describe(got, want[name]),
                 shape=fmt_shape((P.batch, width)))


def observe_variant(worker, params) -> dict:
    """The exam knob this submission's TwoHead implements: its heads, name -> output width."""
    P = params.containers
    x = np.linspace(-1, 1, P.batch * P.in_features, dtype=np.float32).reshape(P.batch, -1)
    obs = worker.call("containers_twohead", x=x)
    if not obs["out"] or any(o.get("shape") is None or len(o["shape"]) != 2 for o in obs["out"].values()):
        return {}
    return {"twohead_heads": {name: int(o["shape"][1]) for name, o in obs["out"].items()}}
