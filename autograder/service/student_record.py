"""One student's record of one assignment, as the instructor's page shows it: plain data for the template.

Every upload with its gradings (the first and each regrade) and its files, the scores over time,
the current grade as it counts (the ledger's current grading with the adjustments in force) and
what makes it current: the counting rule and which grading it picked, each adjustment (in force
or history), the student's extension, the assignment's release and what the student sees of it
now, and the regrade thread. Nothing here is cut by the release: the instructor sees all.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from autograder.config import Assignment
from autograder.grading.results import SubmissionResult, result_from_dict
from autograder.ledger import adjustments
from autograder.ledger.inbox import Inbox, Received
from autograder.ledger.release import Release, release_of
from autograder.service.records_view import Records, extension_text, release_state
from autograder.service.texts import iso, iso_text
from autograder.service.upload_files import files_of

CHART_WIDTH, CHART_HEIGHT, CHART_PAD = 560, 140, 12


@dataclass(frozen=True)
class Grading:
    """One grading of an upload (the first, or a regrade), with its score as graded."""

    id: int
    upload: int
    kind: str  # graded | regraded
    status: str
    at: str | None  # when it finished (ISO 8601, UTC)
    score: float | None
    max_score: float | None
    current: bool  # the ledger's current grade is this grading
    message: str


def signature_of(result: dict[str, Any] | None) -> str:
    return str((result or {}).get("provenance", {}).get("signature", ""))


def current_result(inbox: Inbox, assignment: str, student: str) -> SubmissionResult | None:
    """The ledger's current grading of the student, as graded (no adjustment applied)."""
    with inbox.lock:
        found = [r for r in inbox.book.current(assignment) if r.student == student]
    return found[0] if found else None


def gradings_of(inbox: Inbox, upload: Received, current: str) -> list[Grading]:
    found = []
    for number, row in enumerate(inbox.gradings(upload.id)):
        result = inbox.result(row.id) if row.status == "graded" else None
        found.append(Grading(row.id, upload.id, "regraded" if number else "graded", row.status,
                             iso_text(row.graded_at), row.score, row.max_score,
                             bool(current) and signature_of(result) == current, row.message))
    return found


def chart(timeline: list[Grading]) -> str:
    """The points of the score-over-time line (the share of the maximum, in grading order)."""
    shown = [g for g in timeline if g.score is not None and g.max_score]
    if not shown:
        return ""
    step = (CHART_WIDTH - 2 * CHART_PAD) / max(1, len(shown) - 1)
    points = []
    for index, grading in enumerate(shown):
        share = float(grading.score or 0.0) / float(grading.max_score or 1.0)
        x = CHART_PAD + step * index if len(shown) > 1 else CHART_WIDTH / 2
        y = CHART_PAD + (1.0 - share) * (CHART_HEIGHT - 2 * CHART_PAD)
        points.append(f"{x:.1f},{y:.1f}")
    return " ".join(points)


def record_of(inbox: Inbox, records: Records, target: Assignment, student: str, now: datetime,
              empty: bool = False) -> dict[str, Any] | None:
    """The student's record (None: the assignment holds nothing of theirs, unless `empty` asks for
    the page of a student who has not submitted yet: an extension given before they do)."""
    uploads = inbox.of_student(target.id, student)
    graded = current_result(inbox, target.id, student)
    thread = records.thread(target.id, student)
    history = records.adjustments(target.id, student)
    extensions = records.extensions(target.id, student)
    if not (uploads or graded or thread or history or extensions or empty):
        return None
    signature = inbox.current_signature(target.id, student)
    views = []
    timeline: list[Grading] = []
    for upload in uploads:
        gradings = gradings_of(inbox, upload, signature)
        timeline += [g for g in gradings if g.status == "graded"]
        views.append({"id": upload.id, "filename": upload.filename, "kind": upload.kind,
                      "received_at": iso_text(upload.received_at), "gradings": gradings,
                      "current": any(g.current for g in gradings),
                      "files": files_of(upload.kind, inbox.upload(upload.id))})
    timeline.sort(key=lambda g: (g.at or "", g.id))
    standing = adjustments.adjusted(graded, history) if graded is not None else None
    made = {a["id"]: a["made"] for a in adjustments.applied(standing)} if standing is not None else {}
    active = {a.id for a in adjustments.in_force(history)}
    deadline, exempt = extension_text(extensions[-1] if extensions else None)
    rules = records.rules(target.id)
    release: Release = release_of(target, student, now, rules)
    state_key, state_at = release_state(rules)
    return {
        "student": student, "uploads": views, "timeline": timeline, "chart": chart(timeline),
        "graded": graded, "standing": standing,
        "graded_score": adjustments.graded_score(standing) if standing is not None else None,
        "adjustments": [{"item": a, "in_force": a.id in active, "made": made.get(a.id)} for a in history],
        "extension": {"deadline": iso(deadline) if deadline else None, "exempt": exempt,
                      "row": extensions[-1] if extensions else None},
        "release": {"key": state_key, "at": iso(state_at) if state_at else None, "level": release.level,
                    "until": iso(release.until) if release.until else None},
        "thread": thread, "open": records.is_open(target.id, student),
        "scopes": scopes_of(graded, target),
    }


def scopes_of(graded: SubmissionResult | None, target: Assignment) -> list[tuple[str, str, str]]:
    """What an adjustment may apply to, as the form offers it: (value, task, check), the total first;
    each check of the current grading (so of the graders that made it), each task of the assignment."""
    found = [("total", "", "")]
    tasks = [t.task for t in graded.tasks] if graded is not None else [t.id for t in target.tasks]
    for task in tasks:
        found.append((f"task:{task}", task, ""))
        if graded is not None:
            for check in graded.task(task).checks:
                found.append((f"check:{task}:{check.check_id}", task, check.check_id))
    return found


def grading_result(inbox: Inbox, row: Received) -> SubmissionResult | None:
    """A graded row's result, with the adjustments in force when it is the current grade."""
    data = inbox.result(row.id) if row.status == "graded" else None
    if data is None:
        return None
    result = result_from_dict(data)
    if signature_of(data) and signature_of(data) == inbox.current_signature(row.assignment, row.student):
        with inbox.lock:
            return inbox.book.adjusted(result)
    return result
