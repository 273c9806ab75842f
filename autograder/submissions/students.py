"""Who a submission belongs to: the student's id, the one key every roster and list matches it by."""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path


def student_name(path: Path) -> str:
    """The student's id as the submission's name (`ada.zip` and `ada/` are both `ada`)."""
    name = path.name.removesuffix(".zip").removesuffix(".ipynb") if path.is_file() else path.name
    return os.fsencode(name).decode("utf-8", "replace")  # undecodable bytes of a name: replaced


def student_key(student: str) -> str:
    """The key a student id is matched by everywhere (exam variants, time lists, Canvas, Moodle, LTI).

    NFC first: a name from a macOS zip arrives decomposed (NFD), the same name typed in a roster
    composed, and Bangla vowel signs make the two differ; then trimmed and case-folded.
    """
    return unicodedata.normalize("NFC", student).strip().casefold()


def safe_name(student: str) -> str:
    """A folder name for a student id that cannot escape OUT."""
    cleaned = re.sub(r"[^\w.@+-]", "_", student).lstrip(".")
    return cleaned or "_"
