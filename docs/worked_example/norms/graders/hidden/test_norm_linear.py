"""Hidden checks of task norm_linear."""

from autograder.graders import check_structure, points

from ..public.test_norm_linear import WHAT


@points(1)
def test_count(worker, challenge):
    """NormLinear(3, 4) has 16 parameter values in all"""
    check_structure(worker, challenge, "norm_linear_structure", WHAT, count=16)
