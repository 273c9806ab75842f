"""One student's AGS score: its body, the learner-visible comment, the fingerprint a rerun compares."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from autograder.grading.results import SubmissionResult

COMMENT_LIMIT = 1000


def score_comment(result: SubmissionResult, label: str, max_score: float | None = None) -> str:
    """The learner-visible summary: the total and each task's points (no hidden check details)."""
    tasks = "; ".join(f"{t.task} {t.score:g}/{t.max_score:g}" for t in result.tasks)
    total = result.max_score if max_score is None else max_score
    text = f"{label}: {result.score:g}/{total:g}." + (f" {tasks}." if tasks else "")
    problem = str(result.problem or "").rstrip(".")
    if problem:
        text += f" Not graded: {problem}."
    return text if len(text) <= COMMENT_LIMIT else text[: COMMENT_LIMIT - 1] + "…"


def score_fingerprint(user_id: str, score: float, max_score: float, comment: str) -> str:
    """What a rerun compares: a different user id, score, maximum or comment means send again."""
    data = json.dumps([user_id, round(score, 6), round(max_score, 6), comment], ensure_ascii=False)
    return hashlib.sha256(data.encode()).hexdigest()


def score_body(user_id: str, score: float, max_score: float, comment: str, timestamp: str) -> dict[str, Any]:
    """The AGS score (application/vnd.ims.lis.v1.score+json) of a final autograder result."""
    return {
        "userId": user_id,
        "scoreGiven": round(score, 6),
        "scoreMaximum": round(max_score, 6),
        "comment": comment,
        "activityProgress": "Completed",
        "gradingProgress": "FullyGraded",
        "timestamp": timestamp,
    }


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

    def body(self, timestamp: str) -> dict[str, Any]:
        return score_body(self.user_id, self.score, self.max_score, self.comment, timestamp)
