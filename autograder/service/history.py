"""A student's uploads as their page shows them: each with its gradings (regrades in its history), released.

Plain data (the page renders it, its script renders the same from JSON): the shown grading of an
upload is its newest graded one, cut by the release rule; a regrade never shows as an upload of
its own. Times are ISO 8601 moments the browser writes in the launch's locale and its own zone.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from flask import url_for

from autograder.config import Assignment
from autograder.grading.results import SubmissionResult, result_from_dict
from autograder.ledger.inbox import Inbox, Received
from autograder.service.queue import TEXT
from autograder.service.release import NONE, PUBLIC, Release, Rules, release_of, visible
from autograder.service.texts import iso_text, with_times


def message_text(message: str, t: dict[str, str]) -> str:
    """A row's message in the page's language (a key of the texts), or as the grading wrote it."""
    return t.get(message.removeprefix(TEXT), message) if message.startswith(TEXT) else message


def release_note(release: Release, t: dict[str, str]) -> tuple[str, list[list[str]]]:
    """What the page says of a grade the release rule cuts ("" when it shows all of it)."""
    if release.held:  # the instructor's release (`autograder release`), before any exam policy
        if release.until is not None:
            return with_times(t["held_until"], release=release.until)
        return with_times(t["held_by_instructor"])
    if release.until is None or release.level not in (PUBLIC, NONE):
        return "", []
    key = "public_only" if release.level == PUBLIC else "hidden_until_deadline"
    return with_times(t[key], deadline=release.until)


class Listing:
    """One student's uploads of one assignment, as they may see them now."""

    def __init__(self, inbox: Inbox, target: Assignment, student: str, t: dict[str, str], now: datetime):
        self.inbox = inbox
        self.target = target
        self.student = student
        self.t = t
        with inbox.lock:  # the ledger's release record and extensions (the connection is the inbox's)
            rules = Rules.of(inbox.book, target.id)
        self.release = release_of(target, student, now, rules)
        self.current = inbox.current_signature(target.id, student)
        self._results: dict[int, dict[str, Any] | None] = {}

    def _result(self, row: Received) -> dict[str, Any] | None:
        if row.id not in self._results:
            self._results[row.id] = self.inbox.result(row.id) if row.status == "graded" else None
        return self._results[row.id]

    def shown(self, row: Received) -> SubmissionResult | None:
        """The released part of a graded row's result (None: nothing of it may be seen yet)."""
        data = self._result(row)
        if not data:
            return None
        result = result_from_dict(data)
        if self._signature(row) == self.current != "":  # the current grade, as it counts: adjusted
            with self.inbox.lock:
                result = self.inbox.book.adjusted(result)
        return visible(result, self.release)

    def upload(self, upload: Received) -> dict[str, Any]:
        """One upload with its history and the grading it shows."""
        t = self.t
        rows = self.inbox.gradings(upload.id)
        graded = [r for r in rows if r.status == "graded"]
        row = graded[-1] if graded else rows[-1]
        data: dict[str, Any] = {
            "id": upload.id, "filename": upload.filename, "received_at": iso_text(upload.received_at),
            "status": row.status, "status_text": t.get(row.status, row.status),
            "status_url": url_for("student_submission", row_id=upload.id),
            "score": None, "max_score": None, "note": "", "note_parts": [], "feedback_url": None,
            "message": message_text(row.message, t) if row.message else "",
            "graded_at": iso_text(row.graded_at), "regrading": any(r.waiting for r in rows[1:]),
            "counts": False, "history": [],
        }
        if row.status == "graded":
            shown = self.shown(row)
            data["note"], data["note_parts"] = release_note(self.release, t)
            if shown is not None:
                data["score"], data["max_score"] = shown.score, shown.max_score
                data["feedback_url"] = url_for("student_feedback", row_id=upload.id)
            data["counts"] = self._signature(row) == self.current != ""
        for number, grading in enumerate(rows):
            entry: dict[str, Any] = {"kind": "regraded" if number else "graded", "kind_text":
                     t["history_regraded" if number else "history_graded"], "status": grading.status,
                     "status_text": t.get(grading.status, grading.status), "at": iso_text(grading.graded_at),
                     "score": None, "max_score": None}
            shown = self.shown(grading)
            if shown is not None:
                entry["score"], entry["max_score"] = shown.score, shown.max_score
            data["history"].append(entry)
        return data

    def _signature(self, row: Received) -> str:
        data = self._result(row)
        return str((data or {}).get("provenance", {}).get("signature", ""))

    def all(self) -> list[dict[str, Any]]:
        """Every upload, newest first; the one whose grade is current marked (the newest, if several are)."""
        views = [self.upload(u) for u in self.inbox.of_student(self.target.id, self.student)]
        marked = False
        for view in views:
            view["counts"], marked = view["counts"] and not marked, marked or view["counts"]
        return views
