"""One student's AGS score: its body, the learner-visible comment, the fingerprint a rerun compares.

A score is final (FullyGraded) or, while a release rule still holds part of the grade back (an
exam's public checks before its deadline), pending: sent as Submitted / Pending, so the LMS shows
what the student sees on the tool's page and records no final grade yet.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from autograder.grading.results import SubmissionResult

COMMENT_LIMIT = 1000


def score_comment(result: SubmissionResult, label: str, max_score: float | None = None,
                  note: str = "") -> str:
    """The learner-visible summary: the total and each task's points (no hidden check details),
    then `note` (what a release rule says of it)."""
    tasks = "; ".join(f"{t.task} {t.score:g}/{t.max_score:g}" for t in result.tasks)
    total = result.max_score if max_score is None else max_score
    text = f"{label}: {result.score:g}/{total:g}." + (f" {tasks}." if tasks else "")
    problem = str(result.problem or "").rstrip(".")
    if problem:
        text += f" Not graded: {problem}."
    if note:
        text += f" {note}"
    return text if len(text) <= COMMENT_LIMIT else text[: COMMENT_LIMIT - 1] + "…"


def score_fingerprint(user_id: str, score: float, max_score: float, comment: str, final: bool = True) -> str:
    """What a rerun compares: a different user id, score, maximum, comment or finality means send again."""
    fields: list[Any] = [user_id, round(score, 6), round(max_score, 6), comment]
    if not final:  # a final score's fingerprint stays what it was before pending scores existed
        fields.append("pending")
    data = json.dumps(fields, ensure_ascii=False)
    return hashlib.sha256(data.encode()).hexdigest()


def score_body(user_id: str, score: float, max_score: float, comment: str, timestamp: str,
               final: bool = True) -> dict[str, Any]:
    """The AGS score (application/vnd.ims.lis.v1.score+json) of an autograder result: final
    (Completed, FullyGraded) or partly released (Submitted, Pending)."""
    return {
        "userId": user_id,
        "scoreGiven": round(score, 6),
        "scoreMaximum": round(max_score, 6),
        "comment": comment,
        "activityProgress": "Completed" if final else "Submitted",
        "gradingProgress": "FullyGraded" if final else "Pending",
        "timestamp": timestamp,
    }


@dataclass(frozen=True)
class ScoreView:
    """What a release rule lets the platform see of a result: the result as shown, and whether
    that is the final grade; `note` (learner-visible) is added to the comment."""

    result: SubmissionResult
    final: bool = True
    note: str = ""


@dataclass(frozen=True)
class PlannedScore:
    """A score about to be sent, and why (new, changed, still pending, refused before)."""

    student: str
    user_id: str
    score: float
    max_score: float
    comment: str
    fingerprint: str
    reason: str  # new | changed | pending | refused
    final: bool = True

    def body(self, timestamp: str) -> dict[str, Any]:
        return score_body(self.user_id, self.score, self.max_score, self.comment, timestamp, self.final)
