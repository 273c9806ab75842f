"""The service's inbox in the gradebook's SQLite file: every accepted upload, stored before it is queued.

Table `received` holds one row per upload with its bytes, who sent it (from the launch), and its
status: queued -> grading -> graded | failed. A row becomes `graded` in the same transaction as
the ledger's grade, so a server killed at any moment either graded a submission or finds it
queued (or grading) again when it starts: none is lost, none is graded twice.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from autograder.grading.results import SubmissionResult, result_from_dict, result_to_dict
from autograder.ledger.book import Gradebook

STATUSES = ("queued", "grading", "graded", "failed")

INBOX_SCHEMA = """
CREATE TABLE IF NOT EXISTS received (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    assignment TEXT NOT NULL,
    student TEXT NOT NULL,
    user_id TEXT NOT NULL DEFAULT '',
    lineitem TEXT NOT NULL DEFAULT '',
    lang TEXT NOT NULL,
    filename TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('zip', 'ipynb')),
    upload BLOB NOT NULL,
    sha256 TEXT NOT NULL,
    received_at TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued', 'grading', 'graded', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    regrade INTEGER NOT NULL DEFAULT 0,
    score REAL,
    max_score REAL,
    result TEXT,
    graded_at TEXT,
    message TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS received_by_student ON received (assignment, student, id);
