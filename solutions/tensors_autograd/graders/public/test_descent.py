"""Public checks of task descent: fit_line learns w = 2 on the lesson's line; sgd_step is SGD's step."""

from __future__ import annotations

from typing import Any

import numpy as np

from autograder.graders import call, fail, points, scalar_type

from ..support import line_data, number, rng, short

FIT_HINTS = {"leaf Variable that requires grad": "descent.update_in_graph",
             "a view of a leaf Variable": "descent.update_in_graph",
             "does not require grad": "descent.requires_grad",
             "NoneType": "descent.grad_none"}
SGD_HINTS = {"leaf Variable that requires grad": "descent.sgd_in_graph",
             "a view of a leaf Variable": "descent.sgd_in_graph",
             "NoneType": "descent.sgd_none_grad"}


def fit(worker, X: np.ndarray, Y: np.ndarray, lr: float | None = None, steps: int | None = None,
        types: bool = False, count: bool = False):
    """fit_line's (w, losses) as float64 values, whatever types they come in; with `types`, the types
    are judged too (a float w, a list of float losses), with `count` the number of losses. Each is one
    check's business (line_defaults, lr_and_steps_honoured); the others judge the values."""
    args = "X, Y" if lr is None else f"X, Y, lr={lr:.6g}, steps={steps}"
    what = f"fit_line({args}), X.dtype == Y.dtype == {X.dtype.name}"
    obs = call(worker, "descent_fit_line", what, FIT_HINTS, X=X, Y=Y, lr=lr, steps=steps)
    if obs["len"] != 2:
        fail("descent.pair", call=what, got_type=obs["type"], got_len=obs["len"])
    bad = scalar_type(obs["w"])
    w = number(obs["w"])
    if (bad and types) or w is None:
        fail("descent.w_not_float", call=what, got_type=bad)
    losses = obs["losses"]
    if losses["len"] is None:
        fail("descent.losses_type", call=what, got_type=losses["type"])
    want_len = steps if steps is not None else 100
    if count and losses["len"] != want_len:
        fail("descent.loss_count", call=what, got=losses["len"], steps=want_len)
    bad_types = sorted({t for t in losses["types"] if t != "float"})
    if bad_types and (types or any(v is None for v in losses["values"])):
        fail("descent.loss_item", call=what, types=", ".join(bad_types))
    return w, np.array(losses["values"], dtype=np.float64), what


def sgd(worker, values: list[np.ndarray], grads: list[np.ndarray | None], lr: float,
        parameters: list[bool]) -> tuple[dict[str, Any], str]:
    kinds = ", ".join(("nn.Parameter" if p else "leaf tensor") + ("" if g is not None else " (grad None)")
                      for p, g in zip(parameters, grads, strict=True))
    what = f"sgd_step([{kinds}], lr={lr:.6g})"
    obs = call(worker, "descent_sgd_step", what, SGD_HINTS,
               values=values, grads=grads, lr=lr, parameters=parameters)
    return obs, what


def expected_sgd(values, grads, lr):
    """What torch.optim.SGD(params, lr).step() does on CPU: p.add_(grad, alpha=-lr), same dtype."""
    import torch

    out = []
    for v, g in zip(values, grads, strict=True):
        p = torch.from_numpy(np.array(v, copy=True))
        if g is not None:
            p.add_(torch.from_numpy(np.array(g, copy=True)), alpha=-lr)
        out.append(p.numpy())
    return out


def check_sgd(worker, params, values, grads, lr, parameters, outcomes: bool = False) -> dict[str, Any]:
    """sgd_step's values against SGD's step; with `outcomes`, any of the usual outcomes passes (the
    update done, not done, or added): a check of something else (the contract) needs only that the
    values are what some step of these hidden values gives."""
    obs, what = sgd(worker, values, grads, lr, parameters)
    want = expected_sgd(values, grads, lr)
    for k, (got, exp, v, g) in enumerate(zip(obs["values"], want, values, grads, strict=True)):
        tol = params.tol.sgd64 if v.dtype == np.float64 else params.tol.sgd32
        if g is None:
            if not np.array_equal(got, v):
                fail("descent.sgd_touched_none", call=what, index=k)
            continue
        scale = np.maximum(np.abs(v.astype(np.float64)), np.abs(lr * g.astype(np.float64)))
        v64, step = v.astype(np.float64), lr * g.astype(np.float64)
        err, same, added = (_off(got, target, scale) for target in (exp.astype(np.float64), v64, v64 + step))
        if outcomes and min(err, same, added) <= tol:
            continue
        if err > tol:
            unchanged = np.array_equal(got, v)
            key = "descent.sgd_unchanged" if unchanged else "descent.sgd_values"
            fail(key, call=what, index=k, got=short(got.ravel()), want=short(exp.ravel()),
                 error=f"{err:.3g}")
    return obs


def _off(got: np.ndarray, target: np.ndarray, scale: np.ndarray) -> float:
    return float((np.abs(got.astype(np.float64) - target) / np.maximum(scale, 1e-30)).max())


def hidden_line(gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float]:
    """A hidden exact line Y = a X (float32, like make_line's) that lr=0.01 learns well within 100 steps:
    each step shrinks the error of w by |1 - 0.02 mean(X**2)| <= 0.9, and 0.9**100 * 3 < 1e-4."""
    while True:
        X = gen.uniform(0.5, 4.5, int(gen.integers(3, 7))).astype(np.float32)
        if 5.0 <= float(np.mean(X.astype(np.float64) ** 2)) <= 40.0:
            break
    a = float(np.float32(round(float(gen.uniform(-3, 3)), 2)))
    return X, (a * X).astype(np.float32), a


@points(4)
def test_line_defaults(worker, params, challenge):
    """fit_line(*make_line()) with the defaults returns (w, 100 float losses) and w within 1e-3 of 2.0

    Also on a hidden line y = a x: the defaults learn its slope a just as well."""
    D = params.descent
    X, Y = line_data(D.line_n)
    cases = [(X, Y, D.target_w), hidden_line(challenge.rng("line"))]
    for X, Y, target in cases:
        w, losses, what = fit(worker, X, Y, types=True, count=True)
        if not abs(w - target) <= D.target_tol:
            fail("descent.not_learned", call=what, got=f"{w:.6g}", want=f"{target:g}",
                 losses=short(losses))


@points(3)
def test_sgd_step(worker, params):
    """sgd_step([p], lr) updates p exactly as torch.optim.SGD([p], lr).step() does"""
    gen = rng(params.descent.seed)
    values = [gen.normal(size=(3, 2)).astype(np.float32), gen.normal(size=(4,)).astype(np.float32)]
    grads = [gen.normal(size=(3, 2)).astype(np.float32), gen.normal(size=(4,)).astype(np.float32)]
    obs = check_sgd(worker, params, values, grads, 0.1, [True, True])
    if obs["result_type"] != "NoneType":
        fail("descent.sgd_returns", call="sgd_step(params, lr)", got_type=obs["result_type"])
