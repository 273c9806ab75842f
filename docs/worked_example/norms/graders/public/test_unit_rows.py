"""Public checks of task unit_rows."""

import numpy as np

from autograder.graders import call, fail, judge_equal, points


def unit(x: np.ndarray) -> np.ndarray:
    """The definition, in float64."""
    x = x.astype(np.float64)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def check_rows(worker, x: np.ndarray) -> None:
    obs = call(worker, "unit_rows", "unit_rows(x)", x=x)
    got, whole = obs.get("values"), x / np.linalg.norm(x.astype(np.float64))
    if got is not None and got.shape == x.shape and np.allclose(got, whole) and not np.allclose(got, unit(x)):
        fail("unit_rows.whole_norm", call="unit_rows(x)")  # a misconception of its own
    judge_equal(obs, "unit_rows(x)", unit(x), dtype=x.dtype.name)


@points(4)
def test_example(worker, challenge):
    """unit_rows(tensor([[3.0, 4.0]])) is tensor([[0.6, 0.8]]), and so for rows only the grader knows"""
    check_rows(worker, np.array([[3.0, 4.0]], dtype=np.float32))
    check_rows(worker, challenge.rng().normal(size=(5, 3)).astype(np.float32))
