"""Public checks of task delivery: buffers, state_dict keys, parameter count and .double()."""

from __future__ import annotations

import numpy as np

from autograder.checks import fail, points
from autograder.compare import fmt_shape

from ..challenges import delivery_outputs, finer, inputs, judge_output, linear_state, once_per_task
from ..support import call

SUPER_HINT = {"Module.__init__() call": "delivery.super_init"}
WHAT = "DeliveryMLP(x_mean, x_std)"


def buffers_in(params) -> tuple[np.ndarray, np.ndarray]:
    dp = params.delivery
    return np.array(dp.x_mean, dtype=np.float32), np.array(dp.x_std, dtype=np.float32)


def structure(worker, params, challenge, buffers: bool = True) -> dict:
    """What DeliveryMLP(x_mean, x_std) registers, and the challenge: hidden weights (and, with
    `buffers`, hidden buffer values) loaded through its state_dict keys, the model run in eval mode
    on hidden orders. Without `buffers` the model keeps the x_mean, x_std it was given."""
    dp = params.delivery
    x_mean, x_std = buffers_in(params)
    # buffers and state_dict_keys share one run (and parameter_count, without buffers, another)
    gen = challenge.shared(f"delivery.structure.{buffers}").rng(*dp.sizes)
    sent = linear_state(gen, dp.layers)
    state = {**sent, "x_mean": x_mean, "x_std": x_std}
    if buffers:
        sent["x_mean"] = state["x_mean"] = gen.uniform(-4, 8, x_mean.shape).astype(np.float32)
        sent["x_std"] = state["x_std"] = gen.uniform(0.5, 3, x_std.shape).astype(np.float32)
    xs = [inputs(gen, 7, dp.sizes[0], scale=4.0)]
    obs = once_per_task(worker, "delivery_structure", WHAT, SUPER_HINT, x_mean=x_mean, x_std=x_std,
                        state=sent, xs=xs)
    obs["expected"] = [delivery_outputs(state, [p for p, _, _ in dp.layers], x) for x in xs]
    obs["kept"] = () if buffers else dp.buffers
    return obs


def judge_challenge(obs: dict, params) -> None:
    """The registered layers (and buffers) are the ones forward uses, with the hidden values loaded."""
    dp = params.delivery
    names = [k for k in dp.keys if k not in obs["kept"]]
    judge_output(obs["challenge"], obs["expected"], params.tol.float32, f"{WHAT}(x) in eval mode",
                 f"head(hidden((x - x_mean) / x_std)) with {dp.layers_text}", names, obs["kept"])


@points(3)
def test_buffers(worker, params, challenge):
    """x_mean and x_std are registered buffers (not parameters or plain attributes) with the given values

    The points rest on a run: hidden buffer values and weights, loaded by name, give the contract's output."""
    obs = structure(worker, params, challenge)
    given = dict(zip(params.delivery.buffers, buffers_in(params), strict=True))
    for name, value in given.items():
        if name in obs["names"]:
            fail("delivery.buffer_is_parameter", name=name)
        if name not in obs["buffer_names"]:
            if name in obs["plain_attrs"]:
                fail("delivery.plain_attribute", name=name, got_type=obs["plain_attrs"][name])
            fail("delivery.buffer_missing", name=name, buffers=obs["buffer_names"] or "none")
        buf = obs["buffer_values"][name]
        if buf["type"] != "Tensor" or buf["values"] is None or tuple(buf["shape"]) != value.shape:
            fail("delivery.buffer_value", name=name, got=f"{buf['type']} {fmt_shape(buf.get('shape', ()))}",
                 want=f"Tensor {fmt_shape(value.shape)}")
        if not np.array_equal(buf["values"].astype(np.float64), value.astype(np.float64)):
            fail("delivery.buffer_value", name=name, got=str(buf["values"].tolist()),
                 want=str(value.tolist()))
    judge_challenge(obs, params)


