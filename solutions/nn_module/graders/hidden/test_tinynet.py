"""Hidden checks of task tinynet: random sizes, the forward formula, the loss trajectory, accuracy."""

from __future__ import annotations

import functools

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from autograder.checks import fail, points
from autograder.compare import close, describe, fmt_shape, require_array

from ..challenges import inputs, judge_output, tinynet_outputs
from ..params import default
from ..public.test_tinynet import judge_challenge, structure
from ..support import call, load_problem, mlp_state, rng, toy_data
from . import _ref

SUPER_HINT = {"Module.__init__() call": "tinynet.super_init"}
size = st.integers(1, default().tinynet.max_random_size)
EXPLICIT = (5, 7, 3)  # random_sizes' explicit example


def _state(seed: int, i: int, h: int, o: int) -> dict[str, np.ndarray]:
    return mlp_state(seed, [("fc1", i, h), ("fc2", h, o)])


@points(2)
@given(i=size, h=size, o=size)
@example(i=EXPLICIT[0], h=EXPLICIT[1], o=EXPLICIT[2])
def test_random_sizes(worker, params, challenge, i, h, o):
    """For random sizes, TinyNet(i, h, o) has fc1.weight (h, i), fc2.weight (o, h) and the right count

    The points rest on a run: hidden weights of those sizes, loaded by name, give fc2(relu(fc1(x)))."""
    # The explicit example carries the challenge (hypothesis runs it first, every time): one run
    # with hidden weights is what a forged structure cannot answer; each costs a forward pass.
    obs = structure(worker, (i, h, o), challenge if (i, h, o) == EXPLICIT else None)
    names = list(params.tinynet.names)
    if not obs["is_module"]:
        fail("tinynet.not_module", got_type=obs["model_type"])
    if obs["names"] != names:
        fail("tinynet.names", names=obs["names"] or "nothing", want=names)
    bad = [f"{n}: {t}" for n, t in zip(obs["names"], obs["types"], strict=True) if t != "Parameter"]
    if bad:
        fail("tinynet.param_types", bad=", ".join(bad))
    want = [(h, i), (h,), (o, h), (o,)]
    for name, got, shape in zip(names, obs["shapes"], want, strict=True):
        if tuple(got) != shape:
            fail("tinynet.shape", name=name, got_shape=fmt_shape(got), want_shape=fmt_shape(shape),
                 sizes=f"TinyNet({i}, {h}, {o})")
    count = h * i + h + o * h + o
    if obs["count"] != count:
        fail("tinynet.count", sizes=f"TinyNet({i}, {h}, {o})", got=obs["count"], want=count)
    if obs["challenge"] is not None:
        judge_challenge(obs, (i, h, o), params)


@points(2)
def test_forward_formula(worker, params):
    """With given weights, TinyNet's forward equals fc2(relu(fc1(x))) within float32 tolerance, also N = 1"""
    P = params.tinynet
    tol = params.tol.float32
    for k, sizes in enumerate(P.forward_sizes):
        state = _state(P.forward_seed + k, *sizes)
        x = rng(P.forward_seed + 100 + k).normal(0, 1.5, (P.forward_batch, sizes[0])).astype(np.float32)
        xs = [x, x[:1]]  # a batch, and N = 1
        obs = call(worker, "tinynet_forward", f"TinyNet{tuple(sizes)}(x)", SUPER_HINT, sizes=list(sizes),
                   state=state, xs=xs)
        detail = load_problem(obs["load"])
        if detail:
            fail("tinynet.forward_load", sizes=f"TinyNet{tuple(sizes)}", detail=detail)
        for x_n, out in zip(xs, obs["outs"], strict=True):
            what = f"TinyNet{tuple(sizes)}(x) for x of shape {fmt_shape(x_n.shape)}"
            got = require_array(out, what, (len(x_n), sizes[2]))
            want = tinynet_outputs(state, x_n)  # the formula and the slips forward_formula names
            if close(got, want["right"], tol):
                continue
            for variant in ("no_relu", "relu_after"):
                if close(got, want[variant], tol):
                    fail(f"tinynet.{variant}", call=what)
            fail("tinynet.forward_values", call=what, error=describe(got, want["right"]))


