"""Public checks of task tensors: share_numpy, to_numpy, row_dots (one check each, dtypes and shapes)."""

from __future__ import annotations

import numpy as np

from autograder.graders import call, describe, fail, fmt_shape, judge_equal, points, require_array

from ..support import rng


def _values(gen: np.random.Generator, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    if dtype == "bool":
        return gen.random(shape) < 0.5
    if dtype.startswith("int"):
        return gen.integers(-50, 50, shape).astype(dtype)
    return gen.normal(size=shape).astype(dtype)


def _writes(gen: np.random.Generator, arr: np.ndarray) -> np.ndarray:
    if arr.dtype.kind in "iub":
        return gen.integers(-1000, 1000, arr.shape).astype(arr.dtype)
    return gen.normal(0, 10, arr.shape).astype(arr.dtype)


def check_shared(worker, arr: np.ndarray, gen: np.random.Generator) -> None:
    """share_numpy(arr) keeps dtype, shape and values and shares memory both ways, or fails. The values
    written into each side are drawn from `gen` (hidden): seeing them on the other side needs one memory."""
    what = f"share_numpy(np.ndarray(dtype={arr.dtype.name}, shape={fmt_shape(arr.shape)}))"
    write_numpy, write_tensor = _writes(gen, arr), _writes(gen, arr)
    obs = call(worker, "tensors_share_numpy", what,
               arr=arr, write_numpy=write_numpy, write_tensor=write_tensor)
    require_array(obs, what, arr.shape)
    if obs["dtype"] != arr.dtype.name:
        fail("tensors.share_dtype", call=what, got_dtype=obs["dtype"], want_dtype=arr.dtype.name)
    if not np.array_equal(obs["values"], arr):
        fail("tensors.share_values", call=what, error=describe(obs["values"], arr))
    if not np.array_equal(obs["after_numpy_write"], write_numpy):
        fail("tensors.share_copy", call=what, direction="arr[...] = ...")
    if obs["tensor_write_error"] is not None or not np.array_equal(obs["after_tensor_write"], write_tensor):
        fail("tensors.share_copy", call=what, direction="t[...] = ...")


def check_to_numpy(worker, values: np.ndarray, kind: str) -> None:
    labels = {"plain": "t", "leaf": "t.requires_grad_()", "nonleaf": "2 * t.requires_grad_()"}
    what = f"to_numpy({labels[kind]}), t.dtype == {values.dtype.name}, t.shape == {fmt_shape(values.shape)}"
    obs = call(worker, "tensors_to_numpy", what, {"requires grad": "tensors.numpy_needs_detach"},
               values=values, kind=kind)
    want = values * 2 if kind == "nonleaf" else values
    got = require_array(obs, what, values.shape, types=("ndarray",), dtype=values.dtype.name)
    if obs["t_flags_changed"] or obs["t_changed"]:
        fail("tensors.to_numpy_modifies", call=what, requires_grad=obs["t_requires_grad"])
    if not np.array_equal(got, want):
        fail("tensors.to_numpy_values", call=what, error=describe(got, want))


def check_row_dots(worker, a: np.ndarray, b: np.ndarray, tol: float) -> None:
    n, d = a.shape
    what = f"row_dots(a, b), a.shape == b.shape == ({n}, {d})"
    obs = call(worker, "tensors_row_dots", what, a=a, b=b)
    if type(obs) is dict and obs.get("type") == "Tensor" and tuple(obs.get("shape", ())) != (n,):
        shape = tuple(obs["shape"])
        key = "tensors.row_dots_matrix" if shape == (n, n) else "tensors.row_dots_shape"
        fail(key, call=what, got_shape=fmt_shape(shape), want_shape=fmt_shape((n,)))
    want = np.einsum("nd,nd->n", a.astype(np.float64), b.astype(np.float64))
    judge_equal(obs, what, want, dtype=a.dtype.name, tol=tol, keys={"values": "tensors.row_dots_values"})


# One check per function (one slip, one charge): each judges its function's whole contract, on the
# lesson's example and on a sweep of dtypes and shapes whose values come from a hidden seed.


@points(5)
def test_share_numpy(worker, params, challenge):
    """share_numpy(arr) shares memory with arr both ways, keeps its dtype and shape (float64, int64, ...)"""
    arr = rng(params.tensors.seed).normal(size=(3, 4))
    writes = challenge.rng("writes")
    check_shared(worker, arr, writes)
    gen = rng(params.tensors.seed + 10)
    for dtype in params.tensors.dtypes:
        for shape in params.tensors.shapes:
            check_shared(worker, _values(gen, dtype, shape), writes)


@points(5)
def test_to_numpy_requires_grad(worker, params):
    """to_numpy works with requires_grad=True and on non-leaf tensors, keeps dtype and shape, t unchanged"""
    values = rng(params.tensors.seed + 1).normal(size=(2, 3)).astype(np.float32)
    check_to_numpy(worker, values, "leaf")
    gen = rng(params.tensors.seed + 11)
    for k, dtype in enumerate(params.tensors.to_numpy_dtypes):
        check_to_numpy(worker, _values(gen, dtype, params.tensors.shapes[k % 3]), "plain")
    for dtype in ("float32", "float64"):
        check_to_numpy(worker, _values(gen, dtype, (4, 2)), "nonleaf")
        check_to_numpy(worker, _values(gen, dtype, (3,)), "leaf")


@points(5)
def test_row_dots(worker, params):
    """row_dots of two (N, D) tensors is the (N,) tensor of a[i] @ b[i], for random shapes, N = 1 too"""
    gen = rng(params.tensors.seed + 2)
    a, b = gen.normal(size=(5, 3)), gen.normal(size=(5, 3))
    check_row_dots(worker, a, b, params.tol.float64)
    P = params.tensors
    cases = [(1, 4, False)] + [(int(gen.integers(1, P.max_rows + 1)), int(gen.integers(1, P.max_dim + 1)),
                                bool(k % 2)) for k in range(12)]
    for n, d, double in cases:
        dtype = np.float64 if double else np.float32
        a, b = gen.normal(size=(n, d)).astype(dtype), gen.normal(size=(n, d)).astype(dtype)
        tol = (params.tol.float64 if double else params.tol.float32) * max(1.0, d)
        check_row_dots(worker, a, b, tol)
