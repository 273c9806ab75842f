"""Hidden checks of task unit_rows_np: torch's unit_rows (the reference) in float64 is the judge."""

import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from autograder.graders import check_equal, points

from . import _ref

shapes = st.tuples(st.integers(1, 6), st.integers(1, 6))
values = st.floats(-1e3, 1e3).filter(lambda v: abs(v) > 1e-3)


@points(6)
@given(x=arrays(np.float64, shapes, elements=values))
def test_matches_torch_in_float64(worker, x):
    """unit_rows_np equals torch's unit_rows in float64 for random rows"""
    want = _ref.module("unit_rows").unit_rows(torch.from_numpy(x)).numpy()
    check_equal(worker, "unit_rows_np", "unit_rows_np(x)", want, kind="ndarray", x=x)