@functools.lru_cache(maxsize=8)
def reference_losses(params, epochs: int, lr: float, seed: int,
                     variant: str = "reference") -> tuple[float, ...]:
    """The lesson's trajectory from the same weights and data (or a diagnosed wrong loop)."""
    import torch

    P = params.tinynet
    X, y = toy_data(P.toy_n, P.toy_seed)
    state = _state(seed, *P.sizes)
    model = _ref.module("tinynet", params).TinyNet(*P.sizes)
    model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in state.items()})
    return train_as_lesson(model, torch.from_numpy(X.copy()), torch.from_numpy(y.copy()), epochs, lr, variant)


def train_as_lesson(model, X, y, epochs: int, lr: float, variant: str = "reference") -> tuple[float, ...]:
    """The lesson's loop with torch.optim.Adam (or plain SGD), each update written out exactly as
    torch's own CPU step does it: the grading process never imports torch.optim, whose first
    optimizer loads the whole compiler stack (torch._dynamo, ~2 s in every grading process)."""
    import torch

    params = list(model.parameters())
    exp_avg = [torch.zeros_like(p) for p in params]
    exp_avg_sq = [torch.zeros_like(p) for p in params]
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    losses = []
    for step in range(1, epochs + 1):
        if variant != "no_zero_grad":
            for p in params:
                p.grad = None  # zero_grad() sets gradients to None
        loss = torch.nn.functional.cross_entropy(model(X), y)
        loss.backward()
        with torch.no_grad():
            for p, m, v in zip(params, exp_avg, exp_avg_sq, strict=True):
                if variant == "sgd":
                    p.add_(p.grad, alpha=-lr)
                    continue
                m.lerp_(p.grad, 1 - beta1)
                v.mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
                denom = (v.sqrt() / (1 - beta2 ** float(step)) ** 0.5).add_(eps)
                p.addcdiv_(m, denom, value=-(lr / (1 - beta1 ** float(step))))
        losses.append(loss.item())
    return tuple(losses)


@points(2)
def test_trajectory(worker, params):
    """From the same weights and data, train_tinynet's losses equal the reference's (Adam, zero_grad)

    Both paths of the signature: epochs and lr passed, and the defaults (epochs=100, lr=0.05)."""
    P = params.tinynet
    epochs, lr, tol = P.trajectory_epochs, P.trajectory_lr, params.tol.loss
    X, y = toy_data(P.toy_n, P.toy_seed)
    sizes = list(P.sizes)
    state = _state(P.init_seed, *sizes)
    what = f"train_tinynet(model, X, y, {epochs}, {lr})"
    obs = call(worker, "tinynet_train", what, sizes=sizes, state=state, X=X, y=y, epochs=epochs, lr=lr)
    if obs["len"] != epochs:
        fail("tinynet.loss_count", call=what, got=obs["len"], epochs=epochs)
    if any(v is None for v in obs["values"]):
        fail("tinynet.loss_item", call=what, types=", ".join(sorted(set(obs["types"]))))
    got = np.array(obs["values"], dtype=np.float64)
    want = np.array(reference_losses(params, epochs, lr, P.init_seed))
    if close(got, want, tol):
        judge_default_lr(worker, params)
        return
    for variant in ("no_zero_grad", "sgd"):
        if close(got, np.array(reference_losses(params, epochs, lr, P.init_seed, variant)), tol):
            fail(f"tinynet.trajectory_{variant}", call=what, got=_first(got), want=_first(want))
    differ = int(np.argmax(np.abs(got - want) > tol * np.maximum(1, np.abs(want))))
    fail("tinynet.trajectory", call=what, epoch=differ, got=_first(got), want=_first(want),
         error=describe(got, want))


