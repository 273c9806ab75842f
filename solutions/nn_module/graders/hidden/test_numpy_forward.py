"""Hidden checks of task numpy_forward: equality with DeliveryMLP.double() at 1e-12 (and float32)."""

from __future__ import annotations

import functools

import numpy as np

from autograder.graders import close, describe, fail, points, require_array

from ..public.test_numpy_forward import (
    FORWARD_HINT,
    FORWARD_KEYS,
    delivery_state,
    forward_variants,
    orders,
)
from ..support import call, raised_error
from . import _ref

ARRAY = ("ndarray",)


@functools.lru_cache(maxsize=16)
def reference(params, n: int) -> np.ndarray:
    """The reference DeliveryMLP.double() in eval mode with the same state, on the same orders."""
    import torch

    P = params.numpy_forward
    state = {k: torch.from_numpy(v.copy())
             for k, v in delivery_state(P.state_seed, layers=params.delivery.layers).items()}
    model = _ref.module("delivery", params).DeliveryMLP(state["x_mean"], state["x_std"]).double()
    model.load_state_dict(state)
    model.eval()
    with torch.no_grad():
        return model(torch.from_numpy(orders(P.input_seed + n, n))).numpy()


@points(4)
def test_matches_torch_float64(worker, params):
    """delivery_forward equals DeliveryMLP.double() in eval mode within 1e-12, on random weights and orders

    Also the float32 path: float32 state and orders give DeliveryMLP's values within float32 rounding.
    The values are judged to the precision of the dtype returned (the dtype itself is judged by
    forward_shape_and_dtype): float64 results within 1e-12."""
    P = params.numpy_forward
    state = delivery_state(P.state_seed, layers=params.delivery.layers)
    state32 = {k: v.astype(np.float32) for k, v in state.items()}  # the float32 path
    cases = [(n, "float64", state) for n in P.batch_sizes]
    cases += [(n, "float32", state32) for n in P.float32_batches]
    obs = call(worker, "numpy_delivery_cases", "delivery_forward(state, x)", FORWARD_HINT,
               cases=[[st, orders(P.input_seed + n, n, np.dtype(dt))] for n, dt, st in cases])
    for (n, dtype, _), got_obs in zip(cases, obs, strict=True):
        if dtype == "float64":
            what = f"delivery_forward(state, x), x.shape == ({n}, 3)"
        else:
            what = f"delivery_forward(state, x), x.shape == ({n}, 3), dtype=float32"
        raised_error(got_obs["raised"], what, FORWARD_HINT)
        got_obs = got_obs["out"]
        # the values, whatever the shape they come in (the shape is forward_shape_and_dtype's business)
        got = require_array(got_obs, what, None, types=ARRAY, keys=FORWARD_KEYS)
        if got.size != n:
            require_array(got_obs, what, (n,), types=ARRAY, keys=FORWARD_KEYS)
        got = got.reshape(n)
        want = reference(params, n)
        # judged to the precision of the dtype returned, at best to that of the inputs
        precision = {"float64": params.tol.float64, "float32": params.tol.float32}
        tol = max(precision.get(got.dtype.name, 2e-3), precision[dtype])
        if close(got.astype(np.float64), want, tol):
            continue
        if tol != params.tol.float64:
            fail("numpy_forward.values_float32", call=what, error=describe(got, want), tol=f"{tol:g}")
        slips = forward_variants(delivery_state(P.state_seed, layers=params.delivery.layers),
                                 orders(P.input_seed + n, n))
        if close(got, slips["no_standardize"], 1e-9):
            fail("numpy_forward.no_standardize", call=what)
        if close(got, slips["relu_head"], 1e-9):
            fail("numpy_forward.relu_head", call=what)
        fail("numpy_forward.values", call=what, error=describe(got, want), tol=f"{tol:g}")

