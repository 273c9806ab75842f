"""Plain-data transport between grader and worker: a JSON line, then its arrays' raw bytes; never pickle.

A message is one JSON object on one line. When it holds arrays, its `__blobs__` key lists the
byte sizes of their data, which follows the line as raw bytes in that order; each array is
`{"__ndarray__": <index of its blob>, "dtype": ..., "shape": [...]}`. Readers learn the frame's
full length from its (small) line alone, and no array is ever text-encoded or re-parsed.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

ARRAY_TAG = "__ndarray__"
BLOBS = "__blobs__"
MAX_BLOBS = 4096
ALLOWED_DTYPES = frozenset(
    ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
)
MAX_DEPTH = 32
MAX_DECODE_DEPTH = MAX_DEPTH + 8  # a value, inside the worker's reply envelope
# Exactly NumPy's own scalar types (a subclass can claim `__module__ = "numpy"`).
NUMPY_SCALARS = frozenset(
    [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
     np.float16, np.float32, np.float64, np.longlong, np.ulonglong, np.intc, np.uintc]
)


class EncodeError(TypeError):
    """A value is not plain data (or is a subclass pretending to be)."""


def _plain(value: Any, depth: int, blobs: list[bytes]) -> Any:
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
        return [_plain(v, depth + 1, blobs) for v in value]
    if kind is dict:
        out = {}
        for k, v in value.items():
            if type(k) is not str:
                raise EncodeError(f"dict key of type {type(k).__name__}, expected str")
            if k == BLOBS:
                raise EncodeError(f"the key {BLOBS!r} is reserved")
            out[k] = _plain(v, depth + 1, blobs)
        return out
    if kind is np.ndarray:
        if value.dtype.name not in ALLOWED_DTYPES:
            raise EncodeError(f"array of dtype {value.dtype.name} cannot be sent")
        if len(blobs) >= MAX_BLOBS:
            raise EncodeError(f"more than {MAX_BLOBS} arrays in one message")
        data = np.ascontiguousarray(value, dtype=value.dtype.newbyteorder("="))
        blobs.append(data.tobytes())
        return {ARRAY_TAG: len(blobs) - 1, "dtype": value.dtype.name, "shape": list(value.shape)}
    if kind in NUMPY_SCALARS:
        return _plain(value.item(), depth, blobs)
    raise EncodeError(f"cannot send a value of type {kind.__module__}.{kind.__qualname__}")


def _revive(value: Any, blobs: list[memoryview], depth: int = 0) -> Any:
    if depth > MAX_DECODE_DEPTH:
        raise ValueError("message nested too deeply")
    if type(value) is list:
        return [_revive(v, blobs, depth + 1) for v in value]
    if type(value) is dict:
        if ARRAY_TAG in value:
            dtype = value.get("dtype")
            if type(dtype) is not str or dtype not in ALLOWED_DTYPES:
                raise ValueError(f"refused array dtype {dtype!r}")
            shape = value.get("shape")
            if type(shape) is not list or len(shape) > 32 or any(type(n) is not int or n < 0 for n in shape):
                raise ValueError("refused array shape")
            index = value[ARRAY_TAG]
            if type(index) is not int or not 0 <= index < len(blobs):
                raise ValueError("refused array payload")
            raw = blobs[index]
            kind = np.dtype(dtype)
            if len(raw) != math.prod(shape) * kind.itemsize:
                raise ValueError("array payload does not match its shape")
            return np.frombuffer(raw, dtype=kind).reshape(shape).copy()
        if set(value) == {"__float__"}:
            if type(value["__float__"]) is not str:
                raise ValueError("refused float")
            return float(value["__float__"])
        return {k: _revive(v, blobs, depth + 1) for k, v in value.items() if k != BLOBS}
    return value


def blob_sizes(header: Any) -> list[int]:
    """The sizes of the raw parts that follow a message's line (checked: plain non-negative ints)."""
    if type(header) is not dict or BLOBS not in header:
        return []
    sizes = header[BLOBS]
    if type(sizes) is not list or len(sizes) > MAX_BLOBS or any(type(n) is not int or n < 0 for n in sizes):
        raise ValueError("refused blob sizes")
    return sizes


def parse_header(line: bytes) -> tuple[Any, int]:
    """A message's line, parsed, and how many raw bytes follow it."""
    try:
        header = json.loads(line)
    except RecursionError:
        raise ValueError("message nested too deeply") from None
    return header, sum(blob_sizes(header))


def revive(header: Any, payload: bytes | memoryview = b"") -> Any:
    """The value of a parsed line and the raw bytes that followed it; arrays are fresh copies."""
    sizes = blob_sizes(header)
    if len(payload) != sum(sizes):
        raise ValueError("the raw part does not match the sizes the message lists")
    view, blobs, at = memoryview(payload), [], 0
    for size in sizes:
        blobs.append(view[at : at + size])
        at += size
    try:
        return _revive(header, blobs)
    except RecursionError:
        raise ValueError("message nested too deeply") from None


def plain(message: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
    """A message as its JSON-ready dict (listing `__blobs__` when it has arrays) and its raw part."""
    if type(message) is not dict:
        raise EncodeError("a message is a dict")
    blobs: list[bytes] = []
    value = _plain(message, 0, blobs)
    if blobs:
        value[BLOBS] = [len(b) for b in blobs]
    return value, b"".join(blobs)


def encode(message: dict[str, Any]) -> bytes:
    """One message: its JSON line (newline-terminated), then the raw bytes of its arrays."""
    value, payload = plain(message)
    return json.dumps(value, separators=(",", ":"), allow_nan=False).encode() + b"\n" + payload


def decode(frame: bytes) -> Any:
    """Parse one whole message (its line and raw part); arrays come back as fresh writable arrays.

    Only JSON is parsed (nothing is ever unpickled or evaluated); anything malformed, nested
    too deeply or not plain data raises ValueError.
    """
    end = frame.find(b"\n")
    line, payload = (frame, b"") if end < 0 else (frame[:end], frame[end + 1 :])
    header, _ = parse_header(line)
    return revive(header, payload)
