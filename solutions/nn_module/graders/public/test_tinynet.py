"""Public checks of task tinynet: registration, weight shapes, the loop's return value and model(X)."""

from __future__ import annotations

from autograder.checks import fail, points
from autograder.compare import fmt_shape

from ..support import call, mlp_state, toy_data

SUPER_HINT = {"Module.__init__() call": "tinynet.super_init"}


def structure(worker, sizes):
    return call(worker, "tinynet_structure", f"TinyNet{tuple(sizes)}", SUPER_HINT,
                in_features=sizes[0], hidden=sizes[1], out_features=sizes[2])


def expected_shapes(i: int, h: int, o: int) -> list[tuple[int, ...]]:
    return [(h, i), (h,), (o, h), (o,)]


def train_short(worker, params):
    """train_tinynet on the grader's TinyNet for a few epochs (used by two checks)."""
    tp = params.tinynet
    X, y = toy_data(tp.toy_n, tp.toy_seed)
    sizes = (tp.in_features, tp.hidden, tp.out_features)
    state = mlp_state(tp.init_seed, [("fc1", sizes[0], sizes[1]), ("fc2", sizes[1], sizes[2])])
    what = f"train_tinynet(model, X, y, {tp.short_epochs}, {tp.lr})"
    obs = call(worker, "tinynet_train", what, sizes=list(sizes), state=state, X=X, y=y,
               epochs=tp.short_epochs, lr=tp.lr)
    return obs, what


@points(2)
def test_registration(worker, params):
    """TinyNet is an nn.Module whose parameters are exactly fc1.weight, fc1.bias, fc2.weight, fc2.bias"""
    tp = params.tinynet
    obs = structure(worker, (tp.in_features, tp.hidden, tp.out_features))
    if not obs["is_module"]:
        fail("tinynet.not_module", got_type=obs["model_type"])
    if obs["names"] != list(tp.names):
        fail("tinynet.names", names=obs["names"] or "nothing", want=list(tp.names))
    bad = [f"{n}: {t}" for n, t in zip(obs["names"], obs["types"], strict=True) if t != "Parameter"]
    if bad:
        fail("tinynet.param_types", bad=", ".join(bad))


@points(2)
def test_weight_shapes(worker, params):
    """{p.tinynet.weights_title}: nn.Linear keeps (out, in)"""
    tp = params.tinynet
    sizes = (tp.in_features, tp.hidden, tp.out_features)
    obs = structure(worker, sizes)
    want = expected_shapes(*sizes)
    got = {n: tuple(s) for n, s in zip(obs["names"], obs["shapes"], strict=True)}
    for name, shape in zip(tp.names, want, strict=True):
        if name not in got:
            fail("tinynet.names", names=obs["names"] or "nothing", want=list(tp.names))
        if got[name] != shape:
            fail("tinynet.shape", name=name, got_shape=fmt_shape(got[name]), want_shape=fmt_shape(shape),
                 sizes=f"TinyNet{sizes}")


@points(2)
def test_losses_are_floats(worker, params):
    """train_tinynet returns a list with one plain Python float per epoch"""
    tp = params.tinynet
    obs, what = train_short(worker, params)
    if obs["type"] != "list":
        fail("tinynet.losses_type", call=what, got_type=obs["type"])
    if obs["len"] != tp.short_epochs:
        fail("tinynet.loss_count", call=what, got=obs["len"], epochs=tp.short_epochs)
    bad = sorted({t for t in obs["types"] if t != "float"})
    if bad:
        fail("tinynet.loss_item", call=what, types=", ".join(bad))


@points(1)
def test_calls_model(worker, params):
    """train_tinynet runs the forward pass as model(X), so forward hooks fire every epoch"""
    tp = params.tinynet
    obs, what = train_short(worker, params)
    if obs["hook_calls"] < tp.short_epochs:
        fail("tinynet.forward_hook", call=what, calls=obs["hook_calls"], epochs=tp.short_epochs)
