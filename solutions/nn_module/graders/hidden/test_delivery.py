"""Hidden checks of task delivery: outputs against the reference, dropout in train mode, predict()."""

from __future__ import annotations

import functools

import numpy as np

from autograder.graders import (
    close,
    describe,
    fail,
    filled,
    fmt_shape,
    judge_layers,
    note,
    points,
    pools,
    require_array,
)

from ..challenges import delivery_outputs, judge_loaded
from ..public.test_delivery import hidden_buffers
from ..support import call, mlp_state, rng

SUPER_HINT = {"Module.__init__() call": "delivery.super_init"}
SHAPE = {"shape": "delivery.forward_shape"}


@functools.lru_cache(maxsize=8)
def _weights(P, seed: int) -> dict[str, np.ndarray]:
    """The check's weights, and buffer values near the lesson's but not the ones the constructor is
    given (so forward must use the buffers that state_dict loads); the head's bias shifted so that the
    outputs on the check's orders have both signs (a ReLU after the head shows)."""
    gen = rng(seed + 1)
    mean, std = np.array(P.x_mean), np.array(P.x_std)
    state = {"x_mean": (mean + gen.uniform(-0.5, 0.5, mean.shape) * std).astype(np.float32),
             "x_std": (std * gen.uniform(0.7, 1.3, std.shape)).astype(np.float32),
             **mlp_state(seed, list(P.layers), scale=1.5)}
    x = np.concatenate([_orders(P.input_seed + n, n) for n in P.batch_sizes])
    outputs = delivery_outputs(state, [p for p, _, _ in P.layers], x)["right"]
    state["head.bias"] = (state["head.bias"] - np.float32(np.median(outputs))).astype(np.float32)
    return state


def _orders(seed: int, n: int) -> np.ndarray:
    gen = rng(seed)
    cols = [gen.uniform(0.5, 12.0, n), gen.integers(1, 6, n), (gen.random(n) < 0.3)]
    return np.stack(cols, axis=1).astype(np.float32)


def _outputs(out, what: str, n: int) -> np.ndarray:
    """The n values of a forward's output, whatever its shape ((N,) is the forward_shape check's
    business): a tensor of n values is read flat; anything else fails as a wrong type or shape."""
    values = out.get("values") if type(out) is dict and out.get("type") == "Tensor" else None
    if values is not None and values.size == n:
        return require_array({**out, "values": values.reshape(n), "shape": [n]}, what, (n,), keys=SHAPE)
    return require_array(out, what, (n,), keys=SHAPE)


@points(3)
def test_matches_reference(worker, params):
    """With the reference's weights, eval-mode outputs equal the reference's, also for N = 1

    The weights go into the layers of the contract's names (or, when the names are not the
    contract's, into the nn.Linear layers of those shapes), other x_mean and x_std values into its
    buffers (by key, else into what holds the ones it was given), and forward is compared with
    head(hidden((x - x_mean) / x_std)) on what those hold: forward must use them."""
    P = params.delivery
    tol = params.tol.float32
    xs = [_orders(P.input_seed + n, n) for n in P.batch_sizes]
    w = _weights(P, P.state_seed)
    obs = call(worker, "delivery_forward", "model.eval()(x)", SUPER_HINT,
               x_mean=np.array(P.x_mean, np.float32), x_std=np.array(P.x_std, np.float32), state=w, xs=xs,
               layers=[list(layer) for layer in P.layers])
    held = judge_loaded(obs["load"], w, "delivery.forward_load", shapes=P.shapes_text.replace(" and ", ", "))
    state = {"x_mean": w["x_mean"], "x_std": w["x_std"], **held}
    prefixes = [p for p, _, _ in P.layers]
    for n, x, out in zip(P.batch_sizes, xs, obs["outs"], strict=True):
        what = f"model(x), x.shape == {fmt_shape(x.shape)}"
        got = _outputs(out, what, n)
        want = delivery_outputs(state, prefixes, x)
        if close(got, want["right"], tol):
            continue
        if close(got, want["no_standardization"], tol):
            fail("delivery.no_standardize", call=what)
        fail("delivery.forward_values", call=what, error=describe(got, want["right"]))


@points(2)
def test_dropout_in_train_mode(worker, params, challenge):
    """Dropout(p_drop) is active in train mode, not in eval mode; the default p_drop is {p.delivery.p_drop}

    The points rest on values: the model's nn.Dropout, run in train mode on values only the grader
    knows, keeps each value scaled by 1/(1 - p_drop) or zeroes it."""
    P = params.delivery
    given = hidden_buffers(challenge.rng("buffers"), params)
    x = _orders(P.input_seed, P.train_batch)
    h = challenge.rng("h").uniform(0.5, 2.0, (8, 16)).astype(np.float32)
    what = f"DeliveryMLP(x_mean, x_std, p_drop={P.train_p})"
    obs = call(worker, "delivery_train_mode", what, SUPER_HINT, **given, p_drop=P.train_p, x=x, h=h)
    if P.train_p not in obs["dropout_ps"]:
        fail("delivery.dropout_p", ps=obs["dropout_ps"] or "[]", p=P.train_p,
             default=f"{P.p_drop:g}")
    ps = obs["default_ps"]  # the default path: p_drop not passed (in an exam, the student's own number)
    if ps != [P.p_drop]:
        fail("delivery.default_p", ps=ps or "[]", p=P.p_drop)
    train = [require_array(o, "model(x) in train mode", None, keys=SHAPE) for o in obs["train"]]
    evals = [require_array(o, "model.eval()(x)", None, keys=SHAPE) for o in obs["eval"]]
    if np.array_equal(train[0], train[1]):
        fail("delivery.train_mode_inactive", p=P.train_p)
    if not np.array_equal(evals[0], evals[1]):
        fail("delivery.eval_random", error=describe(evals[1], evals[0]))
    run = next(r for r in obs["dropouts"] if r["p"] == P.train_p)
    got = require_array(run["out"], f"model.{run['name']}(h), training=True", h.shape)
    kept = np.abs(got) > 0
    scaled = h.astype(np.float64) / (1 - P.train_p)
    if kept.all() or not kept.any() or not close(got[kept], scaled[kept], params.tol.float32):
        fail("delivery.dropout_values", layer=run["name"], p=P.train_p,
             error=describe(got, np.where(kept, scaled, 0)))