CREATE INDEX IF NOT EXISTS received_by_status ON received (status, id);
"""


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class Received:
    """One accepted upload and where its grading stands."""

    id: int
    assignment: str
    student: str
    user_id: str
    lineitem: str
    lang: str
    filename: str
    kind: str
    sha256: str
    received_at: str
    status: str
    attempts: int
    regrade: int  # 1: an instructor's regrade, graded again even if the ledger holds this key
    score: float | None
    max_score: float | None
    graded_at: str | None
    message: str

    def summary(self) -> dict[str, Any]:
        """What a page or the status endpoint shows of it (never the bytes)."""
        return {"id": self.id, "filename": self.filename, "received_at": self.received_at,
                "status": self.status, "score": self.score, "max_score": self.max_score,
                "graded_at": self.graded_at, "message": self.message}


COLUMNS = ("id, assignment, student, user_id, lineitem, lang, filename, kind, sha256, received_at, status,"
           " attempts, regrade, score, max_score, graded_at, message")


class Inbox:
    """Table `received` on the gradebook's connection; one lock, since request threads share it."""

    def __init__(self, book: Gradebook):
        self.book = book
        self.db = book.db
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)  # notified whenever a row's status changes
        with self.lock, self.db:
            self.db.executescript(INBOX_SCHEMA)

    def add(self, *, assignment: str, student: str, user_id: str, lineitem: str, lang: str, filename: str,
            kind: str, upload: bytes, regrade: bool = False) -> Received:
        """Store an upload (committed before this returns: accepted means kept) as queued."""
        digest = hashlib.sha256(upload).hexdigest()
        with self.lock, self.db:
            cursor = self.db.execute(
                "INSERT INTO received (assignment, student, user_id, lineitem, lang, filename, kind, upload,"
                " sha256, received_at, status, regrade) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?)",
                (assignment, student, user_id, lineitem, lang, filename, kind, upload, digest, utc_now(),
                 int(regrade)),
            )
            row_id = int(cursor.lastrowid or 0)
        found = self.get(row_id)
        assert found is not None
        return found

    def get(self, row_id: int) -> Received | None:
        with self.lock:
            row = self.db.execute(f"SELECT {COLUMNS} FROM received WHERE id = ?", (row_id,)).fetchone()
        return Received(*row) if row else None

    def owned(self, row_id: int, assignment: str, student: str) -> Received | None:
        """The row, only if it is this student's: the one way a page reaches a submission."""
        found = self.get(row_id)
        if found is None or found.assignment != assignment or found.student != student:
            return None
        return found

    def upload(self, row_id: int) -> bytes:
        with self.lock:
            row = self.db.execute("SELECT upload FROM received WHERE id = ?", (row_id,)).fetchone()
        return bytes(row[0]) if row else b""

    def result(self, row_id: int) -> dict[str, Any] | None:
        with self.lock:
            row = self.db.execute("SELECT result FROM received WHERE id = ?", (row_id,)).fetchone()
        return json.loads(row[0]) if row and row[0] else None

    def of_student(self, assignment: str, student: str) -> list[Received]:
        """A student's submissions, newest first."""
        with self.lock:
            rows = self.db.execute(
                f"SELECT {COLUMNS} FROM received WHERE assignment = ? AND student = ? ORDER BY id DESC",
                (assignment, student),
            ).fetchall()
        return [Received(*r) for r in rows]

    def waiting(self, assignment: str | None = None) -> list[Received]:
        """Queued and grading rows, oldest first (the instructor's view of the queue)."""
        query = f"SELECT {COLUMNS} FROM received WHERE status IN ('queued', 'grading')"
        args: tuple[str, ...] = ()
        if assignment:
            query, args = query + " AND assignment = ?", (assignment,)
        with self.lock:
            rows = self.db.execute(query + " ORDER BY id", args).fetchall()
        return [Received(*r) for r in rows]

    def latest_graded(self, assignment: str) -> list[Received]:
        """Each student's newest graded submission (what regrade-all grades again)."""
        with self.lock:
            rows = self.db.execute(
                f"SELECT {COLUMNS} FROM received WHERE id IN (SELECT MAX(id) FROM received"
                " WHERE assignment = ? AND status = 'graded' GROUP BY student) ORDER BY student",
                (assignment,),
            ).fetchall()
        return [Received(*r) for r in rows]

    def requeue_interrupted(self) -> int:
        """At start: rows a dead server was grading are queued again (their grade never landed)."""
        with self.lock, self.db:
            return self.db.execute("UPDATE received SET status = 'queued' WHERE status = 'grading'").rowcount

    def take(self, limit: int) -> list[Received]:
        """Up to `limit` queued rows, oldest first, now marked grading."""
        with self.lock, self.db:
            ids = [r[0] for r in self.db.execute(
                "SELECT id FROM received WHERE status = 'queued' ORDER BY id LIMIT ?", (limit,))]
            for row_id in ids:
                self.db.execute("UPDATE received SET status = 'grading', attempts = attempts + 1"
                                " WHERE id = ? AND status = 'queued'", (row_id,))
            self.changed.notify_all()
        return [r for r in (self.get(i) for i in ids) if r is not None]

    def copy_for_regrade(self, row: Received) -> Received:
        """A regrade is a new row with the same bytes: history keeps both gradings."""
        return self.add(assignment=row.assignment, student=row.student, user_id=row.user_id,
                        lineitem=row.lineitem, lang=row.lang, filename=row.filename, kind=row.kind,
                        upload=self.upload(row.id), regrade=True)

    def current_grade(self, assignment: str, student: str, key: tuple[str, str]) -> SubmissionResult | None:
        """The student's current grade in the ledger, if it was computed from exactly `key`."""
        with self.lock:
            row = self.db.execute(
                "SELECT result FROM gradings WHERE assignment = ? AND student = ? AND current = 1"
                " AND submission_sha256 = ? AND grader_digest = ?", (assignment, student, *key)).fetchone()
        return result_from_dict(json.loads(row[0])) if row else None

    def finish(self, row_id: int, result: SubmissionResult, *, record: bool = True) -> None:
        """The grade in the ledger and the row graded, in one transaction (exactly once)."""
        payload = json.dumps(result_to_dict(result), ensure_ascii=False)

        def mark(db: Any) -> None:
            db.execute(
                "UPDATE received SET status = 'graded', score = ?, max_score = ?, result = ?, graded_at = ?,"
                " message = '' WHERE id = ? AND status = 'grading'",
                (result.score, result.max_score, payload, utc_now(), row_id),
            )

        with self.lock:  # every write to `received` holds it: the status read here stays true
            row = self.db.execute("SELECT status FROM received WHERE id = ?", (row_id,)).fetchone()
            if row is None or row[0] != "grading":
                return  # already graded (or gone): never a second ledger row for one upload
            if record:
                self.book.record(result, after=mark, force=True)
            else:
                with self.db:
                    mark(self.db)
            self.changed.notify_all()

    def fail(self, row_id: int, message: str, *, retry: bool) -> None:
        """A grading that could not finish: queued again (`retry`) or failed, with why."""
        status = "queued" if retry else "failed"
        with self.lock, self.db:
            self.db.execute("UPDATE received SET status = ?, message = ? WHERE id = ?",
                            (status, message, row_id))
            self.changed.notify_all()

    def wait_change(self, row_id: int, seen: str, timeout: float) -> Received | None:
        """The row once its status is no longer `seen` (or after `timeout` s): a status request
        that waits instead of asking again and again."""
        with self.changed:
            self.changed.wait_for(lambda: (r := self.get(row_id)) is None or r.status != seen, timeout)
            return self.get(row_id)

    def counts(self) -> dict[str, int]:
        with self.lock:
            rows = self.db.execute("SELECT status, COUNT(*) FROM received GROUP BY status").fetchall()
        return {str(s): int(n) for s, n in rows}
