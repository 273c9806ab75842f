"""The equality builder: the contract's type, shape and dtype, then the values at the dtype's
tolerance; a check's own message replaces the builder's where the author asks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from autograder.checks import CheckFailed
from autograder.errors import ConfigError
from autograder.graders import check_equal
from autograder.sandbox.inside.observe import array, scalar, tensor

WANT = np.array([[0.6, 0.8]])


class Worker:
    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def call(self, probe: str, **kwargs: Any) -> Any:
        return self.answer


def judge(answer: Any, want: Any = WANT, **options: Any) -> tuple[str, dict[str, Any]]:
    try:
        check_equal(Worker(answer), "f", "f(x)", want, **options)
    except CheckFailed as failed:
        return failed.key, failed.params
    return "", {}


def test_equal_values_pass_at_the_dtypes_tolerance() -> None:
    import torch

    assert judge(array(WANT + 1e-13), kind="ndarray") == ("", {})
    assert judge(tensor(torch.tensor([[0.6, 0.8]])), dtype="float32") == ("", {})
    assert judge(scalar(2.0), 2.0, kind="float") == ("", {})


def test_each_way_of_being_wrong_has_its_message() -> None:
    import torch

    assert judge(array(WANT.astype(np.float32)), kind="ndarray")[0] == "common.wrong_dtype"
    assert judge(array(WANT.T), kind="ndarray")[0] == "common.wrong_shape"
    assert judge(tensor(torch.tensor(WANT)), kind="ndarray")[0] == "common.wrong_type"
    assert judge(scalar(2), 2.0, kind="float")[0] == "common.wrong_type"
    key, params = judge(array(WANT + 1e-6), kind="ndarray")
    assert key == "equality.values" and params["dtype"] == "float64" and params["tol"] == "1e-12", params
    assert "max abs error" in params["error"], params


def test_an_authors_own_message_replaces_the_builders() -> None:
    key, _ = judge(array(WANT * 2), kind="ndarray", keys={"values": "task.own"})
    assert key == "task.own"


def test_an_unknown_kind_is_the_authors_mistake() -> None:
    with pytest.raises(ConfigError, match="kind 'list'"):
        judge(array(WANT), kind="list")
