"""A fingerprint of a piece of code and the lines it covers, hashed the same in every process.

Labels (strings) are hashed once with BLAKE2 (str's hash() is salted per process); what is built
from them is hashed as a tuple of ints, whose hash() is the same in every process of one Python.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Print:
    """One fingerprint: the hash of a normalized piece of code, and its first and last line."""

    hash: int
    first: int
    last: int


_LABELS: dict[str, int] = {}


def label_hash(label: str) -> int:
    """The stable hash of a label, computed once per process."""
    found = _LABELS.get(label)
    if found is None:
        found = _LABELS[label] = stable_hash(label)
    return found


def combine(*parts: int) -> int:
    """The hash of a sequence of hashes: the same in every process (ints are not salted)."""
    return hash(parts)


def stable_hash(*parts: str | int) -> int:
    """A 63-bit hash of strings and hashes, the same in every process (str's hash() is salted)."""
    data = bytearray()
    for part in parts:
        if isinstance(part, int):
            data += b"\x01" + part.to_bytes(8, "little")
        else:
            data += b"\x02" + part.encode("utf-8", "surrogatepass") + b"\x00"
    return int.from_bytes(hashlib.blake2b(bytes(data), digest_size=8).digest(), "little") >> 1