def _predict(worker, params, challenge, p_drop=None, calls=None):
    """predict() on a model of hidden values (and hidden x_mean, x_std) left in train mode."""
    P = params.delivery
    gen = challenge.rng(*P.sizes)
    given = hidden_buffers(gen, params)
    drawn = pools(gen)
    x = _orders(P.input_seed + 1, P.train_batch)
    obs = call(worker, "delivery_predict", "predict(model, x)", SUPER_HINT, **given, x=x,
               calls=calls or P.predict_calls, x_single=_orders(P.input_seed + 2, 1), p_drop=p_drop, **drawn)
    judge_layers(obs["run"], drawn, params.tol.float32, "DeliveryMLP(x_mean, x_std)")
    obs["drawn"] = drawn
    return obs


def _own(out: dict, what: str) -> np.ndarray:
    """The model's own eval-mode output (what predict must give)."""
    return require_array(out, what, None, keys=SHAPE)


@points(2)
def test_predict_eval(worker, params, challenge):
    """predict() on a model left in train mode gives the same eval-mode answer on every call

    Also for x of shape (1, 3). The model runs in eval mode during predict (a forward hook sees its
    mode), and the answer is the model's own: its eval-mode output on the same inputs (with hidden
    weights loaded), whatever its forward computes."""
    obs = _predict(worker, params, challenge)
    own = _own(obs["own"], "model.eval()(x)")
    outs = [require_array(o, "predict(model, x)", own.shape, keys=SHAPE) for o in obs["outs"]]
    in_train = sum(1 for s in obs["seen"] if s["training"] or s["dropout_training"])
    if in_train:
        fail("delivery.predict_not_eval", calls=len(obs["seen"]), count=in_train)
    if not close(outs[0], own, params.tol.float32):
        fail("delivery.predict_values", error=describe(outs[0], own))
    own_single = _own(obs["own_single"], "model(x) in eval mode for x of shape (1, 3)")
    what = "predict(model, x), x.shape == (1, 3)"
    got = require_array(obs["single"], what, own_single.shape, keys=SHAPE)
    if not close(got, own_single, params.tol.float32):
        fail("delivery.predict_values", error=f"for x of shape (1, 3): {describe(got, own_single)}")
    note_forward(obs, params, own)


def note_forward(obs: dict, params, own: np.ndarray) -> None:
    """A note when the model's own eval-mode output (which predict must give) is not the contract's
    forward of the values loaded into it: the forward check charges that, once."""
    P = params.delivery
    values = filled(obs["drawn"]["pool"], obs["run"]["entries"])
    if any(key not in values for key in P.keys):
        return  # another structure: the structural checks say how
    want = delivery_outputs(values, [p for p, _, _ in P.layers], _orders(P.input_seed + 1, P.train_batch))
    if own.shape != want["right"].shape or not close(own, want["right"], params.tol.float32):
        right = want["right"]
        detail = (f"model(x) in eval mode: shape {fmt_shape(own.shape)}, not {fmt_shape(right.shape)}"
                  if own.shape != right.shape else
                  f"model(x) in eval mode is not head(hidden((x - x_mean) / x_std)): {describe(own, right)}")
        note("common.note_other_check", detail=detail, check="delivery.matches_reference")


@points(2)
def test_predict_no_grad(worker, params, challenge):
    """predict() runs the model under torch.no_grad() (or inference_mode) and returns no graph

    On a model built with p_drop=0 (whose output does not depend on the mode), of hidden weights:
    the points rest on predict returning the model's own output too."""
    obs = _predict(worker, params, challenge, p_drop=0.0, calls=2)
    for out in [*obs["outs"], obs["single"]]:
        if out["type"] != "Tensor":
            fail("common.wrong_type", call="predict(model, x)", got_type=out["type"], want_type="Tensor")
        if out["requires_grad"] or out["has_grad_fn"]:
            fail("delivery.predict_graph", requires_grad=out["requires_grad"])
    if any(s["grad_enabled"] and not s["inference_mode"] for s in obs["seen"]):
        fail("delivery.predict_grad_enabled")
    own = _own(obs["own"], "model.eval()(x)")
    got = require_array(obs["outs"][0], "predict(model, x)", own.shape, keys=SHAPE)
    if not close(got, own, params.tol.float32):
        fail("delivery.predict_values", error=describe(got, own))


def observe_variant(worker, params) -> dict:
    """The exam knobs this submission's DeliveryMLP implements: hidden widths and default p_drop."""
    P = params.delivery
    obs = call(worker, "delivery_structure", "DeliveryMLP(x_mean, x_std)", SUPER_HINT,
               x_mean=np.array(P.x_mean, np.float32), x_std=np.array(P.x_std, np.float32))
    shapes = {name: shape for name, shape in zip(obs["names"], obs["shapes"], strict=True)}
    found: dict = {}
    first, second = shapes.get("hidden.0.weight"), shapes.get("hidden.3.weight")
    if first and second:
        found["delivery_hidden"] = [first[0], second[0]]
    if len(obs["dropout_ps"]) == 1:
        found["delivery_p_drop"] = obs["dropout_ps"][0]
    return found

