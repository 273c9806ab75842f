"""Public checks of task numpy_forward: linear (lesson example, square weights), output shape, dtype."""

from __future__ import annotations

import numpy as np

from autograder.graders import close, describe, fail, note, points, require_array

from ..support import call, raised_error, rng

ARRAY = ("ndarray",)
LINEAR_HINT = {"mismatch": "numpy_forward.linear_raised", "shapes": "numpy_forward.linear_raised",
               "ValueError": "numpy_forward.linear_raised"}
FORWARD_HINT = {"mismatch": "numpy_forward.forward_raised", "shapes": "numpy_forward.forward_raised",
                "ValueError": "numpy_forward.forward_raised"}
LINEAR_KEYS = {"shape": "numpy_forward.linear_shape"}
FORWARD_KEYS = {"shape": "numpy_forward.shape", "dtype": "numpy_forward.dtype"}
LAYERS = (("hidden.0", 3, 16), ("hidden.3", 16, 8), ("head", 8, 1))  # the lesson's; params.delivery.layers


def delivery_state(seed: int, dtype=np.float64, layers=LAYERS) -> dict[str, np.ndarray]:
    """Random DeliveryMLP weights and buffers as NumPy arrays (hidden inputs come from a seed)."""
    gen = rng(seed)
    state = {
        "x_mean": gen.uniform(0.5, 6.0, 3),
        "x_std": gen.uniform(0.4, 3.0, 3),
    }
    for prefix, fan_in, fan_out in layers:
        state[f"{prefix}.weight"] = gen.normal(0, 1 / np.sqrt(fan_in), (fan_out, fan_in))
        state[f"{prefix}.bias"] = gen.normal(0, 0.3, fan_out)
    return {k: v.astype(dtype) for k, v in state.items()}


def orders(seed: int, n: int, dtype=np.float64) -> np.ndarray:
    gen = rng(seed)
    cols = [gen.uniform(0.5, 12.0, n), gen.integers(1, 6, n), (gen.random(n) < 0.3)]
    return np.stack(cols, axis=1).astype(dtype)


def run_linear(worker, x, W, b, tol: float) -> None:
    what = f"linear(x {x.shape}, W {W.shape}, b {b.shape})"
    obs = call(worker, "numpy_linear", what, LINEAR_HINT, x=x, W=W, b=b)
    got = require_array(obs, what, (x.shape[0], W.shape[0]), types=ARRAY, keys=LINEAR_KEYS)
    want = x @ W.T + b
    if close(got, want, tol):
        return
    if W.shape[0] == W.shape[1] and close(got, x @ W + b, tol):
        fail("numpy_forward.no_transpose", call=what)
    if close(got, x @ W.T, tol):
        fail("numpy_forward.no_bias", call=what)
    fail("numpy_forward.linear_values", call=what, error=describe(got, want))


@points(4)
def test_linear_lesson_example(worker, params):
    """linear(x, W, b) = x @ W.T + b: the lesson's example gives [4.6, -0.7]; batches, square W too

    One check owns linear's values (one slip, one charge): the lesson's example, a batch of 4 with
    non-square weights, and square weights, where forgetting the transpose raises no error."""
    nf = params.numpy_forward
    x = np.array([nf.lesson_x])
    W, b = np.array(nf.lesson_W), np.array(nf.lesson_b)
    what = f"linear(x={x.tolist()}, W={W.tolist()}, b={b.tolist()})"
    obs = call(worker, "numpy_linear", what, LINEAR_HINT, x=x, W=W, b=b)
    got = require_array(obs, what, (1, 2), types=ARRAY, keys=LINEAR_KEYS)
    want = np.array([nf.lesson_y])
    if not close(got, want, params.tol.float64):
        if close(got, x @ W.T, params.tol.float64):
            fail("numpy_forward.no_bias", call=what)
        fail("numpy_forward.linear_values", call=what, error=describe(got, want))
    gen = rng(nf.input_seed)
    run_linear(worker, gen.normal(size=(4, 5)), gen.normal(size=(3, 5)), gen.normal(size=3),
               params.tol.float64)
    square = rng(nf.input_seed + 7)
    for n in nf.square_sizes:
        run_linear(worker, square.normal(size=(5, n)), square.normal(size=(n, n)), square.normal(size=n),
                   params.tol.float64)


def scaled_head(state: dict[str, np.ndarray], factor: float) -> dict[str, np.ndarray]:
    """The same state with the head's weight and bias times `factor` (> 0)."""
    return {k: (v * v.dtype.type(factor) if k.startswith("head.") else v) for k, v in state.items()}


@points(2)
def test_forward_shape_and_dtype(worker, params, challenge):
    """delivery_forward returns an ndarray of shape (N,) (also N = 1) in the dtype of its inputs

    The points rest on values, whatever the forward computes: with the head's weights scaled by a
    factor only the grader knows, every output scales by that factor (the head is the last layer)."""
    nf = params.numpy_forward
    factor = float(challenge.rng("factor").uniform(1.5, 3.0))
    cases, whats = [], []
    for dtype in (np.float64, np.float32):
        state = delivery_state(nf.state_seed + 1, dtype, params.delivery.layers)
        for n in (4, 1, 16):
            x = orders(nf.input_seed + n, n, dtype)
            cases += [[state, x], [scaled_head(state, factor), x]]
            name = np.dtype(dtype).name
            whats.append((f"delivery_forward(state, x), x.dtype == {name}, x.shape == ({n}, 3)", n, name))
    obs = call(worker, "numpy_delivery_cases", "delivery_forward(state, x)", FORWARD_HINT, cases=cases)
    for k, (what, n, dtype) in enumerate(whats):
        plain, scaled = obs[2 * k], obs[2 * k + 1]
        outs = []
        for got in (plain, scaled):
            raised_error(got["raised"], what, FORWARD_HINT)
            outs.append(require_array(got["out"], what, (n,), types=ARRAY, dtype=dtype, keys=FORWARD_KEYS))
        tol = params.tol.float32 if dtype == "float32" else 1e-9
        out, out_scaled = (o.astype(np.float64) for o in outs)
        if not close(out_scaled, factor * out, tol) or (n > 1 and not np.any(out)):
            fail("numpy_forward.head_scaling", call=what, factor=f"{factor:.6g}",
                 error=describe(out_scaled, factor * out))
        want = forward_variants(*cases[2 * k])["right"]
        if not close(out, want, tol):  # the values are matches_torch_float64's to charge, once
            note("common.note_other_check", check="numpy_forward.matches_torch_float64",
                 detail=f"{what} differs from DeliveryMLP's forward: {describe(out, want)}")


def forward_variants(state: dict[str, np.ndarray], x: np.ndarray) -> dict[str, np.ndarray]:
    """DeliveryMLP's eval-mode forward in float64 from a state_dict of arrays; also without the
    standardization, and with a ReLU after the head."""
    s = {k: v.astype(np.float64) for k, v in state.items()}
    x64 = x.astype(np.float64)
    found = {}
    for name, z, relu_head in (("right", (x64 - s["x_mean"]) / s["x_std"], False),
                               ("no_standardize", x64, False),
                               ("relu_head", (x64 - s["x_mean"]) / s["x_std"], True)):
        h = np.maximum(z @ s["hidden.0.weight"].T + s["hidden.0.bias"], 0)
        h = np.maximum(h @ s["hidden.3.weight"].T + s["hidden.3.bias"], 0)
        out = h @ s["head.weight"].T + s["head.bias"]
        found[name] = (np.maximum(out, 0) if relu_head else out)[:, 0]
    return found
