"""Hidden checks of task tinynet: the forward formula, the loss trajectory, accuracy."""

from __future__ import annotations

import numpy as np

from autograder.graders import close, describe, fail, fmt_shape, points, require_array

from ..challenges import judge_loaded, judge_output, tinynet_outputs
from ..public.test_tinynet import epochs_run, train_defaults
from ..support import call, mlp_state, rng, toy_data
from . import _ref

SUPER_HINT = {"Module.__init__() call": "tinynet.super_init"}


def _state(seed: int, i: int, h: int, o: int) -> dict[str, np.ndarray]:
    return mlp_state(seed, [("fc1", i, h), ("fc2", h, o)])


@points(2)
def test_forward_formula(worker, params):
    """With given weights, TinyNet's forward equals fc2(relu(fc1(x))) within float32 tolerance, also N = 1

    The weights go into fc1 and fc2 (or, when the layers have other names, into the two nn.Linear
    layers of those shapes), and forward is compared with the formula on what those layers hold."""
    P = params.tinynet
    tol = params.tol.float32
    for k, sizes in enumerate(P.forward_sizes):
        state = _state(P.forward_seed + k, *sizes)
        x = rng(P.forward_seed + 100 + k).normal(0, 1.5, (P.forward_batch, sizes[0])).astype(np.float32)
        xs = [x, x[:1]]  # a batch, and N = 1
        obs = call(worker, "tinynet_forward", f"TinyNet{tuple(sizes)}(x)", SUPER_HINT, sizes=list(sizes),
                   state=state, xs=xs)
        held = judge_loaded(obs["load"], state, "tinynet.forward_load", sizes=f"TinyNet{tuple(sizes)}")
        for x_n, out in zip(xs, obs["outs"], strict=True):
            what = f"TinyNet{tuple(sizes)}(x), x.shape == {fmt_shape(x_n.shape)}"
            got = require_array(out, what, (len(x_n), sizes[2]))
            want = tinynet_outputs(held, x_n)  # the formula and the slips forward_formula names
            if close(got, want["right"], tol):
                continue
            for variant in ("no_relu", "relu_after"):
                if close(got, want[variant], tol):
                    fail(f"tinynet.{variant}", call=what)
            fail("tinynet.forward_values", call=what, error=describe(got, want["right"]))


_TRAJECTORIES: dict[tuple, tuple[float, ...]] = {}


def reference_losses(params, epochs: int, lr: float, state: dict[str, np.ndarray],
                     variant: str = "reference") -> tuple[float, ...]:
    """The lesson's trajectory from the same weights and data (or a diagnosed wrong loop)."""
    import torch

    P = params.tinynet
    key = (P.sizes, P.toy_n, P.toy_seed, epochs, lr, variant,
           tuple((k, v.tobytes()) for k, v in sorted(state.items())))
    if key not in _TRAJECTORIES:
        if len(_TRAJECTORIES) > 32:
            _TRAJECTORIES.clear()
        X, y = toy_data(P.toy_n, P.toy_seed)
        model = _ref.module("tinynet", params).TinyNet(*P.sizes)
        model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in state.items()})
        _TRAJECTORIES[key] = train_as_lesson(model, torch.from_numpy(X.copy()), torch.from_numpy(y.copy()),
                                             epochs, lr, variant)
    return _TRAJECTORIES[key]


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
        if variant == "cleared":  # zero_grad() between backward() and step(): Adam skips every param
            losses.append(loss.item())
            continue
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


def grad_variant(obs: dict) -> str:
    """Which gradients the loop's optimizer steps used, as the probe saw them: the lesson's ("reference"),
    every epoch's added up ("no_zero_grad") or none ("cleared"). Which is right is the zero_grad check's
    business: the trajectory and the accuracy are judged against the lesson's loop with the same
    gradients, so a stale or cleared gradient is charged once, there."""
    steps = obs.get("grad_steps") or []
    if steps and all(state == "cleared" for state in steps):
        return "cleared"
    if "stale" in steps and "cleared" not in steps:
        return "no_zero_grad"
    return "reference"


def trajectory_seen(obs: dict, epochs: int) -> np.ndarray:
    """The losses a training run went through: what the forward hook saw on each new set of weights
    (so the values do not depend on what train_tinynet returns), or, when model(X) never ran through
    __call__ (the calls_model check's business), the values it returned. As many as the epochs it
    ran (at most `epochs`): a loop that ran fewer epochs is the losses_are_floats check's business."""
    values = obs["hook_losses"] if obs["hook_calls"] else [v for v in obs["values"] if v is not None]
    return np.array(values[:min(epochs, epochs_run(obs, epochs))], dtype=np.float64)


