"""Public checks of task autograd: the gradient (lesson and hidden data) by autograd and by hand."""

from __future__ import annotations

import numpy as np

from autograder.graders import call, fail, points, scalar_type

from ..support import line_data, number

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


def autograd_once(worker, X, Y, w, calls=1, types: bool = False):
    """autograd_grad `calls` times; each result's value read whatever its type (a float is the
    plain_floats check's business: `types` judges it)."""
    what = f"autograd_grad({describe_inputs(X, w)})"
    obs = call(worker, "autograd_grad", what, GRAD_HINTS, X=X, Y=Y, w=w, calls=calls)
    for r in obs["results"]:
        bad = scalar_type(r)
        if bad and types:
            fail("autograd.not_float", call=what, got_type=bad)
        r["value"] = number(r)
        if r["value"] is None:
            fail("autograd.not_float", call=what, got_type=bad)
    return obs, what


def hidden_data(gen: np.random.Generator, dtype: type = np.float64, n: int | None = None):
    """X, Y near a line and a w, all drawn from a challenge generator (inputs nobody knows in advance)."""
    n = int(gen.integers(3, 12)) if n is None else n
    X = gen.normal(0, 2, n).astype(dtype)
    Y = (gen.uniform(-3, 3) * X + gen.normal(0, 1, n)).astype(dtype)
    return X, Y, round(float(gen.uniform(-2, 2)), 3)


def check_roughly(values: list[float], X, Y, w, what: str, key: str = "autograd.value",
                  slips: tuple[float, ...] = ()) -> None:
    """The tie of a check about something else (types, a backward pass, no left-over): the value must be
    the derivative at these hidden inputs, loosely (a float32 w on float64 data passes), or a known slip
    (`slips`: factors of the derivative; a left-over gradient: a second call adds exactly the derivative)."""
    want, scale = true_grad(X, Y, w)
    tol = 1e-4 * scale
    candidates = [want] + [f * want for f in slips]
    if any(abs(values[0] - c) <= tol for c in candidates):
        return
    if len(values) > 1 and abs(want) > 1e-2 * scale and abs(values[1] - values[0] - want) <= tol:
        return
    fail(key, call=what, got=f"{values[0]:.10g}", want=f"{want:.10g}",
         error=f"{abs(values[0] - want) / scale:.3g}", tol="1e-4")


def sum_slip(X: np.ndarray) -> tuple[float, ...]:
    """The derivative of a summed loss, n times the mean's: autograd_lesson's to charge, so the checks
    of something else let it pass."""
    return (float(X.shape[0]),)


def check_autograd_value(worker, params, X, Y, w, calls: int = 1) -> None:
    """With calls=2, a left-over gradient (the second call adds exactly the derivative) is let pass:
    that slip is test_no_leftover_and_inputs_kept's to charge, not every value check's after the first."""
    obs, what = autograd_once(worker, X, Y, w, calls)
    got = obs["results"][0]["value"]
    want, scale = true_grad(X, Y, w)
    tol = tolerance(params, X)
    added = obs["results"][1]["value"] - got if calls > 1 else None
    if added is not None and abs(want) > 1e-2 * scale and abs(added - want) <= 1e-4 * scale:
        return
    if not abs(got - want) <= tol * scale:
        fail("autograd.value", call=what, got=f"{got:.10g}", want=f"{want:.10g}",
             error=f"{abs(got - want) / scale:.3g}", tol=f"{tol:g}")


def check_manual_value(worker, params, X, Y, w) -> None:
    what = f"manual_grad({describe_inputs(X, w)})"
    obs = call(worker, "autograd_manual_grad", what, X=X, Y=Y, w=w)
    got = number(obs)  # whatever its type: a float is the plain_floats check's business
    if got is None:
        fail("manual.not_float", call=what, got_type=scalar_type(obs))
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


def sweep_data(gen: np.random.Generator, max_n: int, k: int):
    """k hidden (X, Y, w) of float64 and float32 in turn, 1 to max_n values each. w is at least 0.5 from
    the line's slope and |x| >= 0.5, so the derivative is never near zero (a second call's increase then
    tells a left-over gradient apart, which is no_leftover_and_inputs_kept's to charge)."""
    for j in range(k):
        dtype = np.float64 if j % 2 == 0 else np.float32
        n = int(gen.integers(1, max_n + 1))
        X = gen.uniform(0.5, 3, n) * gen.choice([-1.0, 1.0], n)
        a = float(gen.uniform(-2, 2))
        w = a + float(gen.choice([-1.0, 1.0])) * float(gen.uniform(0.5, 2))
        Y = a * X + gen.normal(0, 0.05, n)
        yield X.astype(dtype), Y.astype(dtype), round(w, 3)


@points(7)
def test_autograd_lesson(worker, params, challenge):
    """autograd_grad on the lesson's X = [1, 2, 3, 4], Y = 2X at w = 0 gives -30.0, and on hidden data

    The one check of autograd_grad's value (one slip, one charge): on the lesson's line and on a sweep of
    hidden float32 and float64 data (float64 within 1e-12: w must have X's dtype)."""
    X, Y = line_data(4)
    check_autograd_value(worker, params, X, Y, params.autograd.lesson_w)
    check_autograd_value(worker, params, *hidden_data(challenge.rng("line"), np.float32), calls=2)
    for X, Y, w in sweep_data(challenge.rng("sweep"), params.autograd.max_n, 12):
        check_autograd_value(worker, params, X, Y, w, calls=2)


@points(6)
def test_manual_lesson(worker, params, challenge):
    """manual_grad (NumPy, the hand formula) on the lesson's data at w = 0 gives -30.0, and on hidden data

    The one check of manual_grad's value (one slip, one charge): the lesson's data, then a sweep of
    hidden float32 and float64 data; X and Y must stay unchanged."""
    X, Y = line_data(4)
    check_manual_value(worker, params, X.astype(np.float64), Y.astype(np.float64), params.autograd.lesson_w)
    check_manual_value(worker, params, *hidden_data(challenge.rng("line")))
    for X, Y, w in sweep_data(challenge.rng("sweep"), params.autograd.max_n, 12):
        check_manual_value(worker, params, X, Y, w)


@points(2)
def test_plain_floats(worker, params, challenge):
    """autograd_grad and manual_grad both return exactly a Python float (not a tensor or np.float64)

    Of hidden inputs: the floats must be (roughly) the derivative there; the exact value is other checks'."""
    X, Y, w = hidden_data(challenge.rng("data"))
    obs, what = autograd_once(worker, X, Y, w, calls=2, types=True)
    check_roughly([r["value"] for r in obs["results"]], X, Y, w, what, slips=sum_slip(X))
    what = f"manual_grad({describe_inputs(X, w)})"
    obs = call(worker, "autograd_manual_grad", what, X=X, Y=Y, w=w)
    bad = scalar_type(obs)
    if bad:
        fail("manual.not_float", call=what, got_type=bad)
    check_roughly([obs["value"]], X, Y, w, what, "manual.value", slips=(0.5, float(X.shape[0])))
