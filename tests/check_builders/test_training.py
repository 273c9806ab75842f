"""A training loop's returned values, judged step by step against what its own steps computed."""

from __future__ import annotations

from autograder.check_builders.training import StepMismatch, returned_per_step

# per step the loop took: the contract's measure and a slip another check owns
SEEN = [{"mean": 1.0, "other": 5.0, "sum": 100.0}, {"mean": 0.5, "other": 4.0, "sum": 50.0},
        {"mean": 0.25, "other": 3.0, "sum": 25.0}]


def judge(returned, **kwargs):
    return returned_per_step(returned, SEEN, "mean", accept=("other",), tol=1e-6, **kwargs)


def test_the_steps_own_values_pass_and_an_accepted_measure_too():
    assert judge([1.0, 0.5, 0.25]) is None
    assert judge([5.0, 4.0, 3.0]) is None  # another check's business


def test_a_measure_not_accepted_a_step_off_by_one_and_a_scaled_value_fail():
    assert judge([100.0, 50.0, 25.0]) == StepMismatch(step=0, got=100.0, want=1.0, measure="mean")
    assert judge([0.5, 0.25, 0.25]) == StepMismatch(step=0, got=0.5, want=1.0, measure="mean")
    assert judge([1.0, 0.5, 0.5]) == StepMismatch(step=2, got=0.5, want=0.25, measure="mean")
    assert judge([1.0, None, 0.25]) == StepMismatch(step=1, got=None, want=0.5, measure="mean")


def test_steps_after_the_last_state_seen_repeat_it_and_a_limit_stops_the_judging():
    assert judge([1.0, 0.5, 0.25, 0.25, 0.25]) is None  # the state stopped changing
    assert judge([1.0, 7.0], limit=1) is None
    assert returned_per_step([3.0], [], "mean") is None  # nothing seen: nothing to judge against
