"""Public checks of task tinynet: registration, weight shapes and count, the losses, model(X), zero_grad."""

from __future__ import annotations

import numpy as np

from autograder.graders import close, fail, fmt_shape, judge_layers, points, pools, returned_per_step

from ..challenges import inputs, linear_state, once_per_task, tinynet_outputs
from ..support import call, classification_losses, toy_data

SUPER_HINT = {"Module.__init__() call": "tinynet.super_init"}


def structure(worker, sizes, challenge) -> dict:
    """What TinyNet(i, h, o) registers; with a challenge, the hidden run too (`drawn`: its inputs)."""
    i, h, o = sizes
    what = f"TinyNet{tuple(sizes)}"
    if challenge is None:
        return call(worker, "tinynet_structure", what, SUPER_HINT, in_features=i, hidden=h, out_features=o)
    drawn = pools(challenge.shared("tinynet.structure").rng(*sizes))  # registration, weight_shapes: one run
    obs = once_per_task(worker, "tinynet_structure", what, SUPER_HINT, in_features=i, hidden=h,
                        out_features=o, **drawn)
    obs["drawn"] = drawn
    return obs


def judge_run(obs: dict, sizes, params, need=("fc1", "fc2")) -> None:
    """Each registered nn.Linear computes x @ W.T + b with the hidden values loaded into it."""
    judge_layers(obs["run"], obs["drawn"], params.tol.float32, f"TinyNet{tuple(sizes)}", need)


def expected_shapes(i: int, h: int, o: int) -> list[tuple[int, ...]]:
    return [(h, i), (h,), (o, h), (o,)]


def train_short(worker, params, challenge):
    """train_tinynet on the grader's TinyNet for a few epochs from hidden initial weights (one run that
    losses_are_floats and calls_model share): what it returned and what the forward hook saw."""
    tp = params.tinynet
    X, y = toy_data(tp.toy_n, tp.toy_seed)
    sizes = tp.sizes
    gen = challenge.shared("tinynet.short").rng(*sizes)
    state = linear_state(gen, [("fc1", sizes[0], sizes[1]), ("fc2", sizes[1], sizes[2])])
    what = f"train_tinynet(model, X, y, {tp.short_epochs}, {tp.lr})"
    obs = once_per_task(worker, "tinynet_train", what, sizes=list(sizes), state=state, X=X, y=y,
                        epochs=tp.short_epochs, lr=tp.lr)
    obs["initial"] = tinynet_outputs(state, X)["right"]
    return obs, what


def train_defaults(worker, params, challenge):
    """train_tinynet(model, X, y) with its default arguments on the grader's TinyNet from hidden initial
    weights (one run that four checks share): what it returned, what the hook saw, the trained model."""
    tp = params.tinynet
    X, y = toy_data(tp.toy_n, tp.toy_seed)
    sizes = tp.sizes
    gen = challenge.shared("tinynet.defaults").rng(*sizes)
    state = linear_state(gen, [("fc1", sizes[0], sizes[1]), ("fc2", sizes[1], sizes[2])], scale=1.0)
    x_hidden = inputs(gen, 32, sizes[0])
    what = f"train_tinynet({tp.label}, X, y)"
    obs = once_per_task(worker, "tinynet_train", what, sizes=list(sizes), state=state, X=X, y=y,
                        x_hidden=x_hidden)
    obs.update(state=state, x_hidden=x_hidden)
    return obs, what


def judge_floats(obs: dict, what: str, epochs: int) -> None:
    """A list of `epochs` plain Python floats."""
    if obs["type"] != "list":
        fail("tinynet.losses_type", call=what, got_type=obs["type"])
    if obs["len"] != epochs:
        fail("tinynet.loss_count", call=what, got=obs["len"], epochs=epochs)
    bad = sorted({t for t in obs["types"] if t != "float"})
    if bad:
        fail("tinynet.loss_item", call=what, types=", ".join(bad))


def epochs_run(obs: dict, epochs: int) -> int:
    """How many epochs the loop says it ran: one loss each (the count is losses_are_floats' business),
    or `epochs` when it returned no list."""
    return obs["len"] if obs["len"] else epochs


def judge_hooks(obs: dict, what: str, epochs: int) -> None:
    """model(X) ran, through __call__, at least once for every epoch the loop ran."""
    ran = epochs_run(obs, epochs)
    if obs["hook_calls"] < max(1, ran):
        fail("tinynet.forward_hook", call=what, calls=obs["hook_calls"], epochs=ran)


