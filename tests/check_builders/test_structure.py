"""The structure builder judges a model's names, shapes, counts and dtypes, and its points rest on the
hidden run: the student's own registered layers computing with values only the grader knows."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from torch import nn

from autograder.checks import CheckFailed
from autograder.graders import check_structure
from autograder.grading.challenge import Challenge
from autograder.sandbox.inside.observe import module_structure

SHAPES = {"fc.weight": (4, 3), "fc.bias": (4,)}


class Net(nn.Module):
    def __init__(self, bias: bool = True) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 4, bias=bias)
        self.register_buffer("scale", torch.ones(4))


class Forged(nn.Linear):
    """Reports the right structure, computes nothing the contract says."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros(x.shape[0], self.out_features)


class Worker:
    """Answers a probe call the way the worker would, running the probe in this process."""

    def __init__(self, make: Any, answer: Any = None) -> None:
        self.make, self.answer = make, answer

    def call(self, probe: str, **kwargs: Any) -> Any:
        return self.answer if self.answer is not None else module_structure(self.make(), **kwargs)


def judge(worker: Worker, **wanted: Any) -> str:
    """The message key the check fails with ("" when it passes)."""
    try:
        check_structure(worker, Challenge(b"secret", "t.structure"), "structure", "Net()", **wanted)
    except CheckFailed as failed:
        return failed.key
    return ""


def test_a_right_model_passes_each_property() -> None:
    for wanted in ({"names": ["fc.weight", "fc.bias"]}, {"shapes": SHAPES}, {"count": 16},
                   {"dtype": "float32"}, {"buffers": ["scale"]}, {"need": ["fc"]}):
        assert judge(Worker(Net), **wanted) == "", wanted


def test_each_property_fails_with_its_own_message() -> None:
    assert judge(Worker(lambda: Net(bias=False)), shapes=SHAPES) == "structure.parameter_names"
    assert judge(Worker(lambda: Net(bias=False)), count=16) == "structure.parameter_count"
    assert judge(Worker(lambda: Net().double()), dtype="float32") == "structure.dtype"
    assert judge(Worker(Net), buffers=["mean"]) == "structure.buffer_names"
    assert judge(Worker(Net), need=["head"]) == "structure.missing_layer"
    assert judge(Worker(lambda: "not a model"), count=16) == "structure.not_module"


def test_a_forged_layer_or_a_replayed_answer_earns_nothing() -> None:
    def forged() -> nn.Module:
        net = Net()
        net.fc = Forged(3, 4)
        return net

    assert judge(Worker(forged), shapes=SHAPES) == "common.challenge_values"
    other = {"pool": np.linspace(0.3, 0.9, 1031, dtype=np.float32),
             "xpool": np.linspace(-1, 1, 257, dtype=np.float32)}
    replayed = module_structure(Net(), **other)  # an answer to other hidden values than this check's
    assert judge(Worker(Net, replayed), shapes=SHAPES) == "common.challenge_values"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_hidden_values_differ_per_secret(dtype: str) -> None:
    from autograder.graders import pools

    first = pools(Challenge(b"a", "t.x").rng(), float64=dtype == "float64")
    second = pools(Challenge(b"b", "t.x").rng(), float64=dtype == "float64")
    assert first["pool"].dtype.name == dtype and not np.array_equal(first["pool"], second["pool"])
