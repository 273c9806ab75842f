"""Who a submission belongs to: the one identity rule every path applies to a student id, first.

The rule (`student_id`): Unicode NFC (a name from a macOS zip arrives decomposed, NFD, the same
name typed in a roster composed, and Bangla vowel signs make the two differ), whitespace trimmed
and each run of it made one space, then case-folded (`Rahim` and `rahim` are one student, as an
LMS's email or username is). The batch, the cluster, the service's launches, the rosters and
every export match and store ids in this form only, so two spellings of one id are one student.

A student's output folder (`folder_name`) is derived from the id, one to one and short: an id
made of `a-z 0-9 . _ @ + -` (not starting with a dot, at most 64 characters, not a device name)
is its own folder; any other id gets a readable part and `~` and 12 hex digits of its sha256
(`rahim khan` -> `rahim_khan~5f0c...`). A plain id never holds `~`, so no plain id can take the
folder of another, and a hashed name is at most 48 + 13 bytes long whatever the id's length.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from pathlib import Path

PLAIN_ID = re.compile(r"[a-z0-9_@+\-][a-z0-9._@+\-]{0,63}")
READABLE_BYTES = 48  # of a hashed folder name's readable part, before `~` and the hash
HASH_CHARS = 12  # hex digits of sha256(id) in a hashed folder name
# Names Windows reserves for devices (a folder `con` cannot be made there, or unzipped).
DEVICES = frozenset({"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)),
                     *(f"lpt{i}" for i in range(10))})
_SPACES = re.compile(r"\s+")


def student_id(text: str) -> str:
    """The student's id: NFC, trimmed, inner whitespace one space, case-folded (see the module)."""
    composed = unicodedata.normalize("NFC", text)
    spaced = _SPACES.sub(" ", composed).strip()
    return unicodedata.normalize("NFC", spaced.casefold())  # casefold can decompose (İ -> i + dot)


# Rosters, time lists and variants match by the same rule; the name says what they use it for.
student_key = student_id


def is_student_id(text: str) -> bool:
    """True when `text` is already in the identity rule's form (what the ledger stores)."""
    return bool(text) and student_id(text) == text


def raw_name(path: Path) -> str:
    """A submission's name before the rule: `Ada.zip`, `Ada.ipynb` and `Ada/` are all `Ada`."""
    name = path.name
    if not path.is_dir():
        for suffix in (".zip", ".ipynb", ".py"):
            if name.lower().endswith(suffix):
                name = name[: -len(suffix)]
                break
    return os.fsencode(name).decode("utf-8", "replace")  # undecodable bytes of a name: replaced


def student_name(path: Path) -> str:
    """The student's id for a submission: its name (see `raw_name`) under the identity rule."""
    return student_id(raw_name(path))


def _readable(student: str) -> str:
    """Letters (any script, with their vowel signs), digits and `._@+-` kept; others become `_`."""
    kept = "".join(c if c in "._@+-" or unicodedata.category(c)[0] in "LMN" else "_" for c in student)
    kept = "_" + kept[1:] if kept.startswith(".") else kept
    data = kept.encode("utf-8")[:READABLE_BYTES]
    return data.decode("utf-8", "ignore")  # a character cut in half is dropped


def folder_name(student: str) -> str:
    """The student's folder in OUT: the id itself when plain, else readable part + `~` + hash."""
    if PLAIN_ID.fullmatch(student) and student.split(".")[0] not in DEVICES:
        return student
    digest = hashlib.sha256(student.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_CHARS]
    return f"{_readable(student)}~{digest}"


# Older callers (exam bundles) name a student's folder by this name.
safe_name = folder_name
