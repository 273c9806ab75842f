"""Public checks of task unit_rows_np."""

import numpy as np

from autograder.graders import check_equal, points


@points(4)
def test_example(worker):
    """unit_rows_np(array([[3.0, 4.0]])) is array([[0.6, 0.8]]), in float64"""
    x = np.array([[3.0, 4.0]])
    check_equal(worker, "unit_rows_np", "unit_rows_np(x)", np.array([[0.6, 0.8]]), kind="ndarray", x=x)
