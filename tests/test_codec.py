"""The transport accepts plain data and exact arrays only, and round-trips them exactly."""

import numpy as np
import pytest

from autograder import codec


def test_round_trip_plain_values_and_arrays():
    value = {
        "i": 3, "f": 0.5, "s": "নমস্কার", "b": True, "n": None, "l": [1, [2, 3]],
        "a": np.arange(6, dtype=np.float64).reshape(2, 3), "nan": float("nan"),
    }  # fmt: skip
    back = codec.decode(codec.encode(value))
    assert back["s"] == "নমস্কার" and back["l"] == [1, [2, 3]] and back["n"] is None
    assert back["a"].dtype == np.float64 and back["a"].shape == (2, 3)
    assert np.array_equal(back["a"], value["a"])
    assert back["nan"] != back["nan"]


def test_encoded_message_is_one_json_line():
    line = codec.encode({"text": "a\nb"})
    assert line.endswith(b"\n") and line.count(b"\n") == 1


class LyingInt(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


@pytest.mark.parametrize(
    "bad",
    [LyingInt(3), object(), np.array(["x"]), {1: 2}, np.arange(3).view(np.matrix), b"bytes"],
)
def test_subclasses_and_objects_are_refused(bad):
    with pytest.raises(codec.EncodeError):
        codec.encode({"value": bad})


def test_decode_rejects_mismatched_array_payload():
    line = codec.encode({"a": np.zeros(4)}).replace(b'"shape":[4]', b'"shape":[5]')
    with pytest.raises(ValueError):
        codec.decode(line)


def test_decode_rejects_object_dtype():
    line = codec.encode({"a": np.zeros(2)}).replace(b'"float64"', b'"object"')
    with pytest.raises(ValueError):
        codec.decode(line)