def judge_trajectory(got: np.ndarray, ran: int, params, state, epochs: int, lr: float, what: str,
                     default: bool = False, variant: str = "reference") -> None:
    """`got` (at least `ran` values) follows the reference trajectory from `state`, with the gradients
    the loop's steps used (`variant`, see grad_variant); slips named."""
    tol = params.tol.loss
    want = np.array(reference_losses(params, epochs, lr, state, variant))[:max(ran, 1)]
    if variant == "cleared":
        want = want[:1]  # the weights never change: the forward hook sees one set of weights
    if len(got) == len(want) and close(got, want, tol):
        return
    if default:
        bad = np.abs(got - want[:len(got)]) > tol * np.maximum(1, np.abs(want[:len(got)]))
        differ = int(np.argmax(bad)) if bad.any() else len(got)
        fail("tinynet.default_trajectory", call=what, epoch=differ, got=_first(got), want=_first(want),
             lr=lr)
    if variant == "reference":
        other = np.array(reference_losses(params, epochs, lr, state, "sgd"))[:len(want)]
        if len(got) == len(other) and close(got, other, tol):
            fail("tinynet.trajectory_sgd", call=what, got=_first(got), want=_first(want))
    if len(got) < len(want):
        fail("tinynet.weights_unchanged", call=what, changes=max(len(got) - 1, 0), epochs=len(want))
    differ = int(np.argmax(np.abs(got - want) > tol * np.maximum(1, np.abs(want))))
    fail("tinynet.trajectory", call=what, epoch=differ, got=_first(got), want=_first(want),
         error=describe(got, want))


@points(1)
def test_trajectory(worker, params, challenge):
    """From the same weights and data, train_tinynet's losses equal the reference's (Adam, zero_grad)

    Both paths of the signature: epochs and lr passed, and the defaults (epochs=100, lr=0.05). The
    losses are those of the model's successive forward passes (a forward hook records them), so what
    train_tinynet returns, and how many epochs it runs, are other checks' business; so is the gradient
    each step uses (zero_grad's): the reference takes the gradients the loop's own steps took."""
    P = params.tinynet
    epochs, lr = P.trajectory_epochs, P.trajectory_lr
    X, y = toy_data(P.toy_n, P.toy_seed)
    sizes = list(P.sizes)
    state = _state(P.init_seed, *sizes)
    what = f"train_tinynet(model, X, y, {epochs}, {lr})"
    obs = call(worker, "tinynet_train", what, sizes=sizes, state=state, X=X, y=y, epochs=epochs, lr=lr)
    judge_trajectory(trajectory_seen(obs, epochs), min(epochs, epochs_run(obs, epochs)), params, state,
                     epochs, lr, what, variant=grad_variant(obs))
    obs, what = train_defaults(worker, params, challenge)
    k = P.default_lr_epochs
    judge_trajectory(trajectory_seen(obs, P.epochs)[:k], min(k, epochs_run(obs, P.epochs)), params,
                     obs["state"], k, P.lr, what, default=True, variant=grad_variant(obs))


def _first(values: np.ndarray, n: int = 5) -> str:
    return "[" + ", ".join(f"{v:.5f}" for v in values[:n]) + (", ...]" if len(values) > n else "]")


def accuracy_bar(params, state: dict[str, np.ndarray], variant: str) -> float:
    """The accuracy the trained model must reach: the contract's, or, for a loop whose steps used
    stale or no gradients (the zero_grad check's business), what the lesson's loop with the same
    gradients reaches from the same weights, less two rows (its 100 steps need not round alike)."""
    P = params.tinynet
    if variant == "reference":
        return P.accuracy
    import torch

    X, y = toy_data(P.toy_n, P.toy_seed)
    model = _ref.module("tinynet", params).TinyNet(*P.sizes)
    model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in state.items()})
    train_as_lesson(model, torch.from_numpy(X.copy()), torch.from_numpy(y.copy()), P.epochs, P.lr, variant)
    with torch.no_grad():
        reached = float((model(torch.from_numpy(X.copy())).argmax(1).numpy() == y).mean())
    return min(P.accuracy, reached - 2.0 / len(y))


@points(1)
def test_accuracy(worker, params, challenge):
    """{p.tinynet.label} trained with train_tinynet's defaults reaches accuracy >= 0.9 on make_toy()

    The grader's own TinyNet, from hidden initial weights, so that TinyNet's checks judge TinyNet.
    A loop whose steps use stale or no gradients is the zero_grad check's business: its model must
    reach what the lesson's loop with the same gradients reaches. The points rest on the trained
    model: its outputs, on make_toy() and on inputs only the grader knows, are what its own trained
    weights give."""
    P = params.tinynet
    X, y = toy_data(P.toy_n, P.toy_seed)
    obs, what = train_defaults(worker, params, challenge)
    logits = require_array(obs["logits"], f"train_tinynet({P.label}, X, y); model(X)",
                           (P.toy_n, P.out_features))
    accuracy = float(np.mean(np.argmax(logits, axis=1) == y))
    bar = accuracy_bar(params, obs["state"], grad_variant(obs))
    if accuracy < bar:
        fail("tinynet.accuracy", accuracy=f"{accuracy:.2f}", want=f"{bar:.2f}", model=P.label)
    weights = {k: v["values"] for k, v in obs["weights"].items() if v.get("values") is not None}
    run = {"raised": None, "outs": [obs["logits"], obs["hidden_logits"]]}
    if any(k not in weights for k in P.names):
        fail("tinynet.trained_outputs", call=f"{P.label}(x)", error="state_dict() == {}",
             model="fc2(relu(fc1(x)))")
    wants = [tinynet_outputs(weights, X), tinynet_outputs(weights, obs["x_hidden"])]
    judge_output(run, wants, params.tol.float32, f"{P.label}(x)",
                 "fc2(relu(fc1(x)))", key="tinynet.trained_outputs")
