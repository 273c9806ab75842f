"""Plain-data transport between grader and worker: JSON lines with raw arrays, never pickle."""

from __future__ import annotations

import base64
import json
import math
from typing import Any

import numpy as np

ARRAY_TAG = "__ndarray__"
ALLOWED_DTYPES = frozenset(
    ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
)
MAX_DEPTH = 32
MAX_DECODE_DEPTH = MAX_DEPTH + 8  # a value, inside the worker's reply envelope
# Exactly NumPy's own scalar types (a subclass can claim `__module__ = "numpy"`).
NUMPY_SCALARS = frozenset(
    [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
     np.float16, np.float32, np.float64, np.longlong, np.ulonglong, np.intc, np.uintc]
)  # fmt: skip


class EncodeError(TypeError):
    """A value is not plain data (or is a subclass pretending to be)."""


def _plain(value: Any, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise EncodeError("value nested too deeply")
    kind = type(value)  # exact types only: subclasses may lie about equality
    if value is None or kind in (bool, int, str):
        return value
    if kind is float:
        if value != value or value in (float("inf"), float("-inf")):
            return {"__float__": repr(value)}
        return value
    if kind in (list, tuple):
        return [_plain(v, depth + 1) for v in value]
    if kind is dict:
        out = {}
        for k, v in value.items():
            if type(k) is not str:
                raise EncodeError(f"dict key of type {type(k).__name__}, expected str")
            out[k] = _plain(v, depth + 1)
        return out
    if kind is np.ndarray:
        if value.dtype.name not in ALLOWED_DTYPES:
            raise EncodeError(f"array of dtype {value.dtype.name} cannot be sent")
        data = np.ascontiguousarray(value, dtype=value.dtype.newbyteorder("="))
        return {
            ARRAY_TAG: base64.b64encode(data.tobytes()).decode("ascii"),
            "dtype": value.dtype.name,
            "shape": list(value.shape),
        }
    if kind in NUMPY_SCALARS:
        return _plain(value.item(), depth)
    raise EncodeError(f"cannot send a value of type {kind.__module__}.{kind.__qualname__}")


def _revive(value: Any, depth: int = 0) -> Any:
    if depth > MAX_DECODE_DEPTH:
        raise ValueError("message nested too deeply")
    if type(value) is list:
        return [_revive(v, depth + 1) for v in value]
    if type(value) is dict:
        if ARRAY_TAG in value:
            dtype = value.get("dtype")
            if type(dtype) is not str or dtype not in ALLOWED_DTYPES:
                raise ValueError(f"refused array dtype {dtype!r}")
            shape = value.get("shape")
            if type(shape) is not list or len(shape) > 32 or any(type(n) is not int or n < 0 for n in shape):
                raise ValueError("refused array shape")
            if type(value[ARRAY_TAG]) is not str:
                raise ValueError("refused array payload")
            raw = base64.b64decode(value[ARRAY_TAG], validate=True)
            arr = np.frombuffer(raw, dtype=np.dtype(dtype))
            if arr.size != math.prod(shape):
                raise ValueError("array payload does not match its shape")
            return arr.reshape(shape).copy()
        if set(value) == {"__float__"}:
            if type(value["__float__"]) is not str:
                raise ValueError("refused float")
            return float(value["__float__"])
        return {k: _revive(v, depth + 1) for k, v in value.items()}
    return value


def encode(value: Any) -> bytes:
    """One message as a single JSON line (bytes, newline-terminated)."""
    return json.dumps(_plain(value, 0), separators=(",", ":"), allow_nan=False).encode() + b"\n"


def decode(line: bytes) -> Any:
    """Parse one message; arrays come back as fresh writable numpy arrays.

    Only JSON is parsed (nothing is ever unpickled or evaluated); anything malformed, nested
    too deeply or not plain data raises ValueError.
    """
    try:
        return _revive(json.loads(line))
    except RecursionError:
        raise ValueError("message nested too deeply") from None
