"""Hidden checks of task autograd: random inputs, a real backward pass, no left-over gradient."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from autograder.graders import fail, points

from ..params import default
from ..public.test_autograd import (
    autograd_once,
    check_autograd_value,
    check_manual_value,
    check_roughly,
    hidden_data,
)
from ..support import rng

P = default().autograd
inputs = dict(n=st.integers(1, P.max_n), w=st.floats(-3, 3, allow_nan=False, width=32),
              seed=st.integers(0, 2**16), double=st.booleans())


def _data(n: int, seed: int, double: bool) -> tuple[np.ndarray, np.ndarray]:
    gen = rng(seed)
    dtype = np.float64 if double else np.float32
    X = gen.normal(0, 2, n).astype(dtype)
    Y = (1.5 * X + gen.normal(0, 1, n)).astype(dtype)
    return X, Y


@points(4)
@given(**inputs)
@example(n=6, w=0.75, seed=1, double=True)
def test_autograd_random(worker, params, n, w, seed, double):
    """autograd_grad equals the true derivative for random float32 and float64 inputs"""
    X, Y = _data(n, seed, double)
    check_autograd_value(worker, params, X, Y, float(w))


@points(3)
@given(**inputs)
@example(n=6, w=0.75, seed=1, double=True)
def test_manual_random(worker, params, n, w, seed, double):
    """manual_grad equals the true derivative for random inputs and leaves them unchanged"""
    X, Y = _data(n, seed, double)
    check_manual_value(worker, params, X, Y, float(w))


@points(3)
def test_really_autograd(worker, params, challenge):
    """autograd_grad runs a backward pass in autograd's engine (backward() or autograd.grad) each call

    On hidden inputs, and the answer must be (roughly) the derivative there."""
    gen = challenge.rng("data")
    for dtype in (np.float64, np.float32):
        X, Y, w = hidden_data(gen, dtype, n=8)
        obs, what = autograd_once(worker, X, Y, w, calls=2)
        if any(r["backward_runs"] < 1 for r in obs["results"]):
            fail("autograd.no_backward", call=what)
        check_roughly([r["value"] for r in obs["results"]], X, Y, w, what)


@points(2)
def test_no_leftover_and_inputs_kept(worker, params, challenge):
    """Calling autograd_grad twice gives the same value (no gradient left over) and keeps X and Y

    On hidden inputs, whose derivative the (equal) answers must roughly be."""
    X, Y, w = hidden_data(challenge.rng("data"), n=10)
    obs, what = autograd_once(worker, X, Y, w, calls=2)
    first, second = (r["value"] for r in obs["results"])
    if first != second:
        fail("autograd.leftover", call=what, first=f"{first:.10g}", second=f"{second:.10g}")
    if obs["inputs_changed"]:
        fail("autograd.inputs_changed", call=what)
    check_roughly([first], X, Y, w, what)
