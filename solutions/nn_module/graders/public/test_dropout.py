"""Public checks of task dropout: ValueError for bad p, train/eval switches, survivors scaled by 1/(1-p)."""

from __future__ import annotations

import numpy as np

from autograder.checks import fail, points

from ..compare import close, describe, require_array
from ..support import call, fail_if_not_implemented, raised_name, rng

ARRAY = ("ndarray",)


def signed_h(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    """Values with |h| in [0.5, 2] and random signs: no zeros, so a zero output means 'dropped'."""
    gen = rng(seed)
    return gen.uniform(0.5, 2.0, shape) * gen.choice([-1.0, 1.0], shape)


def sample(worker, p: float, h: np.ndarray, seed: int, calls: int = 1):
    what = f"Dropout({p}, rng)(h) in train mode"
    obs = call(worker, "dropout_sample", what, p=p, h=h, seed=seed, calls=calls)
    outs = [require_array(o, what, h.shape, types=ARRAY) for o in obs["outs"]]
    return outs, obs["h_after"], what


@points(2)
def test_value_error(worker, params):
    """Dropout(p, rng) raises ValueError unless 0 <= p <= 1, and accepts p = 0, 0.5 and 1"""
    dp = params.dropout
    ps = list(dp.bad_p) + list(dp.valid_p)
    obs = call(worker, "dropout_construct", "Dropout(p, rng)", ps=ps)
    for p, raised in zip(ps, obs, strict=True):
        what = f"Dropout({p}, rng)"
        fail_if_not_implemented(raised, what)
        if p in dp.bad_p and (raised is None or raised["type"] != "ValueError"):
            fail("dropout.no_value_error", call=what, raised=raised_name(raised))
        if p in dp.valid_p and raised is not None:
            fail("dropout.valid_p_raised", call=what, raised=raised_name(raised))


@points(2)
def test_modes_and_eval(worker, params):
    """training starts True; eval()/train() switch it and return self; eval (and p = 0) returns h unchanged"""
    dp = params.dropout
    h = signed_h(dp.h_seed, dp.small_shape)
    obs = call(worker, "dropout_modes", "Dropout(0.5, rng)", p=0.5, h=h, seed=dp.rng_seed)
    for field, want in (("initial", True), ("after_eval", False), ("after_train", True)):
        if obs[field]["value"] is not want:
            fail("dropout.training_flag", when=field.replace("_", " "), got=obs[field]["type"]
                 if obs[field]["value"] is None else obs[field]["value"], want=want)
    if not obs["eval_returns_self"] or not obs["train_returns_self"]:
        fail("dropout.returns_self")
    got = require_array(obs["eval_out"], "Dropout(0.5, rng).eval()(h)", h.shape, types=ARRAY)
    if not np.array_equal(got, h):
        fail("dropout.eval_changes", error=describe(got, h))
    got = require_array(obs["p0_out"], "Dropout(0.0, rng)(h)", h.shape, types=ARRAY)
    if not np.array_equal(got, h):
        fail("dropout.p0_changes", error=describe(got, h))


@points(2)
def test_survivors_scaled(worker, params):
    """In train mode every value is either 0 or exactly h / (1 - p) (inverted dropout)"""
    dp = params.dropout
    p = dp.survivor_p
    h = signed_h(dp.h_seed, dp.shape)
    (out,), _, what = sample(worker, p, h, dp.rng_seed)
    kept = out != 0
    if not kept.any() or kept.all():
        fail("dropout.nothing_dropped" if kept.all() else "dropout.all_dropped", call=what, p=p)
    tol = params.tol.float64
    got, orig = out[kept], h[kept]
    if close(got, orig / (1 - p), tol):
        return
    for factor, key in ((1 - p, "dropout.scale_times"), (1.0, "dropout.no_scale")):
        if close(got, orig * factor, tol):
            fail(key, call=what, p=p, got=f"{got[0]:.6g}", h=f"{orig[0]:.6g}",
                 want=f"{orig[0] / (1 - p):.6g}")
    fail("dropout.survivors", call=what, p=p, error=describe(got, orig / (1 - p)))
