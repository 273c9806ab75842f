"""The service's inbox in the gradebook's SQLite file: every accepted upload, stored before it is queued.

Table `received` holds one row per upload with its bytes, who sent it (from the launch), and its
status: queued -> grading -> graded | failed. A row becomes `graded` in the same transaction as
the ledger's grade, so a server killed at any moment either graded a submission or finds it
queued (or grading) again when it starts: none is lost, none is graded twice. A row being graded
is claimed by one grading process (grading_claims.py): several processes may share the file (web
workers that only add rows and read them, grading processes that take them); news of a change
reaches them all (changes.py).

A regrade is a row of its own (`regrade_of` names the upload): it keeps the upload's receipt time,
so its lateness is the upload's, and the student's list shows it in that upload's history, never
as an upload. Which grading is the student's current grade follows the assignment's `counts`:
the newest upload's (latest), or the best one's among those graded by the same graders (best).
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from autograder.grading.results import SubmissionResult, result_from_dict, result_to_dict
from autograder.ledger import changes, grading_claims
from autograder.ledger.book import Gradebook
from autograder.ledger.grading_claims import OURS, Grader
from autograder.ledger.received import COLUMNS, INBOX_SCHEMA, REGRADES_INDEX, Received, utc_now

__all__ = ["DUPLICATE_SECONDS", "Inbox", "Received", "utc_now"]

log = logging.getLogger("autograder.service")  # the inbox serves the service alone: its log is theirs
DUPLICATE_SECONDS = 10.0  # the same bytes again this soon (or while still waiting): one upload, not two


class _NotOurs(Exception):
    """The row stopped being this process's claim before its grade landed: nothing is recorded."""


