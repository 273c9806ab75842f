"""Public checks of task unit_rows_np."""

import numpy as np

from autograder.graders import check_equal, points


@points(4)
def test_example(worker, challenge):
    """unit_rows_np(array([[3.0, 4.0]])) is array([[0.6, 0.8]]) in float64, and so for a hidden row"""
    for x in (np.array([[3.0, 4.0]]), challenge.rng().normal(size=(1, 3))):
        want = x / np.sqrt((x * x).sum())  # one row: its length is the whole array's
        check_equal(worker, "unit_rows_np", "unit_rows_np(x)", want, kind="ndarray", x=x)
