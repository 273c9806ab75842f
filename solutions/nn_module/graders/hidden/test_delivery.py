"""Hidden checks of task delivery: outputs against the reference, dropout in train mode, predict()."""

from __future__ import annotations

import functools

import numpy as np

from autograder.checks import fail, points
from autograder.compare import close, describe, fmt_shape, require_array

from ..support import call, load_problem, mlp_state, relu, rng
from . import _ref

SUPER_HINT = {"Module.__init__() call": "delivery.super_init"}
SHAPE = {"shape": "delivery.forward_shape"}


@functools.lru_cache(maxsize=8)
def _weights(P, seed: int) -> dict[str, np.ndarray]:
    state = mlp_state(seed, list(P.layers))
    return {"x_mean": np.array(P.x_mean, np.float32), "x_std": np.array(P.x_std, np.float32), **state}


def _orders(seed: int, n: int) -> np.ndarray:
    gen = rng(seed)
    cols = [gen.uniform(0.5, 12.0, n), gen.integers(1, 6, n), (gen.random(n) < 0.3)]
    return np.stack(cols, axis=1).astype(np.float32)


@functools.lru_cache(maxsize=16)
def reference_output(params, n: int, seed: int) -> np.ndarray:
    """The reference DeliveryMLP in eval mode, with the check's weights, on the check's orders."""
    import torch

    P = params.delivery
    state = {k: torch.from_numpy(v.copy()) for k, v in _weights(P, P.state_seed).items()}
    model = _ref.module("delivery", params).DeliveryMLP(state["x_mean"], state["x_std"])
    model.load_state_dict(state)
    model.eval()
    with torch.no_grad():
        out = model(torch.from_numpy(_orders(seed, n)))
    return out.numpy().astype(np.float64)


def _unstandardized(P, x: np.ndarray) -> np.ndarray:
    s = {k: v.astype(np.float64) for k, v in _weights(P, P.state_seed).items()}
    h = relu(x.astype(np.float64) @ s["hidden.0.weight"].T + s["hidden.0.bias"])
    h = relu(h @ s["hidden.3.weight"].T + s["hidden.3.bias"])
    return (h @ s["head.weight"].T + s["head.bias"])[:, 0]


def _loaded_or_fail(P, obs) -> None:
    detail = load_problem(obs["load"], allowed=P.buffers)  # plain-attribute buffers: graded elsewhere
    if detail:
        fail("delivery.forward_load", detail=detail, shapes=P.shapes_text.replace(" and ", ", "))


@points(4)
def test_matches_reference(worker, params):
    """With the reference's weights, eval-mode outputs equal the reference's, shape (N,), also for N = 1"""
    P = params.delivery
    tol = params.tol.float32
    xs = [_orders(P.input_seed + n, n) for n in P.batch_sizes]
    w = _weights(P, P.state_seed)
    obs = call(worker, "delivery_forward", "model(x) in eval mode", SUPER_HINT,
               x_mean=w["x_mean"], x_std=w["x_std"], state=w, xs=xs)
    _loaded_or_fail(P, obs)
    for n, x, out in zip(P.batch_sizes, xs, obs["outs"], strict=True):
        what = f"model(x) for x of shape {fmt_shape(x.shape)}"
        got = require_array(out, what, (n,), keys=SHAPE)
        want = reference_output(params, n, P.input_seed + n)
        if close(got, want, tol):
            continue
        if close(got, _unstandardized(P, x), tol):
            fail("delivery.no_standardize", call=what)
        fail("delivery.forward_values", call=what, error=describe(got, want))


@points(2)
def test_dropout_in_train_mode(worker, params):
    """Dropout(p_drop) is active in train mode, not in eval mode; the default p_drop is {p.delivery.p_drop}"""
    P = params.delivery
    w = _weights(P, P.state_seed)
    x = _orders(P.input_seed, P.train_batch)
    what = f"DeliveryMLP(x_mean, x_std, p_drop={P.train_p})"
    obs = call(worker, "delivery_train_mode", what, SUPER_HINT,
               x_mean=w["x_mean"], x_std=w["x_std"], p_drop=P.train_p, x=x, state=w)
    if P.train_p not in obs["dropout_ps"]:
        fail("delivery.dropout_p", ps=obs["dropout_ps"] or "no nn.Dropout", p=P.train_p)
    got = obs["structure"]  # the explicit-p path has the structure the public checks prove without p_drop
    params_of_buffers = [n for n in P.buffers if n in got["names"]]
    if (got["state_keys"] != list(P.keys) or got["count"] != P.n_params or params_of_buffers
            or sorted(got["buffer_names"]) != sorted(P.buffers)):
        fail("delivery.explicit_p_structure", p=P.train_p, keys=got["state_keys"], count=got["count"],
             buffers=got["buffer_names"] or "none", want=list(P.keys), want_count=P.n_params)
    wrong = {k: v for k, v in got["double_dtypes"].items() if v != "float64"}
    if wrong:
        fail("delivery.double_dtypes", wrong=f"DeliveryMLP(x_mean, x_std, p_drop={P.train_p}) has "
             + ", ".join(f"{k}: {v}" for k, v in wrong.items()))
    train = [require_array(o, "model(x) in train mode", (P.train_batch,), keys=SHAPE) for o in obs["train"]]
    evals = [require_array(o, "model(x) in eval mode", (P.train_batch,), keys=SHAPE) for o in obs["eval"]]
    if np.array_equal(train[0], train[1]):
        fail("delivery.train_mode_inactive", p=P.train_p)
    if not np.array_equal(evals[0], evals[1]):
        fail("delivery.eval_random", error=describe(evals[1], evals[0]))
    ps = obs["default_ps"]  # the default path: p_drop not passed (in an exam, the student's own number)
    if ps != [P.p_drop]:
        fail("delivery.default_p", ps=ps or "no nn.Dropout", p=P.p_drop)
    # The points rest on values: with the hidden weights, eval mode gives the reference's output
    # (or the unstandardized one: that slip is the matches_reference check's).
    if not _a_model_output(params, evals[0], P.input_seed):
        want = reference_output(params, P.train_batch, P.input_seed)
        fail("delivery.forward_values", call=f"{what}: model(x) in eval mode", error=describe(evals[0], want))


