"""Hidden checks of task unit_rows: random shapes and values against the reference."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from autograder.graders import points

from ..public.test_unit_rows import check_rows

shapes = st.tuples(st.integers(1, 6), st.integers(1, 6))
values = st.floats(-10, 10, width=32).filter(lambda v: abs(v) > 0.1)


@points(6)
@given(x=arrays(np.float32, shapes, elements=values))
def test_random_rows(worker, x):
    """unit_rows is right for random float32 rows of every shape, one row and one column included"""
    check_rows(worker, x)
