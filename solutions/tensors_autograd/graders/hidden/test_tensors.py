"""Hidden checks of task tensors: every dtype and shape, non-leaf tensors, random row_dots (N = 1 too)."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given
from hypothesis import strategies as st

from autograder.graders import points

from ..params import default
from ..public.test_tensors import check_row_dots, check_shared, check_to_numpy
from ..support import rng

P = default().tensors


def _values(gen: np.random.Generator, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    if dtype == "bool":
        return gen.random(shape) < 0.5
    if dtype.startswith("int"):
        return gen.integers(-50, 50, shape).astype(dtype)
    return gen.normal(size=shape).astype(dtype)


@points(2)
def test_share_numpy_dtypes(worker, params, challenge):
    """share_numpy keeps int64, float32 and float64 arrays of several shapes and shares their memory"""
    gen, writes = rng(params.tensors.seed + 10), challenge.rng("writes")
    for dtype in params.tensors.dtypes:
        for shape in params.tensors.shapes:
            check_shared(worker, _values(gen, dtype, shape), writes)


@points(2)
def test_to_numpy_dtypes_and_graphs(worker, params):
    """to_numpy keeps float32/float64/int64/bool/int32 and works on non-leaf tensors without changing them"""
    gen = rng(params.tensors.seed + 11)
    for k, dtype in enumerate(params.tensors.to_numpy_dtypes):
        check_to_numpy(worker, _values(gen, dtype, params.tensors.shapes[k % 3]), "plain")
    for dtype in ("float32", "float64"):
        check_to_numpy(worker, _values(gen, dtype, (4, 2)), "nonleaf")
        check_to_numpy(worker, _values(gen, dtype, (3,)), "leaf")


@points(2)
@given(n=st.integers(1, P.max_rows), d=st.integers(1, P.max_dim), seed=st.integers(0, 2**16),
       double=st.booleans())
@example(n=1, d=4, seed=0, double=False)
def test_row_dots_random(worker, params, n, d, seed, double):
    """row_dots equals the definition for random (N, D) shapes, N = 1 included (shape (1,), not ())"""
    gen = rng(seed)
    dtype = np.float64 if double else np.float32
    a, b = gen.normal(size=(n, d)).astype(dtype), gen.normal(size=(n, d)).astype(dtype)
    scale = max(1.0, d)
    tol = (params.tol.float64 if double else params.tol.float32) * scale
    check_row_dots(worker, a, b, tol)
