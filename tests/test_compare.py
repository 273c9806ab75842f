"""autograder.compare: tolerances by dtype, the error report and the array checks graders use."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.checks import CheckFailed
from autograder.compare import close, describe, errors, require_array, require_close, tolerance


def test_tolerance_follows_the_dtype():
    assert tolerance("float64") == 1e-12
    assert tolerance(np.float32) == 1e-5
    assert tolerance("torch.float16") == 1e-3
    assert tolerance("int64", default=0.5) == 0.5


def test_close_uses_the_expected_dtype_when_no_tolerance_is_given():
    want = np.array([1.0, 2.0], dtype=np.float32)
    assert close(want + np.float32(1e-6), want)
    assert not close(want + np.float32(1e-3), want)
    assert not close(np.array([1.0 + 1e-9]), np.array([1.0]))  # float64: 1e-12
    assert close(np.array([1.0 + 1e-9]), np.array([1.0]), tol=1e-6)


def test_the_report_names_the_worst_index_and_both_errors():
    got = np.array([[1.0, 2.0], [3.0, 10.5]])
    want = np.array([[1.0, 2.0], [3.0, 10.0]])
    e = errors(got, want)
    assert e["index"] == "(1, 1)" and e["abs"] == pytest.approx(0.5) and e["rel"] == pytest.approx(0.05)
    assert describe(got, want) == ("max abs error 0.5, max rel error 0.05; worst at index (1, 1) "
                                   "(got 10.5, expected 10)")


def test_require_close_fails_with_the_report():
    with pytest.raises(CheckFailed) as caught:
        require_close(np.array([1.0, 3.0]), np.array([1.0, 2.0]), "task.wrong_values", call="f(x)")
    assert caught.value.key == "task.wrong_values"
    assert caught.value.params["call"] == "f(x)" and "index (1,)" in caught.value.params["report"]
    require_close(np.array([1.0]), np.array([1.0]), "task.wrong_values")  # no failure


def test_require_array_checks_type_shape_dtype_and_finiteness():
    good = {"type": "Tensor", "shape": [2], "dtype": "float32", "values": np.zeros(2, np.float32)}
    assert require_array(good, "f()", (2,), dtype="float32") is good["values"]
    cases = [
        ({"type": "list"}, "common.wrong_type"),
        ({**good, "shape": [3]}, "common.wrong_shape"),
        ({**good, "dtype": "float64"}, "common.wrong_dtype"),
        ({**good, "values": np.array([np.nan, 0.0], np.float32)}, "common.wrong_finite"),
    ]
    for obs, key in cases:
        with pytest.raises(CheckFailed) as caught:
            require_array(obs, "f()", (2,), dtype="float32")
        assert caught.value.key == key, obs
    with pytest.raises(CheckFailed) as caught:
        require_array({"type": "list"}, "f()", (2,), keys={"type": "task.not_a_tensor"})
    assert caught.value.key == "task.not_a_tensor"
