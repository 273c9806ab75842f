"""The instructor's forms read and checked: an adjustment's scope and points, a reason, a moment, a release.

Each reader gives the value or raises FormProblem with the key of the pages' text that says what
to fix; nothing is recorded from a form that fails one check. A moment is the page's script's
exact UTC reading of the browser's `datetime-local` field (`<name>_utc`), or, without the script,
that field read in the assignment's time zone (the exam's, else UTC), or an ISO 8601 moment.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime, tzinfo

from autograder.config import Assignment
from autograder.service.records_view import MAX_TEXT, Scope


class FormProblem(ValueError):
    """A form field that cannot be recorded; `key` names the pages' text saying what to fix."""

    def __init__(self, key: str, **fields: str):
        super().__init__(key)
        self.key = key
        self.fields = fields


def text_field(form: Mapping[str, str], name: str, missing: str, *, required: bool = True) -> str:
    """A message or a reason: trimmed, not empty (when required), at most MAX_TEXT characters."""
    value = form.get(name, "").replace("\r\n", "\n").strip()
    if required and not value:
        raise FormProblem(missing)
    if len(value) > MAX_TEXT:
        raise FormProblem("form_too_long", limit=str(MAX_TEXT))
    return value


def scope_field(form: Mapping[str, str], offered: list[tuple[str, str, str]]) -> Scope:
    """The adjustment's scope: one of the form's offered values (the total, a task, a check)."""
    value = form.get("scope", "total")
    for option, task, check in offered:
        if option == value:
            return Scope(task, check)
    raise FormProblem("form_bad_scope")


def points_field(form: Mapping[str, str], limit: float) -> float:
    """Points given (+) or taken (-): a finite number within the assignment's maximum."""
    text = form.get("points", "").strip().replace(",", ".")
    try:
        points = float(text)
    except ValueError:
        raise FormProblem("form_bad_points", limit=f"{limit:g}") from None
    if not math.isfinite(points) or abs(points) > limit:
        raise FormProblem("form_bad_points", limit=f"{limit:g}")
    return round(points, 6)


def zone_of(target: Assignment) -> tzinfo:
    return target.exam.tz if target.exam is not None else UTC


def zone_name(target: Assignment) -> str:
    """The zone a form's moment is read in without the page's script (the exam's, else UTC)."""
    return str(zone_of(target))


def moment_field(form: Mapping[str, str], name: str, target: Assignment) -> datetime | None:
    """The moment a form gives in `name` (None when the field is empty)."""
    exact = form.get(f"{name}_utc", "").strip()
    text = form.get(name, "").strip()
    if not text and not exact:
        return None
    for candidate in (exact, text):
        if not candidate:
            continue
        try:
            found = datetime.fromisoformat(candidate.replace("Z", "+00:00"))
        except ValueError:
            continue
        if found.tzinfo is None:
            found = found.replace(tzinfo=zone_of(target))
        return found.astimezone(UTC)
    raise FormProblem("form_bad_moment")