class Inbox:
    """Table `received` on the gradebook's connection; one lock, since request threads share it."""

    def __init__(self, book: Gradebook):
        self.book = book
        self.db = book.db
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)  # notified whenever the file may have changed
        self.me = Grader.this_process()  # whose claims the rows this inbox takes are
        self._listeners: list[Callable[[], None]] = []
        self._watcher: changes.Watcher | None = None
        with self.lock, self.db:
            self.db.executescript(INBOX_SCHEMA)
            if "regrade_of" not in {r[1] for r in self.db.execute("PRAGMA table_info(received)")}:
                self.db.execute("ALTER TABLE received ADD COLUMN regrade_of INTEGER REFERENCES received (id)")
            self.db.execute(REGRADES_INDEX)
            self.db.executescript(changes.VERSIONS_SCHEMA)
            grading_claims.prepare(self.db)

    def close(self) -> None:
        if self._watcher is not None:
            self._watcher.close()
        self.book.close()

    # -- changes a page (or a grading queue) waits for -----------------------------------------
    def _touch(self, assignment: str, student: str) -> None:
        """Under the lock, in the write's transaction: this student's rows changed; wake whoever waits."""
        changes.touch(self.db, assignment, student)
        self._notify()

    def _notify(self) -> None:
        with self.changed:
            self.changed.notify_all()
        for listener in self._listeners:
            listener()

    def watch(self, listener: Callable[[], None] | None = None) -> None:
        """Be told of changes made by other processes too (a listener is called on each)."""
        with self.lock:
            if listener is not None:
                self._listeners.append(listener)
            if self._watcher is None:
                self._watcher = changes.Watcher(self.book.path, self._notify)

    def version(self, assignment: str, student: str) -> int:
        with self.lock:
            return changes.version(self.db, assignment, student)

    def wait_version(self, assignment: str, student: str, since: int, timeout: float) -> int:
        """This student's version once it is past `since` (or after `timeout` s)."""
        self.watch()
        with self.changed:
            self.changed.wait_for(lambda: self.version(assignment, student) > since, timeout)
            return self.version(assignment, student)

    # -- rows in -----------------------------------------------------------------------------
    def add(self, *, assignment: str, student: str, user_id: str, lineitem: str, lang: str, filename: str,
            kind: str, upload: bytes, regrade: bool = False, received_at: str | None = None,
            regrade_of: int | None = None, now: datetime | None = None) -> Received:
        """Store an upload (committed before this returns: accepted means kept) as queued."""
        return self.accept(assignment=assignment, student=student, user_id=user_id, lineitem=lineitem,
                           lang=lang, filename=filename, kind=kind, upload=upload, regrade=regrade,
                           received_at=received_at, regrade_of=regrade_of, now=now, dedupe=False)[0]

    def accept(self, *, assignment: str, student: str, user_id: str, lineitem: str, lang: str, filename: str,
               kind: str, upload: bytes, regrade: bool = False, received_at: str | None = None,
               regrade_of: int | None = None, now: datetime | None = None,
               dedupe: bool = True) -> tuple[Received, bool]:
        """(row, False) for an upload stored as queued; with `dedupe`, (the earlier row, True) when the
        student sent the same bytes a moment ago or that upload still waits (a double click)."""
        digest = hashlib.sha256(upload).hexdigest()
        moment = now or datetime.now(UTC)
        with self.lock, self.db:
            if dedupe:
                earlier = self.db.execute(
                    f"SELECT {COLUMNS} FROM received WHERE assignment = ? AND student = ? AND sha256 = ?"
                    " AND regrade_of IS NULL ORDER BY id DESC LIMIT 1",
                    (assignment, student, digest)).fetchone()
                if earlier is not None:
                    before = Received(*earlier)
                    age = moment - datetime.fromisoformat(before.received_at)
                    if before.waiting or age < timedelta(seconds=DUPLICATE_SECONDS):
                        return before, True
            cursor = self.db.execute(
                "INSERT INTO received (assignment, student, user_id, lineitem, lang, filename, kind, upload,"
                " sha256, received_at, status, regrade, regrade_of)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?)",
                (assignment, student, user_id, lineitem, lang, filename, kind, upload, digest,
                 received_at or utc_now(moment), int(regrade), regrade_of),
            )
            row_id = int(cursor.lastrowid or 0)
            self._touch(assignment, student)
        found = self.get(row_id)
        assert found is not None
        return found, False

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
        """A student's uploads (never the regrades of them), newest first."""
        with self.lock:
            rows = self.db.execute(
                f"SELECT {COLUMNS} FROM received WHERE assignment = ? AND student = ? AND regrade_of IS NULL"
                " ORDER BY id DESC", (assignment, student),
            ).fetchall()
        return [Received(*r) for r in rows]

    def gradings(self, upload_id: int) -> list[Received]:
        """An upload's row and its regrades' rows, oldest first: its history."""
        with self.lock:
            rows = self.db.execute(
                f"SELECT {COLUMNS} FROM received WHERE id = ? OR regrade_of = ? ORDER BY id",
                (upload_id, upload_id),
            ).fetchall()
        return [Received(*r) for r in rows]

    def people(self, assignment: str) -> dict[str, Received]:
        """Each student's newest upload: whom their latest launch says they are (LTI user id, line
        item, language)."""
        with self.lock:
            rows = self.db.execute(
                f"SELECT {COLUMNS} FROM received WHERE id IN (SELECT MAX(id) FROM received"
                " WHERE assignment = ? AND regrade_of IS NULL GROUP BY student) ORDER BY student",
                (assignment,),
            ).fetchall()
        return {r.student: r for r in (Received(*row) for row in rows)}

    def assignments(self) -> list[str]:
        """The assignments anyone uploaded to."""
        with self.lock:
            return sorted(str(r[0]) for r in self.db.execute("SELECT DISTINCT assignment FROM received"))

    def waiting(self, assignment: str | None = None) -> list[Received]:
        """Queued and grading rows, oldest first (the instructor's view of the queue)."""
        query = f"SELECT {COLUMNS} FROM received WHERE status IN ('queued', 'grading')"
        args: tuple[str, ...] = ()
        if assignment:
            query, args = query + " AND assignment = ?", (assignment,)
        with self.lock:
            rows = self.db.execute(query + " ORDER BY id", args).fetchall()
        return [Received(*r) for r in rows]

    def to_regrade(self, assignment: str, counts: str, student: str | None = None) -> list[Received]:
        """The uploads a regrade grades again: each student's newest graded one (counts = latest), or
        every graded one (best: which is best is decided anew by the new graders); oldest first."""
        query = (f"SELECT {COLUMNS} FROM received WHERE regrade_of IS NULL AND assignment = ? AND id IN"
                 " (SELECT COALESCE(regrade_of, id) FROM received"
                 " WHERE assignment = ? AND status = 'graded')")
        args: tuple[str, ...] = (assignment, assignment)
        if student is not None:
            query, args = query + " AND student = ?", (*args, student)
        with self.lock:
            rows = [Received(*r) for r in self.db.execute(query + " ORDER BY id", args).fetchall()]
        if counts == "best":
            return rows
        newest: dict[str, Received] = {}
        for row in rows:
            newest[row.student] = row
        return sorted(newest.values(), key=lambda r: r.id)

    def requeue_interrupted(self) -> int:
        """At a queue's start: rows no live grading process holds (a stopped server's, and this inbox's
        own: nothing is in flight before its queue starts) are queued again; their grade never landed."""
        with self.lock, self.db:
            self.db.execute("BEGIN IMMEDIATE")
            return grading_claims.release_stale(self.db, self.me, own=True)

    def take(self, limit: int) -> list[Received]:
        """Up to `limit` queued rows, oldest first, now grading and claimed by this inbox's process, in
        one transaction (another process never takes them too); rows a dead process held come back first."""
        with self.lock, self.db:
            self.db.execute("BEGIN IMMEDIATE")
            if grading_claims.release_stale(self.db, self.me):
                log.info("queued again submissions a stopped grading process held")
            ids = grading_claims.claim_queued(self.db, self.me, limit)
            taken = [r for r in (self.get(i) for i in ids) if r is not None]
            for row in taken:
                self._touch(row.assignment, row.student)
        return taken

    def renew_claims(self) -> None:
        """Move the lease of the rows this process grades (its queue does, while it runs)."""
        with self.lock:
            grading_claims.renew(self.db, self.me)

    def graded_by(self, row_id: int) -> tuple[str, int] | None:
        """(host, pid) of the grading process that holds or graded the row."""
        with self.lock:
            return grading_claims.graded_by(self.db, row_id)

    def copy_for_regrade(self, upload: Received, now: datetime | None = None) -> Received | None:
        """Queue `upload` to be graded again: a row of its own with the upload's bytes and receipt time
        (so the same lateness), shown in the upload's history. None when a regrade of it already waits."""
        with self.lock:
            pending = self.db.execute(
                "SELECT 1 FROM received WHERE regrade_of = ? AND status IN ('queued', 'grading')",
                (upload.id,)).fetchone()
            if pending is not None:
                return None
            return self.add(assignment=upload.assignment, student=upload.student, user_id=upload.user_id,
                            lineitem=upload.lineitem, lang=upload.lang, filename=upload.filename,
                            kind=upload.kind, upload=self.upload(upload.id), regrade=True,
                            received_at=upload.received_at, regrade_of=upload.id, now=now)

    def current_signature(self, assignment: str, student: str) -> str:
        """The signature of the student's current grade ("" without one): which grading it is."""
        with self.lock:
            row = self.db.execute("SELECT signature FROM gradings WHERE assignment = ? AND student = ?"
                                  " AND current = 1", (assignment, student)).fetchone()
        return str(row[0]) if row else ""

    def current_grade(self, assignment: str, student: str, key: tuple[str, str]) -> SubmissionResult | None:
        """The student's current grade in the ledger, if it was computed from exactly `key`."""
        with self.lock:
            row = self.db.execute(
                "SELECT result FROM gradings WHERE assignment = ? AND student = ? AND current = 1"
                " AND submission_sha256 = ? AND grader_digest = ?", (assignment, student, *key)).fetchone()
        return result_from_dict(json.loads(row[0])) if row else None

    def _counts(self, row: Received, result: SubmissionResult, counts: str) -> bool:
        """Does this grading become the student's current grade? latest: unless a newer upload of theirs
        is graded already (an older upload finishing late never takes over); best: unless their
        current grade, by the same graders, is higher (one by other graders is stale and gives way)."""
        if counts == "best":
            found = self.db.execute(
                "SELECT score, grader_digest FROM gradings WHERE assignment = ? AND student = ?"
                " AND current = 1", (row.assignment, row.student)).fetchone()
            digest = str(result.provenance.get("grader_digest", ""))
            return found is None or found[1] != digest or result.score >= float(found[0])
        newest = self.db.execute(
            "SELECT MAX(COALESCE(regrade_of, id)) FROM received WHERE assignment = ? AND student = ?"
            " AND status = 'graded'", (row.assignment, row.student)).fetchone()[0]
        return newest is None or row.upload_id >= int(newest)

    def finish(self, row_id: int, result: SubmissionResult, *, record: bool = True,
               counts: str = "latest") -> None:
        """The grade in the ledger and the row graded, in one transaction (exactly once: only while the
        row is this process's claim); whether the grade is the student's current one follows `counts`
        (see `_counts`: one process grades a student's rows at a time, so it decides alone)."""
        payload = json.dumps(result_to_dict(result), ensure_ascii=False)
        with self.lock:  # this process's writes to `received` hold it: the status read here stays true
            row = self.get(row_id)
            if row is None or row.status != "grading":
                return  # already graded (or gone): never a second ledger row for one upload
            assignment, student = row.assignment, row.student

            def mark(db: sqlite3.Connection) -> None:
                done = db.execute(
                    "UPDATE received SET status = 'graded', score = ?, max_score = ?, result = ?,"
                    f" graded_at = ?, message = '' WHERE id = ? AND status = 'grading' AND {OURS}",
                    (result.score, result.max_score, payload, utc_now(), row_id, self.me.owner),
                ).rowcount
                if done != 1:
                    raise _NotOurs(row_id)
                changes.touch(db, assignment, student)

            try:
                if record:
                    current = self._counts(row, result, counts)
                    self.book.record(result, after=mark, force=True, current=current)
                else:
                    with self.db:
                        self.db.execute("BEGIN IMMEDIATE")
                        mark(self.db)
            except _NotOurs:
                log.warning("submission %d was taken back from this grading process: its grade is dropped",
                            row_id)
                return
            self._notify()

    def fail(self, row_id: int, message: str, *, retry: bool) -> None:
        """A grading that could not finish: queued again (`retry`) or failed, with why (a text key of
        the service's catalogue, or a message that names the problem)."""
        status = "queued" if retry else "failed"
        with self.lock, self.db:
            self.db.execute("BEGIN IMMEDIATE")
            changed = self.db.execute(f"UPDATE received SET status = ?, message = ? WHERE id = ?"
                                      f" AND status = 'grading' AND {OURS}",
                                      (status, message, row_id, self.me.owner)).rowcount
            row = self.get(row_id)
            if row is not None and changed:
                self._touch(row.assignment, row.student)

    def wait_change(self, row_id: int, seen: str, timeout: float) -> Received | None:
        """The row once its status is no longer `seen` (or after `timeout` s): a status request
        that waits instead of asking again and again."""
        self.watch()
        with self.changed:
            self.changed.wait_for(lambda: (r := self.get(row_id)) is None or r.status != seen, timeout)
            return self.get(row_id)

    def counts(self) -> dict[str, int]:
        with self.lock:
            rows = self.db.execute("SELECT status, COUNT(*) FROM received GROUP BY status").fetchall()
        return {str(s): int(n) for s, n in rows}
