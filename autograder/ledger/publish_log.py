"""The ledger's log of scores published to an LMS: table lti_publishes, one row per attempt."""

# A row is `pending` before the score is sent, then `sent` or `refused` (with the platform's
# message). A crash or a network failure leaves `pending` rows, so the next run knows to send
# them; the gradebook's own table is never touched.

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from autograder.ledger import schema
from autograder.ledger.book import Gradebook

STATUSES = ("sent", "refused", "pending")


def iso_timestamp(moment: datetime | None = None) -> str:
    """ISO 8601 with milliseconds and the UTC offset: 2017-04-16T18:54:36.736+00:00."""
    return (moment or datetime.now(UTC)).astimezone(UTC).isoformat(timespec="milliseconds")


class QueuedScore(Protocol):
    """What the log records of a score about to be sent."""

    @property
    def student(self) -> str: ...
    @property
    def user_id(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def max_score(self) -> float: ...
    @property
    def comment(self) -> str: ...
    @property
    def fingerprint(self) -> str: ...


@dataclass(frozen=True)
class PublishRow:
    """The latest outcome of publishing one student's score."""

    id: int
    student: str
    user_id: str
    score: float
    max_score: float
    status: str
    http_status: int | None
    message: str
    fingerprint: str


class PublishLog:
    """Table lti_publishes in the gradebook's SQLite file: one row per publish of a student's score."""

    def __init__(self, book: Gradebook, create: bool = True):
        self.db = book.db
        if create:  # made on first use (its DDL is the ledger's, schema.py): a dry run writes nothing
            with self.db:
                for statement in schema.statements(schema.PUBLISHES):
                    self.db.execute(statement)

    @property
    def exists(self) -> bool:
        query = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'lti_publishes'"
        return self.db.execute(query).fetchone() is not None

    def latest(self, assignment: str, lineitem: str) -> dict[str, PublishRow]:
        """The latest row of each student for this assignment and line item."""
        if not self.exists:
            return {}
        rows = self.db.execute(
            "SELECT id, student, user_id, score, max_score, status, http_status, message, result_fingerprint"
            " FROM lti_publishes WHERE id IN (SELECT MAX(id) FROM lti_publishes"
            " WHERE assignment = ? AND lineitem = ? GROUP BY student)",
            (assignment, lineitem),
        )
        return {r[1]: PublishRow(*r) for r in rows}

    def queue(self, assignment: str, lineitem: str, items: Iterable[QueuedScore],
              latest: Mapping[str, PublishRow]) -> dict[str, int]:
        """Record every score about to be sent as pending, in one transaction; student -> row id.

        A student whose latest row is already pending keeps that row (updated), so history holds
        each outcome once.
        """
        now = iso_timestamp()
        ids: dict[str, int] = {}
        with self.db:
            for item in items:
                previous = latest.get(item.student)
                values = (item.user_id, item.score, item.max_score, item.comment, item.fingerprint, now)
                if previous and previous.status == "pending":
                    self.db.execute(
                        "UPDATE lti_publishes SET user_id = ?, score = ?, max_score = ?, comment = ?,"
                        " result_fingerprint = ?, queued_at = ?, message = 'queued', http_status = NULL"
                        " WHERE id = ?",
                        (*values, previous.id),
                    )
                    ids[item.student] = previous.id
                else:
                    cursor = self.db.execute(
                        "INSERT INTO lti_publishes (assignment, lineitem, student, user_id, score, max_score,"
                        " comment, result_fingerprint, queued_at, status, message)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 'queued')",
                        (assignment, lineitem, item.student, *values),
                    )
                    ids[item.student] = int(cursor.lastrowid or 0)
        return ids

    def finish(self, row_id: int, status: str, message: str, http_status: int | None = None,
               attempted_at: str | None = None) -> None:
        """Record how sending row `row_id` ended: sent, refused, or still pending."""
        if status not in STATUSES:
            raise ValueError(status)
        sent_at = iso_timestamp() if status == "sent" else None
        with self.db:
            self.db.execute(
                "UPDATE lti_publishes SET status = ?, message = ?, http_status = ?,"
                " attempted_at = COALESCE(?, attempted_at), sent_at = ? WHERE id = ?",
                (status, message, http_status, attempted_at, sent_at, row_id),
            )

    def rows(self, assignment: str | None = None) -> list[dict[str, Any]]:
        """Every row (for reports and tests), oldest first."""
        cursor = self.db.execute(
            "SELECT * FROM lti_publishes" + (" WHERE assignment = ?" if assignment else "") + " ORDER BY id",
            (assignment,) if assignment else (),
        )
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor]
