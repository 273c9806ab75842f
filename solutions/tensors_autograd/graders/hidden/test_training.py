"""Hidden checks of task training: the loss trajectory, accuracy on random models and dropout, TUNED."""

from __future__ import annotations

import functools

import numpy as np

from autograder.graders import fail, note, points

from ..public.test_training import (
    accuracy_ok,
    check_accuracy,
    run_accuracy,
    run_train,
    show_want,
    tuned_items,
)
from ..support import linear_state, short, toy_data
from ._loop import lesson_tinynet, train_as_lesson


@functools.lru_cache(maxsize=8)
def reference_losses(params, epochs: int, lr: float, seed: int, variant: str = "reference"):
    import torch

    T = params.training
    X, y = (torch.from_numpy(a) for a in toy_data(T.toy_n, T.toy_seed))
    model = lesson_tinynet(*T.sizes)
    model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in linear_state(seed, T.sizes).items()})
    return np.array(train_as_lesson(model, X, y, epochs, lr, variant))


@points(4)
def test_trajectory(worker, params):
    """From the same weights and data, train's losses equal the reference's (zero_grad, Adam, lr passed)

    Judged on the epochs it ran (how many is losses_are_floats' business), whatever type the losses
    come in; the losses of a loop without zero_grad() pass with a note (zero_grad's business)."""
    T = params.training
    epochs, lr, tol = T.trajectory_epochs, T.trajectory_lr, params.tol.loss
    got, what = run_train(worker, params, epochs, lr, T.init_seed)
    ran = max(1, min(len(got), epochs))
    got = got[:ran]
    want = reference_losses(params, epochs, lr, T.init_seed)[:ran]
    scale = np.maximum(1.0, np.abs(want))
    if len(got) == ran and np.all(np.abs(got - want) <= tol * scale):
        return
    if len(got) < ran:
        fail("training.loss_count", call=what, got=len(got), epochs=epochs)
    stale = reference_losses(params, epochs, lr, T.init_seed, "no_zero_grad")[:ran]
    if len(got) == ran and np.all(np.abs(got - stale) <= tol * scale):
        # The loop without zero_grad(): a stale gradient is test_zero_grad's to charge, once.
        note("common.note_other_check", check="training.zero_grad",
             detail=f"{what} gave the losses of a loop without optimizer.zero_grad()")
        return
    for variant in ("sgd", "fresh_adam"):
        other = reference_losses(params, epochs, lr, T.init_seed, variant)[:ran]
        if np.all(np.abs(got - other) <= tol * scale):
            fail(f"training.trajectory_{variant}", call=what, got=short(got), want=short(want))
    if np.all(np.abs(got - reference_losses(params, epochs, 0.05, T.init_seed)[:ran]) <= tol * scale):
        fail("training.trajectory_lr", call=what, got=short(got), want=short(want), lr=lr)
    epoch = int(np.argmax(np.abs(got - want) > tol * scale))
    fail("training.trajectory", call=what, got=short(got), want=short(want), epoch=epoch)


@points(2)
def test_accuracy_random(worker, params):
    """accuracy equals the reference's (within 1e-6) for several random models"""
    for seed in params.training.accuracy_seeds[1:]:
        check_accuracy(worker, params, seed)


@points(3)
def test_accuracy_dropout(worker, params):
    """With Dropout(0.5) left in train mode, accuracy gives the eval-mode answer, twice the same"""
    T = params.training
    obs, want, what = run_accuracy(worker, params, T.dropout_seed, p_drop=T.dropout_p, calls=2)
    got = [r["value"] for r in obs["results"]]
    if not all(accuracy_ok(g, want, params.tol.accuracy) for g in got):
        fail("training.accuracy_train_mode", call=what, got=", ".join(f"{g:.6g}" for g in got),
             want=show_want(want))


def tuned_accuracy(params, hidden: int, epochs: int, lr: float) -> float:
    """TinyNet(3, hidden, 2) after torch.manual_seed(0), trained with the reference's loop on make_toy()."""
    import torch

    T = params.training
    X, y = (torch.from_numpy(a) for a in toy_data(T.toy_n, T.toy_seed))
    torch.manual_seed(T.tuned_seed)
    model = lesson_tinynet(3, hidden, 2)
    train_as_lesson(model, X, y, epochs, lr)
    with torch.no_grad():
        return float((model(X).argmax(1) == y).float().mean().item())


@points(4)
def test_tuned(worker, params):
    """TUNED's TinyNet, seeded with torch.manual_seed(0) and trained on make_toy(), reaches accuracy > 0.9"""
    T = params.training
    hidden, epochs, lr = tuned_items(worker, params, max_epochs=10 * T.tuned_max_epochs)
    acc = tuned_accuracy(params, hidden, epochs, lr)
    if not acc > T.tuned_accuracy:
        fail("training.tuned_accuracy", hidden=hidden, epochs=epochs, lr=lr, accuracy=f"{acc:.2f}",
             want=f"{T.tuned_accuracy:.2f}")
