"""Hidden checks of task dropout: statistics, fresh masks, randomness from rng only, h untouched, p == 1."""

from __future__ import annotations

from itertools import pairwise

import numpy as np

from autograder.graders import fail, points, require_array

from ..public.test_dropout import (
    IDENTITY_PATHS,
    TRAIN_AGAIN,
    judge_from_h,
    judge_statistics,
    modes_run,
    sample,
    shaped_outs,
    signed_h,
)
from ..support import call, rng

ARRAY = ("ndarray",)


def _positive_h(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    return rng(seed).uniform(0.5, 1.5, shape)


@points(3)
def test_statistics(worker, params):
    """For p = 0.1, 0.3, 0.75 each value is zeroed with probability p: the zero fraction is close to p

    Also for h of 1 and 3 axes."""
    P = params.dropout
    h = _positive_h(P.h_seed + 1, P.shape)
    for k, p in enumerate(P.stats_p):
        (out,), _, what = sample(worker, p, h, P.rng_seed + k)
        judge_from_h(out, h, what)
        judge_statistics(out, h, p, what, P.sigmas)
    for h, what, (first, *_), _ in shaped_outs(worker, params):
        judge_from_h(first, h, what)
        judge_statistics(first, h, P.survivor_p, what, P.sigmas)


@points(2)
def test_fresh_independent_mask(worker, params):
    """Every call draws a new mask, with an independent draw for every element"""
    P = params.dropout
    h = signed_h(P.h_seed + 2, (64, 32))
    outs, _, what = sample(worker, 0.5, h, P.rng_seed, calls=P.calls)
    for out in outs:
        judge_from_h(out, h, what)
    masks = [o == 0 for o in outs]
    for axis, name in ((0, "some rows"), (1, "some columns")):
        lines = masks[0] if axis == 0 else masks[0].T
        if len(np.unique(lines, axis=0)) < len(lines):  # 2**-32 per pair for independent draws
            fail("dropout.mask_not_independent", call=what, what=name)
    for a, b in pairwise(masks):
        if np.array_equal(a, b):
            fail("dropout.same_mask", call=what, calls=P.calls)
    for h, what, (first, second, *_), _ in shaped_outs(worker, params):
        judge_from_h(first, h, what)
        if np.array_equal(first == 0, second == 0):
            fail("dropout.same_mask", call=what, calls=2)
    obs, h = modes_run(worker, params)
    first, second = (require_array(obs[k], TRAIN_AGAIN, h.shape, types=ARRAY)
                     for k in ("train_again_out", "train_again_second"))
    judge_from_h(first, h, TRAIN_AGAIN)
    # two masks that drop nothing are the survivors check's (dropout off after train()), not this one's
    dropped = (first == 0).any() and (second == 0).any()
    if dropped and np.array_equal(first == 0, second == 0):  # 2**-128 for independent masks of 128 values
        fail("dropout.same_mask", call=TRAIN_AGAIN, calls=2)


@points(2)
def test_randomness_from_rng(worker, params):
    """The mask comes from the given rng only: same rng seed, same output, whatever the global seeds"""
    P = params.dropout
    h = signed_h(P.h_seed + 3, (32, 16))
    obs = call(worker, "dropout_rng", "Dropout(0.5, np.random.default_rng(seed))(h)",
               p=0.5, h=h, seed=P.rng_seed)
    a, b, c = (require_array(o, "Dropout(0.5, rng)(h)", h.shape, types=ARRAY) for o in obs)
    for out in (a, c):
        judge_from_h(out, h, "Dropout(0.5, rng)(h)")
    if not np.array_equal(a, b):
        fail("dropout.global_random", seed=P.rng_seed)
    if np.array_equal(a, c):
        fail("dropout.ignores_rng", seed=P.rng_seed, other=P.rng_seed + 1)
    for h, what, (first, _, same, other), _ in shaped_outs(worker, params):
        judge_from_h(first, h, what)
        if not np.array_equal(first, same):
            fail("dropout.global_random", seed=P.rng_seed)
        if np.array_equal(first, other):
            fail("dropout.ignores_rng", seed=P.rng_seed, other=P.rng_seed + 1)


@points(1)
def test_h_untouched(worker, params):
    """Calling the layer never modifies h in place

    In train mode (h of 1, 2 and 3 axes), in eval mode, with p = 0 and with p = 1 in eval mode."""
    P = params.dropout
    h = signed_h(P.h_seed + 4, P.small_shape)
    _, h_after, what = sample(worker, 0.5, h, P.rng_seed)
    same_shape = type(h_after) is np.ndarray and h_after.shape == h.shape
    if not same_shape or not np.array_equal(h_after, h):
        changed = int(np.sum(h_after != h)) if same_shape else h.size
        fail("dropout.in_place", call=what, changed=changed, size=h.size)
    for h, what, outs, changed in shaped_outs(worker, params):
        judge_from_h(outs[0], h, what)
        if changed:
            fail("dropout.in_place", call=what, changed=changed, size=h.size)
    obs, h = modes_run(worker, params)
    judge_from_h(require_array(obs["train_again_out"], TRAIN_AGAIN, h.shape, types=ARRAY), h, TRAIN_AGAIN)
    for path, what in IDENTITY_PATHS.items():
        changed = obs["h_changed"].get(path, 0)
        if changed:
            fail("dropout.in_place", call=what, changed=changed, size=h.size)


@points(1)
def test_p_one(worker, params):
    """With p == 1 every value is 0 (no NaN from dividing by 1 - p) and h is left untouched"""
    P = params.dropout
    h = signed_h(P.h_seed + 5, P.small_shape)
    what = "Dropout(1.0, rng)(h), training=True"
    obs = call(worker, "dropout_sample", what, {"ValueError": "dropout.p_one_raised"},
               p=1.0, h=h, seed=P.rng_seed, calls=1)
    out = require_array(obs["outs"][0], what, h.shape, types=ARRAY,
                        keys={"finite": "dropout.p_one_nan"})
    if np.any(out != 0):
        fail("dropout.p_one", call=what, nonzero=int(np.sum(out != 0)))
    h_after = obs["h_after"]
    if type(h_after) is not np.ndarray or h_after.shape != h.shape or not np.array_equal(h_after, h):
        same_shape = type(h_after) is np.ndarray and h_after.shape == h.shape
        changed = int(np.sum(h_after != h)) if same_shape else h.size
        fail("dropout.in_place", call=what, changed=changed, size=h.size)
