"""Public checks of task autograd: the lesson's gradient (-30 at w = 0) by autograd and by hand."""

from __future__ import annotations

import numpy as np

from autograder.checks import fail, points
from autograder.probe_calls import call, scalar_type

from ..support import line_data

GRAD_HINTS = {"does not require grad": "autograd.requires_grad", "grad_fn": "autograd.requires_grad",
              "NoneType": "autograd.grad_none"}


def true_grad(X: np.ndarray, Y: np.ndarray, w: float) -> tuple[float, float]:
    """d/dw mean((w X - Y)^2) in float64, and the scale the tolerance is relative to."""
    X64, Y64 = X.astype(np.float64), Y.astype(np.float64)
    terms = 2 * (w * X64 - Y64) * X64
    return float(np.mean(terms)), max(1.0, float(np.mean(np.abs(terms))))


def tolerance(params, X: np.ndarray) -> float:
    return params.tol.float64 if X.dtype == np.float64 else params.tol.float32


def describe_inputs(X: np.ndarray, w: float) -> str:
    return f"X, Y of {X.dtype.name}, {X.shape[0]} values, w={w:.6g}"


def autograd_once(worker, X, Y, w, calls=1):
    what = f"autograd_grad({describe_inputs(X, w)})"
    obs = call(worker, "autograd_grad", what, GRAD_HINTS, X=X, Y=Y, w=w, calls=calls)
    for r in obs["results"]:
        bad = scalar_type(r)
        if bad:
            fail("autograd.not_float", call=what, got_type=bad)
    return obs, what


def check_autograd_value(worker, params, X, Y, w) -> None:
    obs, what = autograd_once(worker, X, Y, w)
    got = obs["results"][0]["value"]
    want, scale = true_grad(X, Y, w)
    tol = tolerance(params, X)
    if not abs(got - want) <= tol * scale:
        fail("autograd.value", call=what, got=f"{got:.10g}", want=f"{want:.10g}",
             error=f"{abs(got - want) / scale:.3g}", tol=f"{tol:g}")


def check_manual_value(worker, params, X, Y, w) -> None:
    what = f"manual_grad({describe_inputs(X, w)})"
    obs = call(worker, "manual_grad", what, X=X, Y=Y, w=w)
    bad = scalar_type(obs)
    if bad:
        fail("manual.not_float", call=what, got_type=bad)
    got = obs["value"]
    want, scale = true_grad(X, Y, w)
    tol = tolerance(params, X)
    if abs(got - want) <= tol * scale:
        if obs["inputs_changed"]:
            fail("manual.inputs_changed", call=what)
        return
    n = X.shape[0]
    for key, candidate in (("manual.no_two", want / 2), ("manual.sum", want * n)):
        if abs(want) > 1e-6 and n > 1 and abs(got - candidate) <= 1e-6 * max(1.0, abs(candidate)):
            fail(key, call=what, got=f"{got:.10g}", want=f"{want:.10g}")
    fail("manual.value", call=what, got=f"{got:.10g}", want=f"{want:.10g}",
         error=f"{abs(got - want) / scale:.3g}", tol=f"{tol:g}")


@points(3)
def test_autograd_lesson(worker, params):
    """autograd_grad on the lesson's X = [1, 2, 3, 4], Y = 2X at w = 0 gives -30.0"""
    X, Y = line_data(4)
    check_autograd_value(worker, params, X, Y, params.autograd.lesson_w)


@points(3)
def test_manual_lesson(worker, params):
    """manual_grad (NumPy, the hand formula) on the lesson's data at w = 0 gives -30.0"""
    X, Y = line_data(4)
    check_manual_value(worker, params, X.astype(np.float64), Y.astype(np.float64), params.autograd.lesson_w)


@points(2)
def test_plain_floats(worker, params):
    """autograd_grad and manual_grad both return exactly a Python float (not a tensor or np.float64)"""
    X, Y = line_data(4)
    X64, Y64 = X.astype(np.float64), Y.astype(np.float64)
    autograd_once(worker, X64, Y64, 0.5)
    what = f"manual_grad({describe_inputs(X64, 0.5)})"
    obs = call(worker, "manual_grad", what, X=X64, Y=Y64, w=0.5)
    bad = scalar_type(obs)
    if bad:
        fail("manual.not_float", call=what, got_type=bad)
