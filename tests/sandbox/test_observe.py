"""autograder.sandbox.inside.observe: the one set of describers both assignments' probes use."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from autograder.probe_calls import raised_as
from autograder.sandbox import codec
from autograder.sandbox.inside.observe import array, exception, numbers, scalar, tensor


class _Sneaky(torch.Tensor):
    pass


def test_a_plain_tensor_is_described_with_its_values():
    obs = tensor(torch.arange(6, dtype=torch.float32).reshape(2, 3).requires_grad_())
    assert {k: obs[k] for k in ("type", "shape", "dtype", "device", "requires_grad", "has_grad_fn")} == {
        "type": "Tensor",
        "shape": [2, 3],
        "dtype": "float32",
        "device": "cpu",
        "requires_grad": True,
        "has_grad_fn": False,
    }
    assert np.array_equal(obs["values"], np.arange(6, dtype=np.float32).reshape(2, 3))
    assert tensor(nn.Parameter(torch.zeros(2)))["type"] == "Parameter"


@pytest.mark.parametrize(
    "value",
    [torch.zeros(2).as_subclass(_Sneaky), np.zeros(2), [0.0, 0.0], torch.zeros(2, dtype=torch.cfloat)],
)
def test_only_an_exact_tensor_in_a_sendable_dtype_sends_values(value):
    obs = tensor(value)
    assert obs["values"] is None and obs["type"] == type(value).__name__


def test_arrays_and_scalars_name_their_exact_type():
    assert array(np.ones(3, dtype=np.int64))["dtype"] == "int64"
    assert array(torch.ones(3)) == {"type": "Tensor", "values": None}
    assert scalar(2.5) == {"type": "float", "value": 2.5}
    assert scalar(True)["value"] is None  # a bool is not the int the contract names
    held = scalar(torch.tensor(1.5))
    assert held["value"] is None and held["as_float"] == 1.5 and held["type"] == "Tensor"
    assert scalar("x")["as_float"] is None


def test_numbers_read_each_loss_whatever_its_type():
    loss = (torch.tensor(2.0, requires_grad=True) * 1.5).sum()
    obs = numbers([1.0, np.float32(2.0), np.array([3.0]), loss, "x"])
    assert obs["values"] == [1.0, 2.0, 3.0, 3.0, None]
    assert obs["types"] == ["float", "float32", "ndarray", "Tensor", "str"] and obs["graphs"] == 1
    assert numbers(iter([1.0]))["len"] is None


def test_an_exception_says_its_classes_and_chain_so_a_subclass_counts():
    class Refused(ValueError):
        def __str__(self) -> str:
            raise SystemExit("no")

    try:
        try:
            raise KeyError("k")
        except KeyError as inner:
            raise Refused() from inner
    except Refused as exc:
        obs = exception(exc)
    assert obs["type"] == "Refused" and obs["chain"] == ["Refused", "KeyError"]
    assert obs["message"] == "<unreadable message>"
    assert raised_as(obs, "ValueError") and not raised_as(obs, "KeyError")  # only the outer one counts
    assert codec.decode(codec.encode(obs)) == obs  # plain data: it crosses the sandbox's wire


def test_a_long_message_is_cut():
    assert len(exception(RuntimeError("x" * 5000))["message"]) < 700


PROBES = """
from autograder.sandbox.inside.observe import tensor

def out(mod):
    return tensor(mod.out())
"""
FORGER = """
import torch
from autograder.sandbox.inside import observe

observe.tensor = lambda value: {"type": "Tensor", "values": [[1.0]], "shape": [1, 1], "dtype": "float32"}

def out():
    return None
"""


def test_a_submission_that_replaces_a_describer_is_caught(tmp_path):
    from autograder.sandbox.inside import observe
    from autograder.sandbox.inside.runtime import TaskRuntime

    original = observe.tensor
    (tmp_path / "student_out.py").write_text(FORGER, encoding="utf-8")
    try:
        status = TaskRuntime(str(tmp_path), "student_out", PROBES).open()
        assert "tampered" in status and "observe" in status["tampered"], status
    finally:
        observe.tensor = original
