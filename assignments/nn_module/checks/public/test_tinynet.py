"""Public checks of task tinynet: registration, weight shapes, the loop's return value and model(X)."""

from __future__ import annotations

import numpy as np

from autograder.checks import fail, points
from autograder.compare import close, fmt_shape

from ..challenges import inputs, judge_output, linear_state, once_per_task, tinynet_outputs
from ..support import call, toy_data

SUPER_HINT = {"Module.__init__() call": "tinynet.super_init"}


def structure(worker, sizes, challenge) -> dict:
    """What TinyNet(i, h, o) registers, and the challenge (None: without): hidden weights loaded
    through those names, the model run on a hidden batch."""
    i, h, o = sizes
    if challenge is None:
        return call(worker, "tinynet_structure", f"TinyNet{tuple(sizes)}", SUPER_HINT,
                    in_features=i, hidden=h, out_features=o)
    gen = challenge.shared("tinynet.structure").rng(*sizes)  # registration and weight_shapes share it
    state = linear_state(gen, [("fc1", i, h), ("fc2", h, o)])
    xs = [inputs(gen, 6, i)]
    obs = once_per_task(worker, "tinynet_structure", f"TinyNet{tuple(sizes)}", SUPER_HINT,
                        in_features=i, hidden=h, out_features=o, state=state, xs=xs)
    obs["expected"] = [tinynet_outputs(state, x) for x in xs]
    return obs


def judge_challenge(obs: dict, sizes, params) -> None:
    """The registered parameters are the ones forward uses: fc2(relu(fc1(x))) with the hidden weights."""
    i, h, o = sizes
    judge_output(obs["challenge"], obs["expected"], params.tol.float32, f"TinyNet{tuple(sizes)}(x)",
                 f"fc2(relu(fc1(x))) with fc1 = nn.Linear({i}, {h}), fc2 = nn.Linear({h}, {o})",
                 params.tinynet.names)


def expected_shapes(i: int, h: int, o: int) -> list[tuple[int, ...]]:
    return [(h, i), (h,), (o, h), (o,)]


def train_short(worker, params, challenge):
    """train_tinynet on the grader's TinyNet for a few epochs (used by two checks), from hidden
    initial weights: the first loss it returns must be the cross-entropy there (judge_first_loss)."""
    tp = params.tinynet
    X, y = toy_data(tp.toy_n, tp.toy_seed)
    sizes = tp.sizes
    state = linear_state(challenge.rng(*sizes), [("fc1", sizes[0], sizes[1]), ("fc2", sizes[1], sizes[2])])
    what = f"train_tinynet(model, X, y, {tp.short_epochs}, {tp.lr})"
    obs = call(worker, "tinynet_train", what, sizes=list(sizes), state=state, X=X, y=y,
               epochs=tp.short_epochs, lr=tp.lr)
    logits = tinynet_outputs(state, X)["right"]
    top = logits.max(axis=1, keepdims=True)
    log_z = np.log(np.exp(logits - top).sum(axis=1)) + top[:, 0]
    obs["first_loss"] = float(np.mean(log_z - logits[np.arange(len(y)), y]))
    return obs, what


def judge_first_loss(obs: dict, what: str, params) -> None:
    """The losses are the model's: the first equals the cross-entropy at the hidden initial weights."""
    first = obs["values"][0] if obs["values"] else None
    if first is None or not close(np.array([first]), np.array([obs["first_loss"]]), params.tol.loss):
        fail("tinynet.first_loss", call=what, got=first, want=f"{obs['first_loss']:.6f}")


@points(2)
def test_registration(worker, params, challenge):
    """TinyNet is an nn.Module whose parameters are exactly fc1.weight, fc1.bias, fc2.weight, fc2.bias

    The points rest on a run: hidden weights loaded through those names give fc2(relu(fc1(x)))."""
    tp = params.tinynet
    obs = structure(worker, tp.sizes, challenge)
    if not obs["is_module"]:
        fail("tinynet.not_module", got_type=obs["model_type"])
    if obs["names"] != list(tp.names):
        fail("tinynet.names", names=obs["names"] or "nothing", want=list(tp.names))
    bad = [f"{n}: {t}" for n, t in zip(obs["names"], obs["types"], strict=True) if t != "Parameter"]
    if bad:
        fail("tinynet.param_types", bad=", ".join(bad))
    judge_challenge(obs, tp.sizes, params)


@points(2)
def test_weight_shapes(worker, params, challenge):
    """{p.tinynet.weights_title}: nn.Linear keeps (out, in)

    The points rest on a run: hidden weights of those shapes, loaded by name, give fc2(relu(fc1(x)))."""
    tp = params.tinynet
    sizes = tp.sizes
    obs = structure(worker, sizes, challenge)
    want = expected_shapes(*sizes)
    got = {n: tuple(s) for n, s in zip(obs["names"], obs["shapes"], strict=True)}
    for name, shape in zip(tp.names, want, strict=True):
        if name not in got:
            fail("tinynet.names", names=obs["names"] or "nothing", want=list(tp.names))
        if got[name] != shape:
            fail("tinynet.shape", name=name, got_shape=fmt_shape(got[name]), want_shape=fmt_shape(shape),
                 sizes=f"TinyNet{sizes}")
    judge_challenge(obs, sizes, params)


@points(2)
def test_losses_are_floats(worker, params, challenge):
    """train_tinynet returns a list with one plain Python float per epoch

    The points rest on a value: from hidden initial weights, the first loss is the cross-entropy there."""
    tp = params.tinynet
    obs, what = train_short(worker, params, challenge)
    if obs["type"] != "list":
        fail("tinynet.losses_type", call=what, got_type=obs["type"])
    if obs["len"] != tp.short_epochs:
        fail("tinynet.loss_count", call=what, got=obs["len"], epochs=tp.short_epochs)
    bad = sorted({t for t in obs["types"] if t != "float"})
    if bad:
        fail("tinynet.loss_item", call=what, types=", ".join(bad))
    judge_first_loss(obs, what, params)


@points(1)
def test_calls_model(worker, params, challenge):
    """train_tinynet runs the forward pass as model(X), so forward hooks fire every epoch

    The points rest on a value: from hidden initial weights, the first loss is the cross-entropy there."""
    tp = params.tinynet
    obs, what = train_short(worker, params, challenge)
    if obs["hook_calls"] < tp.short_epochs:
        fail("tinynet.forward_hook", call=what, calls=obs["hook_calls"], epochs=tp.short_epochs)
    judge_first_loss(obs, what, params)
