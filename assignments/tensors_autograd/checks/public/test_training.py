"""Public checks of task training: the loop returns float losses, accuracy is right, TUNED works."""

from __future__ import annotations

import numpy as np

from autograder.graders import call, fail, points, scalar_type

from ..support import (
    accuracy_range,
    classification_losses,
    linear_state,
    logits,
    number,
    toy_data,
    varied_state,
)

GRAPH_HINTS = {"element 0 of tensors does not require grad": "training.no_graph_in_loop"}


def run_train(worker, params, epochs: int, lr: float, seed: int, types: bool = False):
    """train's losses as float64 values, whatever types they come in; with `types`, the list, its
    length and its float items are judged too (losses_are_floats' business, not the trajectory's)."""
    T = params.training
    X, y = toy_data(T.toy_n, T.toy_seed)
    what = f"train(model, X, y, {epochs}, {lr})"
    state = linear_state(seed, T.sizes)
    obs = call(worker, "training_train", what, GRAPH_HINTS, sizes=list(T.sizes), state=state,
               X=X, y=y, epochs=epochs, lr=lr)
    if obs["len"] is None:
        fail("training.losses_type", call=what, got_type=obs["type"])
    if types and obs["len"] != epochs:
        fail("training.loss_count", call=what, got=obs["len"], epochs=epochs)
    bad = sorted({t for t in obs["types"] if t != "float"})
    if bad and (types or any(v is None for v in obs["values"])):
        fail("training.loss_item", call=what, types=", ".join(bad), graphs=obs["graphs"])
    if types:
        check_first_loss(obs["values"], state, X, y, what, params.tol.loss)
    return np.array(obs["values"], dtype=np.float64), what


def check_first_loss(values: list, state, X, y, what: str, tol: float) -> None:
    """The losses are the model's: the first is its loss at the (hidden) initial weights, which every
    loop gives before its first step (which loss, cross-entropy or a slip, is the trajectory's business)."""
    wants = classification_losses(logits(state, X), y)
    first = values[0] if values else None
    if first is None or not any(abs(first - want) <= tol * max(1.0, want) for want in wants):
        fail("training.first_loss", call=what, got=first, want=f"{wants[0]:.6f}")


def run_accuracy(worker, params, seed: int, p_drop: float = 0.0, calls: int = 1, types: bool = False):
    """accuracy on the grader's model of hidden weights (`seed`); the eval accuracy those weights give,
    computed here (the range that float32 rounding of near-ties allows), is what it must return. The
    values are read whatever their type; with `types`, a float is required (accuracy_value's business)."""
    T = params.training
    X, y = toy_data(T.toy_n, T.toy_seed)
    what = "accuracy(model, X, y)" + (f", Dropout({p_drop:g}), model.training == True" if p_drop else "")
    state = varied_state(seed, T.sizes, X)
    obs = call(worker, "training_accuracy", what, sizes=list(T.sizes), state=state, X=X, y=y,
               p_drop=p_drop, calls=calls)
    for r in obs["results"]:
        bad = scalar_type(r)
        r["value"] = number(r)
        if (bad and types) or r["value"] is None:
            fail("training.accuracy_not_float", call=what, got_type=bad)
    return obs, accuracy_range(state, X, y), what


def accuracy_ok(got: float, want: tuple[float, float], tol: float) -> bool:
    return want[0] - tol <= got <= want[1] + tol


def show_want(want: tuple[float, float]) -> str:
    return f"{want[0]:.6g}" if want[0] == want[1] else f"{want[0]:.6g} to {want[1]:.6g}"


def check_accuracy(worker, params, seed: int, types: bool = False) -> dict:
    obs, want, what = run_accuracy(worker, params, seed, types=types)
    got = obs["results"][0]["value"]
    if not accuracy_ok(got, want, params.tol.accuracy):
        fail("training.accuracy_value", call=what, got=f"{got:.6g}", want=show_want(want))
    return obs


@points(3)
def test_losses_are_floats(worker, params):
    """train(model, X, y, 4, 0.05) returns a list of 4 plain Python floats (loss.item())

    From hidden initial weights: the first float must be the cross-entropy there."""
    run_train(worker, params, params.training.short_epochs, 0.05, params.training.init_seed, types=True)


@points(3)
def test_accuracy_value(worker, params):
    """accuracy(model, X, y) is the float fraction of rows where model(X).argmax(1) == y

    Of a model of hidden weights, whose accuracy is computed here."""
    check_accuracy(worker, params, params.training.accuracy_seeds[0], types=True)


