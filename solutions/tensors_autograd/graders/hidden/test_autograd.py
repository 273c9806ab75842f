"""Hidden checks of task autograd: a real backward pass, no left-over gradient."""

from __future__ import annotations

import numpy as np

from autograder.graders import fail, points

from ..public.test_autograd import autograd_once, check_roughly, hidden_data, sum_slip


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
        check_roughly([r["value"] for r in obs["results"]], X, Y, w, what, slips=sum_slip(X))


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
    check_roughly([first], X, Y, w, what, slips=sum_slip(X))
