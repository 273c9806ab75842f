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
# What OUT holds besides the students' folders (output/, ledger/, platforms/ write these names).
RESERVED_NAMES = frozenset({"gradebook.sqlite", "grades.csv", "report.html", "similarity", "similarity.csv",
                            "similarity_pairs.csv", "junit", "exports", "out-files.json"})
RESERVED_SUFFIXES = (".csv", ".html", ".htm", ".json", ".xml", ".md", ".sqlite", ".sqlite-wal", ".sqlite-shm",
                     ".sqlite-journal", ".db", ".partial", ".tmp", ".lock", ".zip", ".txt")


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


def reserved(name: str) -> bool:
    """True when `name` is, or could be, one of OUT's own files (see the module)."""
    lower = name.lower()
    return lower in RESERVED_NAMES or lower.endswith(RESERVED_SUFFIXES) or lower.startswith("gradebook.")


def folder_name(student: str) -> str:
    """The student's folder in OUT: the id itself when plain, else readable part + `~` + hash."""
    if PLAIN_ID.fullmatch(student) and student.split(".")[0] not in DEVICES and not reserved(student):
        return student
    digest = hashlib.sha256(student.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_CHARS]
    return f"{_readable(student)}~{digest}"


# Older callers (exam bundles) name a student's folder by this name.
safe_name = folder_name


# Characters that reorder or hide what follows them (U+202E shows `exe.txt` as `txt.exe`): a name
# that holds them is printed with each one as its code (`<U+202E>`), in the terminal, CSV files,
# LMS files and pages. Ids are case-folded, so an id never holds the upper-case text `<U+...>` itself,
# and `original_name` undoes `shown_name` exactly (verify reads grades.csv back).
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
JOINERS = frozenset("\u200c\u200d")  # Bangla spells with them: kept
_CODE = re.compile(r"<U\+([0-9A-F]{4,6})>")


def _hidden(ch: str) -> bool:
    return ch in BIDI_CONTROLS or (ch not in JOINERS and unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cs",
                                                                                       "Zl", "Zp"))


def shown_name(name: str) -> str:
    """`name` with every control or format character (bidi overrides first) written as `<U+XXXX>`."""
    return "".join(f"<U+{ord(c):04X}>" if _hidden(c) else c for c in name)


def original_name(shown: str) -> str:
    """The name `shown_name` was given (its exact inverse on student ids)."""
    return _CODE.sub(lambda m: chr(int(m.group(1), 16)), shown)


def inert_bidi(text: str) -> str:
    """`text` with its bidi controls written as `<U+XXXX>` (what every page does to what it shows)."""
    if not any(c in BIDI_CONTROLS for c in text):
        return text
    return "".join(f"<U+{ord(c):04X}>" if c in BIDI_CONTROLS else c for c in text)