def tuned_items(worker, params, max_epochs: int | None = None) -> tuple[int, int, float]:
    """TUNED's hidden, epochs and lr, after its form is checked (epochs up to `max_epochs`, by default
    the exercise's limit, which is tuned_form's business, like the exact types: tuned trains with any
    whole numbers it can afford)."""
    T = params.training
    form = max_epochs is None
    max_epochs = max_epochs or T.tuned_max_epochs
    obs = call(worker, "training_tuned", "TUNED")
    if obs["items"] is None:
        fail("training.tuned_type", got_type=obs["type"])
    items = obs["items"]
    missing = [k for k in ("hidden", "epochs", "lr") if k not in items]
    if missing:
        fail("training.tuned_keys", missing=", ".join(missing), got=", ".join(items) or "{}")
    kinds = {"hidden": ("int",), "epochs": ("int",), "lr": ("float", "int")}
    for key, allowed in kinds.items():
        value = items[key]["value"]
        whole = key == "lr" or (value is not None and float(value).is_integer())
        if items[key]["type"] not in allowed and (form or value is None or not whole):
            fail("training.tuned_value_type", name=key, got_type=items[key]["type"],
                 want=" or ".join(allowed))
    hidden, epochs, lr = (items[k]["value"] for k in ("hidden", "epochs", "lr"))
    hidden, epochs = int(hidden), int(epochs)
    if not 1 <= hidden <= 512 or not 1 <= epochs <= max_epochs or not 0 < lr <= 10:
        fail("training.tuned_range", hidden=hidden, epochs=epochs, lr=lr, max_epochs=max_epochs)
    return hidden, epochs, float(lr)


@points(2)
def test_tuned_form(worker, params):
    """TUNED is a dict with an int hidden, an int epochs <= 300 and a positive lr"""
    tuned_items(worker, params)


@points(2)
def test_accuracy_no_graph(worker, params):
    """accuracy builds no autograd graph (torch.no_grad())

    The value must be the accuracy of the model's hidden weights (roughly: within one row)."""
    obs, want, what = run_accuracy(worker, params, params.training.accuracy_seeds[1])
    if obs["results"][0]["graph_nodes"]:
        fail("training.accuracy_graph", call=what, nodes=obs["results"][0]["graph_nodes"])
    got = obs["results"][0]["value"]
    if not accuracy_ok(got, want, 1.0 / params.training.toy_n):
        fail("training.accuracy_value", call=what, got=f"{got:.6g}", want=show_want(want))


def bias_gradient(z: np.ndarray, y: np.ndarray, first_loss) -> np.ndarray:
    """The gradient, at logits `z`, of the loss the loop reported first (the classification loss
    whose value it is: which loss is right is the trajectory's business) with respect to fc2.bias,
    which shifts a column of the logits: central differences in float64."""
    losses = classification_losses(z, y)
    k = 0 if first_loss is None else int(np.argmin([abs(v - first_loss) for v in losses]))
    step = 1e-6
    grad = np.zeros(z.shape[1])
    for j in range(z.shape[1]):
        shift = np.zeros(z.shape[1])
        shift[j] = step
        up, down = classification_losses(z + shift, y)[k], classification_losses(z - shift, y)[k]
        grad[j] = (up - down) / (2 * step)
    return grad


@points(2)
def test_zero_grad(worker, params):
    """Each optimizer.step() of train uses its own epoch's gradient: zero_grad() before backward()

    The points rest on a value: from hidden initial weights, the first backward pass's gradient of fc2.bias
    is the gradient of the loop's first loss there."""
    T = params.training
    X, y = toy_data(T.toy_n, T.toy_seed)
    epochs = T.short_epochs
    what = f"train(model, X, y, {epochs}, 0.05)"
    state = linear_state(T.init_seed, T.sizes)
    obs = call(worker, "training_train", what, GRAPH_HINTS, sizes=list(T.sizes), state=state, X=X, y=y,
               epochs=epochs, lr=0.05)
    for step_no, seen in enumerate(obs["grad_steps"], start=1):
        if seen == "stale":
            fail("training.stale_gradients", call=what, step=step_no)
        if seen == "cleared":
            fail("training.cleared_gradients", call=what, step=step_no)
    first = obs["values"][0] if obs["values"] else None
    want = bias_gradient(logits(state, X), y, first)
    got = obs["first_grad"]
    values = got.get("values") if type(got) is dict else None
    if values is None or values.shape != want.shape or not np.allclose(
            values.astype(np.float64), want, rtol=params.tol.loss, atol=params.tol.loss):
        shown = "None" if values is None else np.round(values, 6).tolist()
        fail("training.first_gradient", call=what, got=shown, want=np.round(want, 6).tolist())