@points(2)
def test_registration(worker, params, challenge):
    """TinyNet is an nn.Module whose parameters are exactly fc1.weight, fc1.bias, fc2.weight, fc2.bias

    The points rest on a run: hidden values loaded through those names, fc1 and fc2 each compute
    x @ W.T + b with them."""
    tp = params.tinynet
    obs = structure(worker, tp.sizes, challenge)
    if not obs["is_module"]:
        fail("tinynet.not_module", got_type=obs["model_type"])
    if sorted(obs["names"]) != sorted(tp.names):  # in any order: fc2 may be assigned before fc1
        fail("tinynet.names", names=obs["names"] or "[]", want=list(tp.names))
    bad = [f"{n}: {t}" for n, t in zip(obs["names"], obs["types"], strict=True) if t != "Parameter"]
    if bad:
        fail("tinynet.param_types", bad=", ".join(bad))
    judge_run(obs, tp.sizes, params)


def in_role_order(layers: list, prefixes) -> list:
    """The model's nn.Linear layers ([name, weight shape, bias shape]) in the contract's order: by
    name when they have the contract's names, otherwise in the order the model registers them."""
    by_name = {layer[0]: layer for layer in layers}
    if sorted(by_name) == sorted(prefixes):
        return [by_name[p] for p in prefixes]
    return layers


def judge_linear_shapes(obs: dict, sizes) -> None:
    """The model's two registered nn.Linear layers are (in, hidden) and (hidden, out)."""
    i, h, o = sizes
    layers = in_role_order(obs["linears"], ("fc1", "fc2"))
    shown = ", ".join(f"{name} {fmt_shape(w)}" for name, w, _ in layers) or "none"
    if len(layers) != 2:
        fail("tinynet.linears", sizes=f"TinyNet{tuple(sizes)}", count=len(layers), layers=shown)
    for (name, weight, bias), (want_w, want_b) in zip(layers, [((h, i), (h,)), ((o, h), (o,))], strict=True):
        if tuple(weight) != want_w:
            fail("tinynet.shape", name=f"{name}.weight", got_shape=fmt_shape(weight),
                 want_shape=fmt_shape(want_w), sizes=f"TinyNet{tuple(sizes)}")
        if bias is not None and tuple(bias) != want_b:
            fail("tinynet.shape", name=f"{name}.bias", got_shape=fmt_shape(bias),
                 want_shape=fmt_shape(want_b), sizes=f"TinyNet{tuple(sizes)}")


def judge_count(obs: dict, sizes) -> None:
    """TinyNet(i, h, o) has h*i + h + o*h + o parameters."""
    i, h, o = sizes
    count = h * i + h + o * h + o
    if obs["count"] != count:
        fail("tinynet.count", sizes=f"TinyNet({i}, {h}, {o})", got=obs["count"], want=count)


def swept_sizes(gen, params) -> list[tuple[int, int, int]]:
    """Sizes other than the lesson's: the edges (all 1, a hidden layer narrower than the output) and
    sizes drawn from the check's challenge in 1..max_random_size."""
    top = params.tinynet.max_random_size
    drawn = [tuple(int(v) for v in gen.integers(1, top + 1, 3)) for _ in range(10)]
    return [(1, 1, 1), (5, 7, 3), (4, 2, 6), (top, top, top), *drawn]


@points(4)
def test_weight_shapes(worker, params, challenge):
    """{p.tinynet.weights_title}: nn.Linear keeps (out, in); other sizes too, with the right count

    One check for the sizes and the count (one slip, one charge): the lesson's sizes and a sweep of
    others, some drawn in secret. Judged on the model's two nn.Linear layers (by name, or else in
    the order it registers them: the names are the registration check's business). The points rest
    on a run: hidden values of those shapes, loaded into them, give x @ W.T + b."""
    tp = params.tinynet
    obs = structure(worker, tp.sizes, challenge)
    judge_linear_shapes(obs, tp.sizes)
    judge_count(obs, tp.sizes)
    judge_run(obs, tp.sizes, params, need=())
    for sizes in swept_sizes(challenge.rng("sizes"), params):
        obs = structure(worker, sizes, None)
        judge_linear_shapes(obs, sizes)
        judge_count(obs, sizes)