@points(3)
def test_state_dict_keys(worker, params, challenge):
    """state_dict() keys are exactly x_mean, x_std, hidden.0.*, hidden.3.*, head.*

    The points rest on a run: hidden values loaded through those keys give the contract's output."""
    obs = structure(worker, params, challenge)
    want = list(params.delivery.keys)
    got = obs["state_keys"]
    if got == want:
        judge_challenge(obs, params)
        return
    if obs["hidden_type"] in ("list", "tuple"):
        fail("delivery.hidden_list", got_type=obs["hidden_type"], keys=got,
             hidden=params.delivery.hidden_code)
    if "Dropout" not in obs["modules"] or any(k.startswith("hidden.2.") for k in got):
        fail("delivery.no_dropout", keys=got, modules=", ".join(sorted(set(obs["modules"]))))
    absent = [k for k in want if k not in got]
    if absent and set(absent) <= set(params.delivery.buffers):
        fail("delivery.keys_no_buffers", keys=got, absent=", ".join(absent))
    fail("delivery.keys", keys=got, want=want)


@points(2)
def test_parameter_count(worker, params, challenge):
    """DeliveryMLP has {p.delivery.n_params} parameters, with weights {p.delivery.shapes_text}

    The points rest on a run: hidden weights of those shapes, loaded by name, give the contract's output."""
    obs = structure(worker, params, challenge, buffers=False)
    dp = params.delivery
    if obs["count"] != dp.n_params:
        if obs["count"] == 0 or obs["hidden_type"] in ("list", "tuple"):
            fail("delivery.hidden_list", got_type=obs["hidden_type"], keys=obs["state_keys"],
                 hidden=dp.hidden_code)
        fail("delivery.count", got=obs["count"], want=dp.n_params, names=obs["names"],
             terms=dp.count_terms)
    shapes = {n: tuple(s) for n, s in zip(obs["names"], obs["shapes"], strict=True)}
    for name, shape in dp.weight_shapes:
        if shapes.get(name) != tuple(shape):
            got = fmt_shape(shapes[name]) if name in shapes else "no such parameter"
            fail("delivery.shape", name=name, got_shape=got, want_shape=fmt_shape(shape))
    judge_challenge(obs, params)


@points(2)
def test_double_converts_buffers(worker, params, challenge):
    """model.double() turns the buffers and every weight into float64, and the output is float64

    The points rest on a run: float64 weights and buffers only the grader knows, loaded after
    .double(), give the contract's output to float64 precision (a float32 model cannot)."""
    dp = params.delivery
    x_mean, x_std = buffers_in(params)
    x = np.array([[2.0, 1.0, 0.0], [8.5, 3.0, 1.0]], dtype=np.float32)
    gen = challenge.rng(*dp.sizes)
    state = finer(gen, linear_state(gen, dp.layers))
    state["x_mean"] = gen.uniform(-4, 8, x_mean.shape)
    state["x_std"] = gen.uniform(0.5, 3, x_std.shape)
    xs = [finer(gen, {"x": inputs(gen, 5, dp.sizes[0], scale=4.0)})["x"]]
    obs = call(worker, "delivery_double", f"{WHAT}.double()", SUPER_HINT,
               x_mean=x_mean, x_std=x_std, x=x, state=state, xs=xs)
    for name in params.delivery.buffers:
        if name not in obs["state_dtypes"]:
            dtype = obs["plain_dtypes"].get(name, "not converted")
            fail("delivery.double_buffer", name=name, dtype=dtype)
    wrong = {k: v for k, v in obs["state_dtypes"].items() if v != "float64"}
    if wrong:
        fail("delivery.double_dtypes", wrong=", ".join(f"{k}: {v}" for k, v in wrong.items()))
    out = obs["out"]
    if out.get("dtype") != "float64":
        fail("delivery.double_output", got=out.get("dtype", out["type"]))
    judge_output(obs["challenge"], [delivery_outputs(state, [p for p, _, _ in dp.layers], x) for x in xs],
                 params.tol.float64, f"{WHAT}.double()(x) in eval mode",
                 f"head(hidden((x - x_mean) / x_std)) with {dp.layers_text}, in float64", dp.keys)
