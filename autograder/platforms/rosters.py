"""Every roster the kit accepts, read one way and matched to student ids by `student_key`."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from autograder.errors import AutograderError
from autograder.platforms.lti.config import NRPS_MATCHES
from autograder.platforms.lti.errors import LtiError
from autograder.submissions.students import student_key

LTI_ROSTER_COLUMNS = ("student", "lti_user_id")


def _read_text(path: Path, what: str, error: type[AutograderError], hint: str = "") -> str:
    """A roster file's text (UTF-8, with or without a byte-order mark); `error` says what is wrong."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise error(f"{what} {path} not found") from None
    except UnicodeDecodeError:
        raise error(f"{what} {path} is not UTF-8 text{hint}") from None


def _cell(row: list[str], i: int) -> str:
    return row[i] if i < len(row) else ""


# -- LTI --------------------------------------------------------------------------------------
def read_lti_roster(path: Path) -> dict[str, str]:
    """student_key -> LTI user id, from a CSV with the header `student,lti_user_id`.

    Other columns are ignored; a row with an empty lti_user_id leaves that student unmatched.
    """
    text = _read_text(path, "roster", LtiError)
    rows = list(csv.reader(io.StringIO(text, newline="")))
    header = [h.strip().casefold() for h in rows[0]] if rows else []
    for needed in LTI_ROSTER_COLUMNS:
        if needed not in header:
            raise LtiError(
                f"roster {path} has no {needed!r} column: its header must be {','.join(LTI_ROSTER_COLUMNS)}"
            )
    mapping: dict[str, str] = {}
    # Line numbers count rows, not blank lines: as csv.DictReader counted them before.
    for line, cells in enumerate((row for row in rows[1:] if row), start=2):
        row = dict(zip(header, cells, strict=False))
        student = row.get("student", "").strip()
        if not student:
            continue
        if student_key(student) in mapping:
            raise LtiError(f"roster {path} line {line}: student {student!r} is listed twice")
        mapping[student_key(student)] = row.get("lti_user_id", "").strip()
    return {k: v for k, v in mapping.items() if v}


def roster_from_members(members: Iterable[Mapping[str, Any]], match: str) -> dict[str, str]:
    """student_key -> LTI user id, from the platform's NRPS members: `match` field -> `user_id`.

    Members whose status is Deleted are left out; a value held by two members is ambiguous and
    matches neither.
    """
    if match not in NRPS_MATCHES:
        raise LtiError(f"nrps_match must be one of {', '.join(NRPS_MATCHES)}, got {match!r}")
    mapping: dict[str, str] = {}
    ambiguous: set[str] = set()
    for member in members:
        if str(member.get("status", "Active")) == "Deleted" or not member.get("user_id"):
            continue
        value = member.get(match)
        if not value:
            continue
        key = student_key(str(value))
        if key in mapping and mapping[key] != str(member["user_id"]):
            ambiguous.add(key)
        mapping[key] = str(member["user_id"])
    return {k: v for k, v in mapping.items() if k not in ambiguous}
