"""One accepted upload of the service's inbox as stored (table `received`) and read back."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

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
    message TEXT NOT NULL DEFAULT '',
    regrade_of INTEGER REFERENCES received (id)
);
CREATE INDEX IF NOT EXISTS received_by_student ON received (assignment, student, id);
CREATE INDEX IF NOT EXISTS received_by_status ON received (status, id);
"""
REGRADES_INDEX = "CREATE INDEX IF NOT EXISTS received_regrades ON received (regrade_of, id)"


def utc_now(moment: datetime | None = None) -> str:
    return (moment or datetime.now(UTC)).astimezone(UTC).isoformat(timespec="milliseconds")


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
    regrade_of: int | None = None  # the upload this row grades again (None: the row is an upload)

    @property
    def upload_id(self) -> int:
        return self.regrade_of if self.regrade_of is not None else self.id

    @property
    def waiting(self) -> bool:
        return self.status in ("queued", "grading")

    def summary(self) -> dict[str, Any]:
        """What a page or the status endpoint shows of it (never the bytes)."""
        return {"id": self.id, "filename": self.filename, "received_at": self.received_at,
                "status": self.status, "score": self.score, "max_score": self.max_score,
                "graded_at": self.graded_at, "message": self.message}


COLUMNS = ("id, assignment, student, user_id, lineitem, lang, filename, kind, sha256, received_at, status,"
           " attempts, regrade, score, max_score, graded_at, message, regrade_of")
