"""Public checks of task containers: layers registered through nn.ModuleList / nn.ModuleDict."""

from __future__ import annotations

import numpy as np

from autograder.graders import fail, judge_layers, points, pools

from ..challenges import fixedmlp_layers, twohead_layers
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

    The points rest on a run: hidden values loaded through those keys, each registered nn.Linear
    computes x @ W.T + b with its own."""
    cp = params.containers
    sizes = list(cp.sizes)
    what = f"FixedMLP({sizes})"
    drawn = pools(challenge.rng(*sizes))
    obs = call(worker, "containers_fixedmlp", what, sizes=sizes, **drawn)
    if obs["layers_type"] in ("list", "tuple"):
        fail("containers.fixedmlp_list", got_type=obs["layers_type"], count=obs["count"])
    if obs["count"] != cp.n_params or sorted(obs["state_keys"]) != sorted(fixedmlp_keys(sizes)):
        fail("containers.fixedmlp_keys", call=what, count=obs["count"], want_count=cp.n_params,
             keys=obs["state_keys"], want=fixedmlp_keys(sizes))
    if obs["optimizer_error"]:
        fail("containers.optimizer", call=what, error=raised_name(obs["optimizer_error"]))
    judge_layers(obs["run"], drawn, params.tol.float32, what, [p for p, _, _ in fixedmlp_layers(sizes)])


@points(2)
def test_twohead_registered(worker, params, challenge):
    """TwoHead registers body and heads ({p.containers.registered_text})

    The points rest on a run: hidden values loaded through those keys, each registered nn.Linear
    computes x @ W.T + b with its own (what forward returns is the forward check's business)."""
    cp = params.containers
    x = np.linspace(-1, 1, cp.batch * cp.in_features, dtype=np.float32).reshape(cp.batch, -1)
    drawn = pools(challenge.rng(cp.in_features, cp.body, *cp.heads))
    obs = call(worker, "containers_twohead", "TwoHead()", x=x, **drawn)
    if obs["heads_type"] in ("dict", "OrderedDict"):
        fail("containers.twohead_dict", got_type=obs["heads_type"], count=obs["count"],
             heads_code=cp.heads_code, head_keys=", ".join(f"heads.{n}" for n in cp.head_names))
    want = twohead_keys(params)
    if obs["count"] != cp.twohead_params or sorted(obs["state_keys"]) != sorted(want):
        fail("containers.twohead_keys", count=obs["count"], want_count=cp.twohead_params,
             keys=obs["state_keys"], want=want, heads=_heads_text(params),
             per_layer=cp.per_layer_text)
    if obs["optimizer_error"]:
        fail("containers.optimizer", call="TwoHead()", error=raised_name(obs["optimizer_error"]))
    layers = twohead_layers(cp.in_features, cp.body, cp.heads)
    judge_layers(obs["run"], drawn, params.tol.float32, "TwoHead()", [p for p, _, _ in layers])


@points(1)
def test_double_reaches_every_layer(worker, params, challenge):
    """.double() converts every layer of FixedMLP and TwoHead, and their outputs are float64

    FixedMLP of other depths too (one layer, five layers). The points rest on runs: float64 values
    only the grader knows, loaded after .double(), give each layer's x @ W.T + b to float64
    precision (a layer left in float32 cannot)."""
    cp = params.containers
    x_fixed = np.ones((2, cp.sizes[0]), dtype=np.float32)
    x_two = np.ones((2, cp.in_features), dtype=np.float32)
    more = [list(s) for s in cp.forward_sizes if tuple(s) != tuple(cp.sizes)]
    gen = challenge.rng(*cp.sizes)
    runs = [pools(gen, float64=True) for _ in range(2)]  # FixedMLP and TwoHead: a run each
    obs = call(worker, "containers_double", "model.double()(x)", DOUBLE_HINT,
               fixed_sizes=list(cp.sizes), x_fixed=x_fixed, x_two=x_two, more_sizes=more, runs=runs)
    for model, report in obs.items():
        dtypes = report["linear_dtypes"] + report["out_dtypes"]
        if not dtypes or any(d != "float64" for d in dtypes):
            fail("containers.double", model=model, layers=report["linear_dtypes"],
                 outputs=report["out_dtypes"])
    for (model, report), drawn in zip(list(obs.items())[:2], runs, strict=True):
        judge_layers(report["run"], drawn, params.tol.float64, f"{model}.double()")