def judge_returned_losses(obs: dict, what: str, y: np.ndarray, tol: float) -> None:
    """Loss k of what train_tinynet returned is loss.item() of its own epoch k: the mean cross-entropy
    of the forward pass the loop made on its k-th weights (seen by the forward hook; epoch 0's is the
    model's output at the hidden initial weights, computed here, so a forged list earns nothing), only
    epoch 0 when model(X) never went through the hook (calls_model's business). Judged against
    the loop's own passes, not the reference's run: how it trains is the trajectory's business, and so
    is a loss whose gradients differ from cross-entropy's; only the sum, which Adam cannot tell from
    the mean, is not accepted (a constant factor leaves Adam's steps as they were)."""
    # epoch 0's pass is the model at the hidden initial weights, computed here: the points rest on it
    passes = [obs["initial"], *obs["hook_logits"][1:]]
    seen = [classification_losses(np.asarray(logits), y) for logits in passes]
    accept = set(seen[0]) - {"cross_entropy_sum"}
    # the probe keeps the logits of the first passes only: the epochs after them are not judged; with
    # no pass seen, only the first loss can be judged (on the initial weights)
    limit = len(passes) if len(obs["hook_losses"]) > len(passes) or not obs["hook_logits"] else None
    wrong = returned_per_step(obs["values"], seen, "cross_entropy", accept, tol, limit)
    if wrong is not None:
        fail("tinynet.returned_loss", call=what, epoch=wrong.step, got=wrong.got, want=f"{wrong.want:.6f}")


@points(2)
def test_losses_are_floats(worker, params, challenge):
    """train_tinynet returns a list with one plain Python float per epoch: that epoch's loss.item()

    With epochs passed, and with the default epochs=100. The points rest on values: from hidden
    initial weights, loss k is the cross-entropy of the loop's own forward pass of epoch k."""
    tp = params.tinynet
    X, y = toy_data(tp.toy_n, tp.toy_seed)
    obs, what = train_short(worker, params, challenge)
    judge_floats(obs, what, tp.short_epochs)
    judge_returned_losses(obs, what, y, params.tol.loss)
    obs, what = train_defaults(worker, params, challenge)
    judge_floats(obs, what, tp.epochs)
    obs["initial"] = tinynet_outputs(obs["state"], X)["right"]
    judge_returned_losses(obs, what, y, params.tol.loss)


@points(1)
def test_calls_model(worker, params, challenge):
    """train_tinynet runs the forward pass as model(X), so forward hooks fire every epoch

    With epochs passed, and with the defaults. The points rest on a value: the first forward pass,
    from hidden initial weights, gives the model's output there."""
    tp = params.tinynet
    obs, what = train_short(worker, params, challenge)
    judge_hooks(obs, what, tp.short_epochs)
    X, y = toy_data(tp.toy_n, tp.toy_seed)
    want = classification_losses(obs["initial"], y)["cross_entropy"]
    first = obs["hook_losses"][0] if obs["hook_losses"] else None
    if first is None or not close(np.array([first]), np.array([want]), params.tol.loss):
        fail("tinynet.first_forward", call=what, got=first, want=f"{want:.6f}")
    obs, what = train_defaults(worker, params, challenge)
    judge_hooks(obs, what, tp.epochs)


def judge_grad_steps(obs: dict, what: str) -> None:
    """Every optimizer.step() found this epoch's gradient alone in .grad."""
    for number, state in enumerate(obs["grad_steps"], start=1):
        if state == "stale":
            fail("tinynet.stale_gradients", call=what, step=number)
        if state == "cleared":
            fail("tinynet.cleared_gradients", call=what, step=number)


def bias_gradients(logits: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    """The gradient, at `logits`, of each classification loss a loop may compute (which loss is right
    is the trajectory check's business, what the loop returns the losses check's) with respect to
    fc2.bias, which shifts a column of the logits: central differences in float64."""
    step = 1e-6
    names = list(classification_losses(logits, y))
    grads = {name: np.zeros(logits.shape[1]) for name in names}
    for j in range(logits.shape[1]):
        shift = np.zeros(logits.shape[1])
        shift[j] = step
        up = classification_losses(logits + shift, y)
        down = classification_losses(logits - shift, y)
        for name in names:
            grads[name][j] = (up[name] - down[name]) / (2 * step)
    return grads


@points(2)
def test_zero_grad(worker, params, challenge):
    """Each optimizer.step() of train_tinynet uses its own epoch's gradient: zero_grad() before backward()

    With epochs passed, and with the defaults. The points rest on a value: from hidden initial
    weights, the first backward pass's gradient of fc2.bias is the gradient of a classification loss there."""
    tp = params.tinynet
    obs, what = train_short(worker, params, challenge)
    judge_grad_steps(obs, what)
    X, y = toy_data(tp.toy_n, tp.toy_seed)
    wants = bias_gradients(obs["initial"], y)
    want = wants["cross_entropy"]
    got = obs["first_grad"]
    got_values = got.get("values") if type(got) is dict else None
    if got_values is None or got_values.shape != want.shape or not any(
            close(got_values.astype(np.float64), w, params.tol.loss) for w in wants.values()):
        fail("tinynet.first_gradient", call=what,
             got="None" if got_values is None else np.round(got_values, 6).tolist(),
             want=np.round(want, 6).tolist())
    obs, what = train_defaults(worker, params, challenge)
    judge_grad_steps(obs, what)
