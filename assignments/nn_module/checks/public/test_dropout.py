"""Public checks of task dropout: ValueError for bad p, train/eval switches, survivors scaled by 1/(1-p)."""

from __future__ import annotations

import numpy as np

from autograder.graders import (
    RaisesCase,
    close,
    describe,
    fail,
    fmt_shape,
    judge_refusals,
    points,
    require_array,
)

from ..challenges import once_per_task
from ..support import call, caller, fail_if_not_implemented, raised_name, rng

ARRAY = ("ndarray",)


def signed_h(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    """Values with |h| in [0.5, 2] and random signs: no zeros, so a zero output means 'dropped'."""
    gen = rng(seed)
    return gen.uniform(0.5, 2.0, shape) * gen.choice([-1.0, 1.0], shape)


def sample(worker, p: float, h: np.ndarray, seed: int, calls: int = 1):
    what = f"Dropout({p}, rng)(h), training=True"
    obs = call(worker, "dropout_sample", what, p=p, h=h, seed=seed, calls=calls)
    outs = [require_array(o, what, h.shape, types=ARRAY) for o in obs["outs"]]
    return outs, obs["h_after"], what


# The paths on which the layer returns h's values (dropout_modes), as the feedback names them.
IDENTITY_PATHS = {
    "eval": "Dropout(0.5, rng).eval()(h)",
    "p0": "Dropout(0.0, rng).train()(h)",
    "eval_p1": "Dropout(1.0, rng).eval()(h)",
    "train_again": "Dropout(0.5, rng).eval().train()(h)",
}


@points(2)
def test_value_error(worker, params, challenge):
    """Dropout(p, rng) raises ValueError unless 0 <= p <= 1, and accepts p = 0, 0.5 and 1

    Also for values of p only the grader knows, bad and good ones in an order only it knows."""
    dp = params.dropout
    ps = list(dp.bad_p) + list(dp.valid_p) + hidden_ps(challenge)
    cases = [RaisesCase(p, not 0 <= p <= 1, f"Dropout({p}, rng)") for p in ps]
    obs = call(worker, "dropout_construct", "Dropout(p, rng)", ps=ps)
    judge_refusals(cases, obs, "ValueError", refuse_key="dropout.no_value_error",
                   accept_key="dropout.valid_p_raised", caller=caller)


def hidden_ps(challenge, n: int = 16) -> list[float]:
    """p values drawn from the check's challenge, each outside [0, 1] or inside with even odds: which
    calls must raise is a pattern nobody can know in advance (2**-16 to guess)."""
    gen = challenge.rng("p")
    inside = gen.random(n) < 0.5
    values = np.where(inside, gen.uniform(0.01, 0.99, n),
                      np.where(gen.random(n) < 0.5, -gen.uniform(0.01, 3, n), 1 + gen.uniform(0.01, 3, n)))
    return [round(float(v), 4) for v in values]


def modes_run(worker, params) -> tuple[dict, np.ndarray]:
    """The identity paths and train mode again after eval() (dropout_modes): one run that the checks of
    the properties it shows share (each judges its own)."""
    dp = params.dropout
    h = signed_h(dp.h_seed, dp.small_shape)
    return once_per_task(worker, "dropout_modes", "Dropout(0.5, rng)", p=0.5, h=h, seed=dp.rng_seed), h


def shapes_run(worker, params) -> tuple[list, list[np.ndarray]]:
    """Train mode on h of 1 and 3 axes (dropout_shapes): one run shared likewise (a mask drawn for
    (rows, columns) only shows here)."""
    dp = params.dropout
    hs = [positive_h(dp.h_seed + 10 + k, shape) for k, shape in enumerate(dp.other_shapes)]
    obs = once_per_task(worker, "dropout_shapes", f"Dropout({dp.survivor_p}, rng)(h), training=True",
                        p=dp.survivor_p, hs=hs, seed=dp.rng_seed)
    return obs, hs


def shaped_outs(worker, params, owner: bool = False):
    """Per h of another rank: (h, what, [first, second, same rng seed, next rng seed], h_changed). A
    layer that raises for that rank, or gives another shape, fails the check that owns the output's
    shape (`owner`, survivors_scaled); the other checks judge their property on the ranks that work."""
    obs, hs = shapes_run(worker, params)
    found = []
    for h, got in zip(hs, obs, strict=True):
        what = f"Dropout({params.dropout.survivor_p}, rng)(h), training=True, h.shape == {fmt_shape(h.shape)}"
        fail_if_not_implemented(got["raised"], what)
        shaped = got["raised"] is None and all(
            type(o) is dict and tuple(o.get("shape", ())) == h.shape for o in got["outs"])
        if not owner and not shaped:
            continue
        if got["raised"]:
            fail("dropout.rank_raised", call=what, raised=raised_name(got["raised"]))
        outs = [require_array(o, what, h.shape, types=ARRAY) for o in got["outs"]]
        found.append((h, what, outs, got["h_changed"]))
    return found


TRAIN_AGAIN = "Dropout(0.5, rng).eval().train()(h)"  # the train path after eval(): dropout is on again


@points(2)
def test_modes_and_eval(worker, params):
    """training starts True; eval()/train() switch it and return self; eval (and p = 0) returns h unchanged

    Eval with p = 1 too."""
    obs, h = modes_run(worker, params)
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
    if obs["p1_refused"] is None:
        what = "Dropout(1.0, rng).eval()(h)"
        got = require_array(obs["eval_p1_out"], what, h.shape, types=ARRAY)
        if not np.array_equal(got, h):
            fail("dropout.eval_p_one", call=what, error=describe(got, h))


@points(2)
def test_survivors_scaled(worker, params):
    """In train mode every value is either 0 or exactly h / (1 - p) (inverted dropout)

    For h of 2 axes, of 1 and 3 axes, and in train mode again after eval()."""
    dp = params.dropout
    p = dp.survivor_p
    h = signed_h(dp.h_seed, dp.shape)
    (out,), _, what = sample(worker, p, h, dp.rng_seed)
    judge_survivors(out, h, p, what, params.tol.float64)
    for h, what, (first, *_), _ in shaped_outs(worker, params, owner=True):
        judge_survivors(first, h, p, what, params.tol.float64)
    obs, h = modes_run(worker, params)
    got = require_array(obs["train_again_out"], TRAIN_AGAIN, h.shape, types=ARRAY)
    judge_survivors(got, h, 0.5, TRAIN_AGAIN, params.tol.float64)


def positive_h(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    """Values in [0.5, 1.5]: no zeros, and a sum far from 0 for the mean test."""
    return rng(seed).uniform(0.5, 1.5, shape)


def judge_statistics(out: np.ndarray, h: np.ndarray, p: float, what: str, sigmas: float) -> None:
    """The zero fraction is within `sigmas` standard deviations of p (with survivors scaled by 1/(1-p),
    which the survivors check judges, the mean of h is then preserved)."""
    n = h.size
    zeros = float(np.mean(out == 0))
    sd = np.sqrt(p * (1 - p) / n)
    if abs(zeros - p) > sigmas * sd:
        key = "dropout.keep_swapped" if abs(zeros - (1 - p)) <= sigmas * sd else "dropout.zero_fraction"
        fail(key, call=what, p=p, zeros=f"{zeros:.4f}", bound=f"{sigmas * sd:.4f}")


def judge_from_h(out: np.ndarray, h: np.ndarray, what: str) -> None:
    """The output is computed from this h: every kept value is h times one and the same factor
    (whatever the factor: the survivors check judges it), so a mask drawn for another h fails."""
    kept = out != 0
    if not kept.any():
        return
    ratios = out[kept] / h[kept]
    if not np.allclose(ratios, ratios[0], rtol=1e-6, atol=0):  # float32 rounding passes, another h not
        fail("dropout.not_from_h", call=what, low=f"{ratios.min():.6g}", high=f"{ratios.max():.6g}")


def judge_survivors(out: np.ndarray, h: np.ndarray, p: float, what: str, tol: float) -> None:
    """Some values dropped, some kept, and every kept one exactly h / (1 - p)."""
    kept = out != 0
    if not kept.any() or kept.all():
        fail("dropout.nothing_dropped" if kept.all() else "dropout.all_dropped", call=what, p=p)
    got, orig = out[kept], h[kept]
    if close(got, orig / (1 - p), tol):
        return
    for factor, key in ((1 - p, "dropout.scale_times"), (1.0, "dropout.no_scale")):
        if close(got, orig * factor, tol):
            fail(key, call=what, p=p, got=f"{got[0]:.6g}", h=f"{orig[0]:.6g}",
                 want=f"{orig[0] / (1 - p):.6g}")
    fail("dropout.survivors", call=what, p=p, error=describe(got, orig / (1 - p)))
