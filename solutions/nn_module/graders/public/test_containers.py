"""Public checks of task containers: layers registered through nn.ModuleList / nn.ModuleDict."""

from __future__ import annotations

import numpy as np

from autograder.checks import fail, points
from autograder.compare import fmt_shape

from ..challenges import (
    finer,
    fixedmlp_layers,
    inputs,
    judge_output,
    linear_state,
    mlp_outputs,
    twohead_layers,
    twohead_outputs,
)
from ..support import call, raised_name

DOUBLE_HINT = {"dtype": "containers.double_error", "Double": "containers.double_error"}


def fixedmlp_keys(sizes) -> list[str]:
    return [f"layers.{i}.{p}" for i in range(len(sizes) - 1) for p in ("weight", "bias")]


def twohead_keys(params) -> list[str]:
    cp = params.containers
    return ["body.0.weight", "body.0.bias"] + [
        f"heads.{name}.{p}" for name in cp.head_names for p in ("weight", "bias")
    ]


def _heads_text(params) -> str:
    cp = params.containers
    pairs = zip(cp.head_names, cp.head_widths, strict=True)
    return ", ".join(f'"{n}": Linear({cp.body}, {w})' for n, w in pairs)


@points(2)
def test_fixedmlp_registered(worker, params, challenge):
    """FixedMLP([3, 16, 8, 1]) registers its layers: 209 parameters, keys layers.i.*, an optimizer

    The points rest on a run: hidden weights loaded through those keys give the contract's output."""
    cp = params.containers
    sizes = list(cp.sizes)
    what = f"FixedMLP({sizes})"
    gen = challenge.rng(*sizes)
    layers = fixedmlp_layers(sizes)
    state = linear_state(gen, layers)
    xs = [inputs(gen, 5, sizes[0])]
    obs = call(worker, "containers_fixedmlp", what, sizes=sizes, state=state, xs=xs)
    if obs["layers_type"] in ("list", "tuple"):
        fail("containers.fixedmlp_list", got_type=obs["layers_type"], count=obs["count"])
    if obs["count"] != cp.n_params or sorted(obs["state_keys"]) != sorted(fixedmlp_keys(sizes)):
        fail("containers.fixedmlp_keys", call=what, count=obs["count"], want_count=cp.n_params,
             keys=obs["state_keys"], want=fixedmlp_keys(sizes))
    if obs["optimizer_error"]:
        fail("containers.optimizer", call=what, error=raised_name(obs["optimizer_error"]))
    judge_output(obs["challenge"], [mlp_outputs(state, [p for p, _, _ in layers], x) for x in xs],
                 params.tol.float32, f"{what}(x)", "nn.Linear layers in order, a ReLU between them",
                 fixedmlp_keys(sizes))


@points(2)
def test_twohead_registered(worker, params, challenge):
    """TwoHead registers body and heads ({p.containers.registered_text})

    The points rest on a run: hidden weights loaded through those keys give each head's output."""
    cp = params.containers
    x = np.linspace(-1, 1, cp.batch * cp.in_features, dtype=np.float32).reshape(cp.batch, -1)
    gen = challenge.rng(cp.in_features, cp.body, *cp.heads)
    state = linear_state(gen, twohead_layers(cp.in_features, cp.body, cp.heads))
    xs = [inputs(gen, 5, cp.in_features)]
    obs = call(worker, "containers_twohead", "TwoHead()(x)", x=x, state=state, xs=xs,
               heads=list(cp.head_names))
    if obs["heads_type"] in ("dict", "OrderedDict"):
        fail("containers.twohead_dict", got_type=obs["heads_type"], count=obs["count"],
             heads_code=cp.heads_code)
    if obs["out"] is None:
        fail("containers.twohead_out_type", got_type=obs["out_type"], outputs=cp.outputs_text)
    if sorted(obs["out"]) != sorted(cp.head_names):
        fail("containers.twohead_out_keys", keys=sorted(obs["out"]), want=sorted(cp.head_names))
    for name, width in zip(cp.head_names, cp.head_widths, strict=True):
        out = obs["out"][name]
        if out["type"] != "Tensor" or tuple(out.get("shape", ())) != (cp.batch, width):
            fail("containers.head_shape", head=name, got_shape=fmt_shape(out.get("shape", ())),
                 want_shape=fmt_shape((cp.batch, width)), heads=_heads_text(params))
    want = twohead_keys(params)
    if obs["count"] != cp.twohead_params or sorted(obs["state_keys"]) != sorted(want):
        fail("containers.twohead_keys", count=obs["count"], want_count=cp.twohead_params,
             keys=obs["state_keys"], want=want, heads=_heads_text(params))
    if obs["optimizer_error"]:
        fail("containers.optimizer", call="TwoHead()", error=raised_name(obs["optimizer_error"]))
    judge_output(obs["challenge"], [w for x in xs for w in twohead_outputs(state, cp.heads, x)],
                 params.tol.float32, "TwoHead()(x)", f"each head on body(x): {_heads_text(params)}", want)


@points(1)
def test_double_reaches_every_layer(worker, params, challenge):
    """.double() converts every layer of FixedMLP and TwoHead, and their outputs are float64

    FixedMLP of other depths too (one layer, five layers)."""
    cp = params.containers
    x_fixed = np.ones((2, cp.sizes[0]), dtype=np.float32)
    x_two = np.ones((2, cp.in_features), dtype=np.float32)
    more = [list(s) for s in cp.forward_sizes if tuple(s) != tuple(cp.sizes)]
    gen = challenge.rng(*cp.sizes)
    # FixedMLP and TwoHead carry a run each (one is what a forged dtype cannot answer; each costs a
    # forward pass); the other depths are judged by their dtypes.
    layers = [fixedmlp_layers(cp.sizes), twohead_layers(cp.in_features, cp.body, cp.heads)]
    cases = [[finer(gen, linear_state(gen, found)), [finer(gen, {"x": inputs(gen, 3, found[0][1])})["x"]]]
             for found in layers]
    obs = call(worker, "containers_double", "model.double()(x)", DOUBLE_HINT,
               fixed_sizes=list(cp.sizes), x_fixed=x_fixed, x_two=x_two, more_sizes=more,
               challenges=cases, heads=list(cp.head_names))
    for model, report in obs.items():
        dtypes = report["linear_dtypes"] + report["out_dtypes"]
        if not dtypes or any(d != "float64" for d in dtypes):
            fail("containers.double", model=model, layers=report["linear_dtypes"],
                 outputs=report["out_dtypes"])
    # The points rest on runs: float64 weights only the grader knows, loaded after .double(), give
    # each model's output to float64 precision (a layer left in float32 cannot).
    for (model, report), found, (state, xs) in zip(list(obs.items())[:2], layers, cases, strict=True):
        if model == "TwoHead":
            wants = [w for x in xs for w in twohead_outputs(state, cp.heads, x)]
            keys = twohead_keys(params)
        else:
            wants = [mlp_outputs(state, [p for p, _, _ in found], x) for x in xs]
            keys = [k for p, _, _ in found for k in (f"{p}.weight", f"{p}.bias")]
        judge_output(report["challenge"], wants, params.tol.float64, f"{model}.double()(x)",
                     "its layers in float64", keys)