def _structure(worker, P):
    x_mean, x_std = np.array(P.x_mean, np.float32), np.array(P.x_std, np.float32)
    return call(worker, "delivery_structure", "DeliveryMLP(x_mean, x_std)", SUPER_HINT,
                x_mean=x_mean, x_std=x_std)


def observe_variant(worker, params) -> dict:
    """The exam knobs this submission's DeliveryMLP implements: hidden widths and default p_drop."""
    obs = _structure(worker, params.delivery)
    shapes = {name: shape for name, shape in zip(obs["names"], obs["shapes"], strict=True)}
    found: dict = {}
    first, second = shapes.get("hidden.0.weight"), shapes.get("hidden.3.weight")
    if first and second:
        found["delivery_hidden"] = [first[0], second[0]]
    if len(obs["dropout_ps"]) == 1:
        found["delivery_p_drop"] = obs["dropout_ps"][0]
    return found


def _predict(worker, params):
    P = params.delivery
    w = _weights(P, P.state_seed)
    x = _orders(P.input_seed + 1, P.train_batch)
    obs = call(worker, "delivery_predict", "predict(model, x)", SUPER_HINT,
               x_mean=w["x_mean"], x_std=w["x_std"], state=w, x=x, calls=P.predict_calls,
               x_single=_orders(P.input_seed + 2, 1))
    _loaded_or_fail(P, obs)
    return obs, reference_output(params, P.train_batch, P.input_seed + 1)


@points(2)
def test_predict_eval(worker, params):
    """predict() on a model left in train mode gives the same eval-mode answer on every call

    Also for x of shape (1, 3): the result is (1,), like the model's."""
    obs, want = _predict(worker, params)
    outs = [require_array(o, "predict(model, x)", (params.delivery.train_batch,), keys=SHAPE)
            for o in obs["outs"]]
    if any(s["dropout_training"] for s in obs["seen"]) or not all(
        np.array_equal(o, outs[0]) for o in outs
    ):
        fail("delivery.predict_not_eval", calls=len(outs), first=_few(outs[0]), second=_few(outs[-1]))
    if not close(outs[0], want, params.tol.float32):
        fail("delivery.predict_values", error=describe(outs[0], want))
    what = "predict(model, x) for x of shape (1, 3)"  # the N = 1 path
    got = require_array(obs["single"], what, (1,), keys=SHAPE)
    want = reference_output(params, 1, params.delivery.input_seed + 2)
    if not close(got, want, params.tol.float32):
        fail("delivery.predict_values", error=f"for x of shape (1, 3): {describe(got, want)}")


@points(2)
def test_predict_no_grad(worker, params):
    """predict() runs the model under torch.no_grad() (or inference_mode) and returns no graph

    On a model built with p_drop=0 (whose output does not depend on the mode), from the hidden
    weights: the points rest on predict returning the model's output too."""
    P = params.delivery
    w = _weights(P, P.state_seed)
    obs = call(worker, "delivery_predict", "predict(model, x)", SUPER_HINT,
               x_mean=w["x_mean"], x_std=w["x_std"], state=w, x=_orders(P.input_seed + 1, P.train_batch),
               calls=2, x_single=_orders(P.input_seed + 2, 1), p_drop=0.0)
    _loaded_or_fail(P, obs)
    for out in [*obs["outs"], obs["single"]]:
        if out["type"] != "Tensor":
            fail("common.wrong_type", call="predict(model, x)", got_type=out["type"], want_type="Tensor")
        if out["requires_grad"] or out["has_grad_fn"]:
            fail("delivery.predict_graph", requires_grad=out["requires_grad"])
    if any(s["grad_enabled"] and not s["inference_mode"] for s in obs["seen"]):
        fail("delivery.predict_grad_enabled")
    got = require_array(obs["outs"][0], "predict(model, x)", (P.train_batch,), keys=SHAPE)
    if not _a_model_output(params, got, P.input_seed + 1):
        want = reference_output(params, P.train_batch, P.input_seed + 1)
        fail("delivery.predict_values", error=describe(got, want))


def _a_model_output(params, got: np.ndarray, seed: int) -> bool:
    """`got` is the eval-mode output of the reference's weights on the orders of `seed` (batch
    P.train_batch), or that of a model that skips the standardization (another check's slip)."""
    P = params.delivery
    tol = params.tol.float32
    x = _orders(seed, P.train_batch)
    want = reference_output(params, P.train_batch, seed)
    return close(got, want, tol) or close(got, _unstandardized(P, x), tol)


def _few(values: np.ndarray, n: int = 3) -> str:
    return "[" + ", ".join(f"{v:.4f}" for v in values[:n]) + ", ...]"
