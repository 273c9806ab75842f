"""Public checks of task tensors: memory shared with NumPy, to_numpy on a graph tensor, row_dots."""

from __future__ import annotations

import numpy as np

from autograder.graders import call, describe, fail, fmt_shape, judge_equal, points, require_array

from ..support import rng


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


@points(3)
def test_share_numpy(worker, params, challenge):
    """share_numpy(arr) shares memory with arr both ways and keeps float64 as float64"""
    arr = rng(params.tensors.seed).normal(size=(3, 4))
    check_shared(worker, arr, challenge.rng("writes"))


@points(3)
def test_to_numpy_requires_grad(worker, params):
    """to_numpy works on a tensor with requires_grad=True, keeps dtype and shape, leaves it unchanged"""
    values = rng(params.tensors.seed + 1).normal(size=(2, 3)).astype(np.float32)
    check_to_numpy(worker, values, "leaf")


@points(3)
def test_row_dots(worker, params):
    """row_dots of two (N, D) tensors is the (N,) tensor of a[i] @ b[i]"""
    gen = rng(params.tensors.seed + 2)
    a, b = gen.normal(size=(5, 3)), gen.normal(size=(5, 3))
    check_row_dots(worker, a, b, params.tol.float64)
