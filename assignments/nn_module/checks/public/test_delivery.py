"""Public checks of task delivery: buffers, state_dict keys, parameter count, .double(), output shape."""

from __future__ import annotations

import numpy as np

from autograder.graders import fail, fmt_shape, judge_layers, points, pools, read_back, require_array

from ..challenges import once_per_task
from ..support import call
from .test_tinynet import in_role_order

SUPER_HINT = {"Module.__init__() call": "delivery.super_init"}
WHAT = "DeliveryMLP(x_mean, x_std)"


def hidden_buffers(gen: np.random.Generator, params) -> dict[str, np.ndarray]:
    """x_mean and x_std for the constructor, drawn from `gen`: the model must keep exactly these."""
    width = params.delivery.sizes[0]
    return {"x_mean": gen.uniform(-4, 8, width).astype(np.float32),
            "x_std": gen.uniform(0.5, 3, width).astype(np.float32)}


def structure(worker, params, challenge) -> dict:
    """What DeliveryMLP(x_mean, x_std) registers and keeps, for hidden x_mean and x_std (and the same
    with an explicit p_drop), and the hidden run (`drawn`: its inputs). One run the buffers,
    state_dict_keys and parameter_count checks share."""
    dp = params.delivery
    gen = challenge.shared("delivery.structure").rng(*dp.sizes)
    given = hidden_buffers(gen, params)
    drawn = pools(gen)
    obs = once_per_task(worker, "delivery_structure", WHAT, SUPER_HINT, **given, p_drop=dp.train_p, **drawn)
    obs.update(given=given, drawn=drawn)
    return obs


def _same(found: dict, value: np.ndarray) -> bool:
    got = found.get("values") if type(found) is dict else None
    return got is not None and got.size == value.size and np.array_equal(
        got.astype(np.float64).ravel(), value.astype(np.float64).ravel())


def holder(holders: dict, value: np.ndarray) -> tuple[str, str] | None:
    """Where the model keeps a tensor equal to `value`: ("buffers" | "parameters" | "attributes", name)."""
    for kind in ("buffers", "parameters", "attributes"):
        for name, found in holders[kind].items():
            if _same(found, value):
                return kind, name
    return None


def judge_buffers(holders: dict, given: dict[str, np.ndarray], what: str) -> None:
    """x_mean and x_std, as given, are each held by a registered buffer (whatever its name: the names are
    the state_dict_keys check's business)."""
    used: set[str] = set()
    for name, value in given.items():
        where = holder(holders, value)
        if where is None:
            if name in holders["buffers"]:
                buf = holders["buffers"][name]
                fail("delivery.buffer_value", name=name, call=what, got=_show(buf), want=str(value.tolist()))
            fail("delivery.buffer_missing", name=name, call=what, buffers=list(holders["buffers"]) or "none")
        kind, found = where
        if kind == "parameters":
            fail("delivery.buffer_is_parameter", name=found)
        if kind == "attributes":
            fail("delivery.plain_attribute", name=found, got_type="Tensor")
        if found in used:
            fail("delivery.buffer_missing", name=name, call=what, buffers=list(holders["buffers"]))
        used.add(found)


def _show(found: dict) -> str:
    values = found.get("values") if type(found) is dict else None
    if values is None:
        return f"{found.get('type')} {fmt_shape(found.get('shape', ()))}"
    return str(values.tolist())


@points(2)
def test_buffers(worker, params, challenge):
    """x_mean and x_std are registered buffers (not parameters or plain attributes) with the given values

    Also with an explicit p_drop. The points rest on values: the x_mean and x_std given to the
    constructor are drawn in secret, and registered buffers must hold exactly them; and on a run:
    each registered nn.Linear, loaded with hidden values, computes x @ W.T + b."""
    obs = structure(worker, params, challenge)
    judge_buffers(obs["holders"], obs["given"], WHAT)
    explicit = f"DeliveryMLP(x_mean, x_std, {params.delivery.train_p})"
    judge_buffers(obs["explicit"]["holders"], obs["given"], explicit)
    judge_layers(obs["run"], obs["drawn"], params.tol.float32, WHAT)


def judge_keys(got: list[str], obs: dict, params, what: str) -> None:
    dp = params.delivery
    want = list(dp.keys)
    if sorted(got) == sorted(want):  # in any order: head may be assigned before hidden
        return
    if obs["hidden_type"] in ("list", "tuple"):
        fail("delivery.hidden_list", got_type=obs["hidden_type"], keys=got, hidden=dp.hidden_code)
    if "Dropout" not in obs["modules"] or any(k.startswith("hidden.2.") for k in got):
        fail("delivery.no_dropout", keys=got, modules=", ".join(sorted(set(obs["modules"]))))
    absent = [k for k in want if k not in got]
    if absent and set(absent) <= set(dp.buffers):
        fail("delivery.keys_no_buffers", keys=got, absent=", ".join(absent))
    fail("delivery.keys", call=what, keys=got, want=want)


@points(3)
def test_state_dict_keys(worker, params, challenge):
    """state_dict() keys are exactly x_mean, x_std, hidden.0.*, hidden.3.*, head.*

    Also with an explicit p_drop. The points rest on a run: hidden values loaded through those keys
    read back from the buffers, and each nn.Linear computes x @ W.T + b with its own."""
    dp = params.delivery
    obs = structure(worker, params, challenge)
    judge_keys(obs["state_keys"], obs, params, WHAT)
    judge_keys(obs["explicit"]["state_keys"], obs["explicit"], params,
               f"DeliveryMLP(x_mean, x_std, {dp.train_p})")
    judge_layers(obs["run"], obs["drawn"], params.tol.float32, WHAT, [p for p, _, _ in dp.layers])
    read_back(obs["run"], obs["drawn"], dp.buffers, WHAT)


