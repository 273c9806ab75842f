"""Public checks of task norm_linear."""

import numpy as np

from autograder.graders import check_equal, check_structure, points

WHAT = "NormLinear(3, 4)"


@points(3)
def test_parameters(worker, challenge):
    """NormLinear(3, 4) registers fc.weight (4, 3) and fc.bias (4,), and fc computes x @ W.T + b"""
    check_structure(worker, challenge, "norm_linear_structure", WHAT,
                    shapes={"fc.weight": (4, 3), "fc.bias": (4,)}, need=("fc",))


@points(6)
def test_forward(worker, challenge):
    """forward(x) is unit_rows(fc(x)) with weights only the grader knows"""
    gen = challenge.rng()
    w, b, x = (gen.normal(size=s).astype(np.float32) for s in ((4, 3), (4,), (5, 3)))
    h = x.astype(np.float64) @ w.T.astype(np.float64) + b
    check_equal(worker, "norm_linear_forward", f"{WHAT}(x)", h / np.linalg.norm(h, axis=1, keepdims=True),
                dtype="float32", weight=w, bias=b, x=x)
