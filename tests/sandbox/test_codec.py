"""The transport accepts plain data and exact arrays only, and round-trips them exactly."""

import numpy as np
import pytest

from autograder.sandbox import codec


def test_round_trip_plain_values_and_arrays():
    value = {
        "i": 3, "f": 0.5, "s": "নমস্কার", "b": True, "n": None, "l": [1, [2, 3]],
        "a": np.arange(6, dtype=np.float64).reshape(2, 3), "nan": float("nan"),
    }
    back = codec.decode(codec.encode(value))
    assert back["s"] == "নমস্কার" and back["l"] == [1, [2, 3]] and back["n"] is None
    assert back["a"].dtype == np.float64 and back["a"].shape == (2, 3)
    assert np.array_equal(back["a"], value["a"])
    assert back["nan"] != back["nan"]


def test_encoded_message_is_one_json_line():
    line = codec.encode({"text": "a\nb"})
    assert line.endswith(b"\n") and line.count(b"\n") == 1


def test_arrays_travel_raw_after_the_line():
    """The line lists the sizes of the raw parts; the array bytes follow it, never as text."""
    values = np.arange(4, dtype=np.float32)
    frame = codec.encode({"a": values, "b": [np.ones(2, dtype=np.int64)]})
    line, raw = frame.split(b"\n", 1)
    header, size = codec.parse_header(line)
    assert header["__blobs__"] == [16, 16] and size == 32
    assert raw == values.tobytes() + np.ones(2, dtype=np.int64).tobytes()
    back = codec.revive(header, raw)
    assert np.array_equal(back["a"], values) and back["b"][0].dtype == np.int64
    assert "__blobs__" not in back


def test_reserved_key_is_refused():
    with pytest.raises(codec.EncodeError):
        codec.encode({"__blobs__": [1]})


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
