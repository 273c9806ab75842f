"""The raises check builder owns refusal alone: bad cases must raise, hidden valid ones only must run."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.check_builders.raises import RaisesCase, judge_refusals, mix_valid
from autograder.checks import CheckFailed

VALUE_ERROR = {"type": "ValueError", "mro": ["builtins.ValueError", "builtins.Exception"], "message": "bad"}
KEY_ERROR = {"type": "KeyError", "mro": ["builtins.KeyError", "builtins.Exception"], "message": "k"}
STUB = {"type": "NotImplementedError", "mro": ["builtins.NotImplementedError"], "message": "write it"}


def cases() -> list[RaisesCase]:
    return [RaisesCase(0, True, "f(0)"), RaisesCase(1, False, "f(1)"), RaisesCase(-1, True, "f(-1)")]


def verdict(raised: list) -> tuple[str, dict] | None:
    try:
        judge_refusals(cases(), raised, "ValueError", refuse_key="t.no_error", accept_key="t.valid_raised")
    except CheckFailed as failed:
        return failed.key, failed.params
    return None


def test_refusals_pass_whatever_a_valid_case_returned():
    assert verdict([VALUE_ERROR, None, VALUE_ERROR]) is None


@pytest.mark.parametrize(("raised", "key"), [
    ([None, None, VALUE_ERROR], "t.no_error"),  # a bad case returned
    ([KEY_ERROR, None, VALUE_ERROR], "t.no_error"),  # another exception
    ([VALUE_ERROR, VALUE_ERROR, VALUE_ERROR], "t.valid_raised"),  # refusing everything is no answer
    ([STUB, STUB, STUB], "common.not_implemented"),
])
def test_what_fails_and_how(raised, key):
    found = verdict(raised)
    assert found is not None and found[0] == key, found


def test_a_bad_case_that_returned_says_what_came_back():
    with pytest.raises(CheckFailed) as failed:
        judge_refusals(cases(), [None, None, VALUE_ERROR], "ValueError", refuse_key="t.no_error",
                       accept_key="t.valid_raised", field="observed", returned=lambda k: f"returned {k}")
    assert failed.value.params == {"call": "f(0)", "observed": "returned 0"}


def test_mix_valid_keeps_the_bad_cases_order_and_hides_the_valid_places():
    bad = [RaisesCase(k, True, f"b{k}") for k in range(8)]
    valid = [RaisesCase(k, False, f"v{k}") for k in range(3)]
    patterns = set()
    for seed in range(20):
        mixed = mix_valid(np.random.default_rng(seed), bad, valid)
        assert [c for c in mixed if c.must_raise] == bad and len(mixed) == 11
        patterns.add(tuple(c.must_raise for c in mixed))
    assert len(patterns) > 10  # the places depend on the generator: a replayed pattern misses them
