"""Hidden checks of task descent: trajectories against the reference, lr and steps, SGD's contract."""

from __future__ import annotations

import functools

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from autograder.graders import fail, note, points

from ..params import default
from ..public.test_descent import check_sgd, fit
from ..support import line_data, rng, short
from . import _ref

P = default().descent
DEFAULT_LR = 0.01  # fit_line's default lr (the task file's signature)


@functools.lru_cache(maxsize=64)
def _reference(X_bytes: bytes, Y_bytes: bytes, dtype: str, lr: float, steps: int,
               variant: str = "reference") -> tuple[float, tuple[float, ...]]:
    import torch

    X = torch.from_numpy(np.frombuffer(X_bytes, dtype=dtype).copy())
    Y = torch.from_numpy(np.frombuffer(Y_bytes, dtype=dtype).copy())
    if variant == "reference":
        w, losses = _ref.module("descent").fit_line(X, Y, lr, steps)
        return w, tuple(losses)
    w = torch.tensor(0.0, dtype=X.dtype, requires_grad=True)  # the gradient is never reset
    losses = []
    for _ in range(steps):
        loss = ((w * X - Y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= lr * w.grad
        losses.append(loss.item())
    return w.item(), tuple(losses)


def reference(X: np.ndarray, Y: np.ndarray, lr: float, steps: int, variant: str = "reference"):
    w, losses = _reference(X.tobytes(), Y.tobytes(), X.dtype.name, lr, steps, variant)
    return w, np.array(losses)


def _matches(got_w, got_losses, want_w, want_losses, tol) -> bool:
    if len(got_losses) != len(want_losses):
        return False
    floor = 1e-6 * float(np.max(np.abs(want_losses))) if len(want_losses) else 0.0
    scale = np.maximum(np.abs(want_losses), max(floor, 1e-300))
    ok_losses = bool(np.all(np.abs(got_losses - want_losses) <= tol * scale))
    return ok_losses and abs(got_w - want_w) <= tol * max(1.0, abs(want_w))


def check_trajectory(worker, params, X, Y, lr, steps) -> None:
    """The losses (and, when it ran `steps` steps, the final w) equal the reference's: how many steps
    it runs, and whether it uses the lr passed, are lr_and_steps_honoured's business, so a loop of
    another length is judged on the steps both ran and the right loop at the default lr passes (a note)."""
    tol = params.tol.descent64 if X.dtype == np.float64 else params.tol.descent32
    w, losses, what = fit(worker, X, Y, lr, steps)
    if not len(losses):
        fail("descent.loss_count", call=what, got=0, steps=steps)
    want_w, want_losses = reference(X, Y, lr, steps)
    ran = len(losses)
    if ran != steps:  # the steps it ran: the losses of those, and w after the last of them
        want_w = reference(X, Y, lr, ran)[0]
        losses, want_losses = losses[:min(ran, steps)], want_losses[:min(ran, steps)]
    if _matches(w, losses, want_w, want_losses, tol):
        return
    if ran == steps and _matches(w, losses, *reference(X, Y, DEFAULT_LR, steps), tol):
        # The right loop at the default lr, not the one passed: lr_and_steps_honoured's to charge, once.
        note("common.note_other_check", check="descent.lr_and_steps_honoured",
             detail=f"{what} ran the steps of lr={DEFAULT_LR:g} (the default), not of lr={lr:.6g}")
        return
    no_reset_w, no_reset = reference(X, Y, lr, steps, "no_reset")
    if steps > 1 and _matches(w, losses, no_reset_w, no_reset, tol):
        fail("descent.no_reset", call=what, got=short(losses), want=short(want_losses))
    if steps > 1 and np.allclose(losses[:-1], want_losses[1:], rtol=tol, atol=0):
        fail("descent.loss_after_update", call=what, got=short(losses), want=short(want_losses))
    differ = int(np.argmax(np.abs(losses - want_losses) > tol * np.maximum(np.abs(want_losses), 1e-300)))
    fail("descent.trajectory", call=what, got=short(losses), want=short(want_losses), step=differ,
         got_w=f"{w:.10g}", want_w=f"{want_w:.10g}")


@points(5)
@given(n=st.integers(1, P.max_n), steps=st.integers(2, P.max_steps), frac=st.floats(0.05, 0.9),
       seed=st.integers(0, 2**16), double=st.booleans())
@example(n=5, steps=20, frac=0.5, seed=3, double=True)
@example(n=5, steps=20, frac=0.5, seed=3, double=False)
def test_trajectory_random(worker, params, n, steps, frac, seed, double):
    """For random data, stable lr and random steps, fit_line's losses and final w equal the reference's"""
    gen = rng(seed)
    dtype = np.float64 if double else np.float32
    X = gen.normal(0, 2, n).astype(dtype)
    Y = (gen.normal(0, 2) * X + gen.normal(0, 1, n)).astype(dtype)
    lr = float(frac / max(float(np.mean(X.astype(np.float64) ** 2)), 1e-3))
    check_trajectory(worker, params, X, Y, lr, steps)


def check_honoured(worker, params, X, Y, lr, steps) -> None:
    """`steps` losses, the first two the reference's: the loss at w = 0, then at the w one step of
    this lr gives (what later steps do is the trajectory check's business)."""
    w, losses, what = fit(worker, X, Y, lr, steps, count=True)
    _, want = reference(X, Y, lr, steps)
    tol = params.tol.descent64 if X.dtype == np.float64 else params.tol.descent32
    first = min(2, steps)
    shifted = steps > first and _matches(0.0, losses[:first], 0.0, want[1:first + 1], tol)  # recorded late
    if not shifted and not _matches(0.0, losses[:first], 0.0, want[:first], tol):
        fail("descent.lr_ignored", call=what, got=short(losses), want=short(want), lr=f"{lr:.6g}")


@points(2)
def test_lr_and_steps_honoured(worker, params, challenge):
    """fit_line(X, Y, lr=0.002, steps=7) on make_line() runs 7 steps of that lr (the reference's losses)

    And a hidden lr and number of steps on make_line(n) of a hidden n. Judged on the number of losses
    and on the first step (its loss after one step of lr is the reference's)."""
    X, Y = line_data(P.line_n)
    check_honoured(worker, params, X, Y, P.honour_lr, P.honour_steps)
    gen = challenge.rng("lr", "steps")
    X, Y = line_data(int(gen.integers(3, 8)))
    lr = round(float(gen.uniform(0.2, 0.9) / np.mean(X.astype(np.float64) ** 2)), 5)
    check_honoured(worker, params, X, Y, lr, int(gen.integers(3, 15)))


@points(3)
def test_sgd_random(worker, params):
    """sgd_step equals torch.optim.SGD's step for float32 and float64 tensors; grad None: left alone"""
    gen = rng(params.descent.seed + 1)
    for dtype, lr in ((np.float64, 0.37), (np.float32, 1.5), (np.float64, 1e-3)):
        shapes = [(2, 5), (5,), (3, 1, 2), ()]
        values = [gen.normal(size=s).astype(dtype) for s in shapes]
        grads = [gen.normal(size=s).astype(dtype) for s in shapes]
        grads[1] = None
        check_sgd(worker, params, values, grads, lr, [True, False, True, False])


@points(3)
def test_sgd_contract(worker, params):
    """After sgd_step the params are the same objects, still leaves that require grad; no graph was built"""
    gen = rng(params.descent.seed + 2)
    values = [gen.normal(size=(3, 3)), gen.normal(size=(3,))]
    grads = [gen.normal(size=(3, 3)), gen.normal(size=(3,))]
    obs = check_sgd(worker, params, values, grads, 0.05, [True, False], outcomes=True)
    what = "sgd_step(params, lr)"
    if obs["result_type"] != "NoneType":
        fail("descent.sgd_returns", call=what, got_type=obs["result_type"])
    if not obs["same_list"]:
        fail("descent.sgd_replaced", call=what)
    if not all(obs["leaves"]) or not all(obs["requires_grad"]):
        fail("descent.sgd_not_leaf", call=what, leaves=obs["leaves"], requires_grad=obs["requires_grad"])
    if obs["graph_nodes"]:
        fail("descent.sgd_graph", call=what, nodes=obs["graph_nodes"])