def judge_count(got: dict, params, what: str) -> None:
    """{n_params} parameters; the model's nn.Linear layers (by name, or else in the order it registers
    them) of the contract's shapes."""
    dp = params.delivery
    if got["count"] != dp.n_params:
        if got["count"] == 0 or got["hidden_type"] in ("list", "tuple"):
            fail("delivery.hidden_list", got_type=got["hidden_type"], keys=got["state_keys"],
                 hidden=dp.hidden_code)
        fail("delivery.count", call=what, got=got["count"], want=dp.n_params, names=got["names"],
             terms=dp.count_terms, layer_sums=dp.layer_sums)
    layers = in_role_order(got["linears"], [p for p, _, _ in dp.layers])
    if len(layers) != len(dp.layers):
        fail("delivery.linears", call=what, count=len(layers), want=len(dp.layers),
             layers=", ".join(f"{n} {fmt_shape(w)}" for n, w, _ in layers) or "none")
    for (name, weight, _), (_, fan_in, fan_out) in zip(layers, dp.layers, strict=True):
        if tuple(weight) != (fan_out, fan_in):
            fail("delivery.shape", name=f"{name}.weight", got_shape=fmt_shape(weight),
                 want_shape=fmt_shape((fan_out, fan_in)), layers=dp.layers_list)


@points(2)
def test_parameter_count(worker, params, challenge):
    """DeliveryMLP has {p.delivery.n_params} parameters, with weights {p.delivery.shapes_text}

    Also with an explicit p_drop; the shapes are those of its nn.Linear layers in the order it
    registers them. The points rest on a run: hidden values of those shapes, loaded into them,
    give x @ W.T + b."""
    obs = structure(worker, params, challenge)
    judge_count(obs, params, WHAT)
    judge_count(obs["explicit"], params, f"DeliveryMLP(x_mean, x_std, {params.delivery.train_p})")
    judge_layers(obs["run"], obs["drawn"], params.tol.float32, WHAT)


def judge_double(got: dict, given: dict[str, np.ndarray], what: str) -> None:
    """After .double(): every state_dict tensor is float64, and so is every tensor the model keeps
    (buffers, persistent or not, and plain tensor attributes, such as x_mean and x_std)."""
    for value in given.values():
        where = holder(got["holders"], value)
        if where is not None and where[0] == "attributes":
            # a plain attribute: the message's idea says so in every language (a value is not translated)
            fail("delivery.double_buffer", call=what, name=where[1], dtype="float32")
    for kind in ("buffers", "attributes"):
        for name, found in got["holders"][kind].items():
            dtype = found.get("dtype")
            if dtype is not None and dtype.startswith("float") and dtype != "float64":
                fail("delivery.double_buffer", call=what, name=name, dtype=dtype)
    wrong = {k: v for k, v in got["state_dtypes"].items() if v != "float64"}
    if wrong:
        fail("delivery.double_dtypes", wrong=f"{what}: " + ", ".join(f"{k}: {v}" for k, v in wrong.items()))


@points(2)
def test_double_converts_buffers(worker, params, challenge):
    """model.double() turns the buffers and every registered weight into float64

    Also with an explicit p_drop. The points rest on a run: float64 values only the grader knows,
    loaded after .double(), read back from the buffers and give each nn.Linear's x @ W.T + b to
    float64 precision (a tensor left in float32 cannot)."""
    dp = params.delivery
    gen = challenge.rng(*dp.sizes)
    given = hidden_buffers(gen, params)
    drawn = pools(gen, float64=True)
    obs = call(worker, "delivery_double", f"{WHAT}.double()", SUPER_HINT, **given, p_drop=dp.train_p, **drawn)
    judge_double(obs, given, f"{WHAT}.double()")
    judge_double(obs["explicit"], given, f"DeliveryMLP(x_mean, x_std, {dp.train_p}).double()")
    run = obs["run"]
    judge_layers(run, drawn, params.tol.float64, f"{WHAT}.double()")
    loaded = {key for key, _ in run["entries"]}
    read_back(run, drawn, [name for name in run["buffers"] if name in loaded], f"{WHAT}.double()")


@points(2)
def test_forward_shape(worker, params, challenge):
    """In eval mode, model(x) is a float32 tensor of shape (N,), for N = 5 and N = 1

    Its values are the hidden check's business. The points rest on a run: each registered nn.Linear,
    loaded with hidden values, computes x @ W.T + b."""
    dp = params.delivery
    gen = challenge.rng(*dp.sizes)
    given = hidden_buffers(gen, params)
    drawn = pools(gen)
    xs = [gen.uniform(0.5, 6.0, (n, dp.sizes[0])).astype(np.float32) for n in (5, 1)]
    obs = call(worker, "delivery_output_shapes", WHAT, SUPER_HINT, **given, xs=xs, **drawn)
    for x, out in zip(xs, obs["outs"], strict=True):
        require_array(out, f"model(x), x.shape == {fmt_shape(x.shape)}", (len(x),), dtype="float32",
                      keys={"shape": "delivery.forward_shape"})
    judge_layers(obs["run"], drawn, params.tol.float32, WHAT)