def judge_default_lr(worker, params) -> None:
    """train_tinynet(model, X, y) without epochs and lr: its first epochs follow the reference
    trajectory with lr = P.lr, the signature's default (the probe stops the loop after them)."""
    P = params.tinynet
    X, y = toy_data(P.toy_n, P.toy_seed)
    what = "train_tinynet(model, X, y) with the default epochs and lr"
    k = P.default_lr_epochs
    obs = call(worker, "tinynet_default_lr", what, sizes=list(P.sizes), state=_state(P.init_seed, *P.sizes),
               X=X, y=y, epochs=k)
    got = np.array(obs["losses"], dtype=np.float64)
    if not len(got):  # the losses are read in a forward hook: model(X) never ran through __call__
        fail("tinynet.forward_hook", call=what, calls=0, epochs=P.epochs)
    want = np.array(reference_losses(params, k, P.lr, P.init_seed))
    if len(got) != k or not close(got, want, params.tol.loss):
        bad = np.abs(got - want[:len(got)]) > params.tol.loss * np.maximum(1, np.abs(want[:len(got)]))
        differ = int(np.argmax(bad)) if bad.any() else len(got)
        fail("tinynet.default_trajectory", call=what, epoch=differ, got=_first(got), want=_first(want),
             lr=P.lr)


def _first(values: np.ndarray, n: int = 5) -> str:
    return "[" + ", ".join(f"{v:.5f}" for v in values[:n]) + (", ...]" if len(values) > n else "]")


@points(2)
def test_accuracy(worker, params, challenge):
    """{p.tinynet.label} trained with train_tinynet's defaults reaches accuracy >= 0.9 on make_toy()

    On this default-arguments path the losses are plain floats too, and model(X) runs every epoch.
    The points rest on the trained model: its outputs, on make_toy() and on inputs only the grader
    knows, are what its own trained weights give."""
    P = params.tinynet
    X, y = toy_data(P.toy_n, P.toy_seed)
    sizes = list(P.sizes)
    what = f"train_tinynet({P.label}, X, y)"
    x_hidden = inputs(challenge.rng(*sizes), 32, sizes[0])
    obs = call(worker, "tinynet_accuracy", what, SUPER_HINT, sizes=sizes, X=X, y=y, seed=P.accuracy_seed,
               x_hidden=x_hidden)
    if obs["len"] != P.epochs:
        fail("tinynet.default_epochs", call=what, got=obs["len"], epochs=P.epochs)
    what = f"{what} with the default epochs and lr"
    bad = [t for t in obs["types"] if t != "float"]
    if obs["losses_type"] != "list" or bad:
        fail("tinynet.loss_item", call=what, types=", ".join(bad or [obs["losses_type"]]))
    if obs["hook_calls"] < P.epochs:
        fail("tinynet.forward_hook", call=what, calls=obs["hook_calls"], epochs=P.epochs)
    logits = require_array(obs["logits"], "model(X) after training", (P.toy_n, P.out_features))
    accuracy = float(np.mean(np.argmax(logits, axis=1) == y))
    if accuracy < P.accuracy:
        fail("tinynet.accuracy", accuracy=f"{accuracy:.2f}", want=f"{P.accuracy:.2f}", model=P.label)
    weights = {k: v["values"] for k, v in obs["weights"].items() if v.get("values") is not None}
    run = {"load": {"error": None, "missing": [k for k in P.names if k not in weights], "unexpected": []},
           "raised": None, "outs": [obs["logits"], obs["hidden_logits"]]}
    complete = not run["load"]["missing"]
    wants = [tinynet_outputs(weights, X), tinynet_outputs(weights, x_hidden)] if complete else []
    judge_output(run, wants, params.tol.float32, f"the trained {P.label}(x)",
                 "fc2(relu(fc1(x))) with its trained weights", P.names, key="tinynet.trained_outputs")
