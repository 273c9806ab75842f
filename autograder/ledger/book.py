"""The gradebook: every grading of every student, keyed by what it was computed from, each one signed.

A row records the result, its submission digest and grader digest (see grading/provenance.py),
its signature and the student's folder; the latest row of a student is current, earlier ones are
history. Recording a row and making it current is one entry of the signed log (log.py) in the
same transaction, so every row and every change of a current grade is signed; `audit.py` holds the
table against the log. A key that is already current is never recorded twice, so a rerun, a
retried task or a second run is harmless.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from autograder.errors import LedgerError
from autograder.grading.provenance import GRADER_FILES
from autograder.grading.results import SubmissionResult, result_from_dict, result_to_dict
from autograder.ledger import adjustments, log, records, schema, signing
from autograder.ledger.records import RecordKind
from autograder.submissions.students import folder_name, is_student_id, student_id

GRADEBOOK_FILE = "gradebook.sqlite"  # in the OUT folder of a graded batch
ROW_COLUMNS = ("id, assignment, student, score, max_score, current, result, submission_sha256, grader_digest,"
               " signature, graded_at, folder")


def find_gradebook(out: Path) -> Path:
    """The gradebook of a graded batch: OUT/gradebook.sqlite, or the SQLite file itself."""
    return out / GRADEBOOK_FILE if out.is_dir() else out


@dataclass(frozen=True)
class GradebookRow:
    """One grading as stored (for `verify`)."""

    id: int
    assignment: str
    student: str
    score: float
    max_score: float
    current: int
    result: str
    submission_sha256: str
    grader_digest: str
    signature: str
    graded_at: str = ""
    folder: str = ""

    def sealed(self) -> dict[str, Any]:
        """What a `grading` entry signs of this row (all of it but `current`, the result by hash)."""
        return {"row": self.id, "graded_at": self.graded_at, "score": self.score, "max_score": self.max_score,
                "submission_sha256": self.submission_sha256, "grader_digest": self.grader_digest,
                "signature": self.signature, "folder": self.folder,
                "result_sha256": hashlib.sha256(self.result.encode("utf-8")).hexdigest()}

    def digest(self) -> str:
        """sha256 of what `sealed` gives: how the log's start seals a row from before it."""
        return hashlib.sha256(log.canonical(self.sealed()).encode("utf-8")).hexdigest()


class Gradebook:
    """One SQLite file; a regrade supersedes a student's row and keeps the old one as history.

    `key`: the signing key for what is recorded (default: the one `signing.key_for` finds for
    this ledger, when first needed). `readonly`: for checking a ledger, never changing it."""

    def __init__(self, path: Path, *, key: bytes | None = None, readonly: bool = False):
        self.path = path
        self._key = key
        self.readonly = readonly
        if readonly:
            if not path.is_file():
                raise LedgerError(f"no gradebook at {path}")
            self.db = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True, timeout=60.0,
                                      check_same_thread=False)
            self.db.execute("PRAGMA busy_timeout=60000")
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        # Several runs (and threads of a service) share one file: wait for a writer, never fail at once.
        self.db = sqlite3.connect(path, timeout=60.0, check_same_thread=False)
        self.db.execute("PRAGMA busy_timeout=60000")
        self._wal()
        schema.prepare(self.db)

    def _wal(self) -> None:
        """Readers never wait for the writer. Switching needs the file alone for a moment: a run
        opening it at the same time can be told it is locked, whatever the busy timeout; try again."""
        for _ in range(100):
            try:
                self.db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError:
                time.sleep(0.05)
        self.db.execute("PRAGMA journal_mode=WAL")

    def close(self) -> None:
        self.db.close()

    @property
    def version(self) -> int:
        return schema.version(self.db)

    def key_id(self) -> str | None:
        """The id of the key this ledger is signed with (None: nothing signed yet)."""
        return log.signed_key_id(self.db) if self.version >= 2 else None

    def signing_key(self, kit_root: Path | None = None) -> bytes:
        """The key that signs what this ledger records: the one it is signed with, or a refusal."""
        if self._key is None:
            self._key = signing.key_for(self.key_id(), kit_root)
        return self._key

    def record(self, result: SubmissionResult, *, after: Callable[[sqlite3.Connection], None] | None = None,
               force: bool = False, current: bool = True) -> bool:
        """Make `result` the student's current grade; False (nothing written) when its key already is,
        unless `force` (a regrade asked for). `after` runs in the same transaction (a claim's release).
        `current=False` (with `force`) records it as history only, the current grade left as it is:
        a grading that does not count (the service's `counts` rule); its signed entry says so."""
        if adjustments.ADJUSTED in result.provenance:
            raise LedgerError(f"the result of {result.student!r} has the instructor's adjustments applied: "
                              "record the grading's own result (adjustments are records of their own)")
        if not is_student_id(result.student):
            raise LedgerError(f"student id {result.student!r} is not in the identity rule's form "
                              f"({student_id(result.student)!r}): ids are normalized before anything "
                              "else (autograder.submissions.students)")
        key = self.signing_key()
        now = datetime.now(UTC).isoformat(timespec="seconds")
        payload = json.dumps(result_to_dict(result), ensure_ascii=False)
        prov = result.provenance
        digests = (str(prov.get("submission_sha256", "")), str(prov.get("grader_digest", "")))
        folder = folder_name(result.student)
        with self.db:  # one transaction: the old row stops being current only if the new one lands
            self.db.execute("BEGIN IMMEDIATE")  # the log's head is read and moved by one writer at a time
            row = self.db.execute(
                "SELECT id, submission_sha256, grader_digest FROM gradings"
                " WHERE assignment = ? AND student = ? AND current = 1",
                (result.assignment, result.student),
            ).fetchone()
            written = (force or row is None or tuple(row[1:]) != digests or not all(digests)
                       or row[0] <= self.legacy_rows())  # a grade from before the log: signed now
            if written:
                self._start(key)
            if written and current:
                self.db.execute(
                    "UPDATE gradings SET current = 0 WHERE assignment = ? AND student = ? AND current = 1",
                    (result.assignment, result.student),
                )
            if written:
                cursor = self.db.execute(
                    "INSERT INTO gradings (assignment, student, graded_at, score, max_score, current, result,"
                    " submission_sha256, grader_digest, signature, folder)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (result.assignment, result.student, now, result.score, result.max_score, int(current),
                     payload, *digests, str(prov.get("signature", "")), folder),
                )
                stored = GradebookRow(int(cursor.lastrowid or 0), result.assignment, result.student,
                                      result.score, result.max_score, int(current), payload, *digests,
                                      str(prov.get("signature", "")), now, folder)
                body = {**stored.sealed(), "source": str(prov.get("source", "")), "current": current}
                log.append(self.db, key, "grading", result.assignment, result.student, body)
            if after is not None:
                after(self.db)
        return written

    @contextmanager
    def recording(self) -> Iterator[Callable[[RecordKind, Mapping[str, Any]], int]]:
        """Write instructor's records (records.py), each with its signed entry, in one transaction:
        `with book.recording() as add: add(records.ADJUSTMENT, {...})` gives each record's row id."""
        key = self.signing_key()
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            self._start(key)

            def add(kind: RecordKind, values: Mapping[str, Any]) -> int:
                if kind.per_student and not is_student_id(str(values.get("student", ""))):
                    raise LedgerError(f"student id {values.get('student')!r} is not in the identity rule's "
                                      "form: ids are normalized before anything else")
                return records.insert(self.db, key, kind, values)

            yield add

    def records(self, kind: RecordKind, assignment: str | None = None,
                student: str | None = None) -> list[dict[str, Any]]:
        """The rows of one kind of record, oldest first (a file from before them has none)."""
        return records.rows(self.db, kind, assignment, student)

    def newest_record(self, kind: RecordKind, assignment: str) -> int:
        """The id of the assignment's newest record of `kind` (0: none)."""
        return records.newest(self.db, kind, assignment)

    def adjustments(self, assignment: str, student: str | None = None) -> list[adjustments.Adjustment]:
        """Every adjustment of the assignment (of one student), oldest first: history and in force."""
        return [adjustments.Adjustment.of(r) for r in self.records(records.ADJUSTMENT, assignment, student)]

    def adjusted(self, result: SubmissionResult) -> SubmissionResult:
        """`result` with its student's adjustments in force applied: the grade as it counts."""
        return adjustments.adjusted(result, self.adjustments(result.assignment, result.student))

    def standing(self, assignment: str) -> list[SubmissionResult]:
        """Each student's current grade with the adjustments in force: what every export, page and
        passback shows (the grading's own result, signed as graded, stays in `current`)."""
        found: dict[str, list[adjustments.Adjustment]] = {}
        for item in self.adjustments(assignment):
            found.setdefault(item.student, []).append(item)
        return [adjustments.adjusted(r, found.get(r.student, [])) for r in self.current(assignment)]

    def _start(self, key: bytes) -> None:
        """The log's first entry, sealing the rows recorded before it (by a kit without the log)."""
        if self.db.execute("SELECT 1 FROM ledger_log LIMIT 1").fetchone() is not None:
            return
        legacy = self.rows()
        body = {"schema": schema.SCHEMA_VERSION, "legacy_rows": max((r.id for r in legacy), default=0),
                "legacy": [[r.id, r.student, r.digest()] for r in legacy]}
        log.append(self.db, key, "start", "", "", body)

    def legacy_rows(self) -> int:
        """Rows up to this id were recorded before the signed log (0: none)."""
        if self.version >= 2:
            row = self.db.execute("SELECT body FROM ledger_log WHERE seq = 1 AND kind = 'start'").fetchone()
            if row is not None:
                return int(json.loads(row[0]).get("legacy_rows", 0))
        found = self.db.execute("SELECT MAX(id) FROM gradings").fetchone()
        return int(found[0] or 0)

    def keys(self, assignment: str) -> dict[str, tuple[str, str]]:
        """student -> (submission digest, grader digest) of their current grade; a grade recorded
        before the signed log has no grader digest here, so it is graded again (and signed)."""
        legacy = self.legacy_rows()
        rows = self.db.execute(
            "SELECT id, student, submission_sha256, grader_digest FROM gradings"
            " WHERE assignment = ? AND current = 1", (assignment,),
        )
        return {r[1]: (r[2], r[3] if r[0] > legacy else "") for r in rows}

    def grader_files(self, assignment: str, students: Sequence[str]) -> dict[str, dict[str, str]]:
        """student -> the digest of each of the graders' parts their current grade was computed with
        (empty: recorded before grades kept them), for the students asked about."""
        wanted = set(students)
        rows = self.db.execute("SELECT student, result FROM gradings WHERE assignment = ? AND current = 1",
                               (assignment,))
        found = {}
        for student, text in rows:
            if student in wanted:
                files = (json.loads(text).get("provenance") or {}).get(GRADER_FILES)
                found[student] = dict(files) if isinstance(files, dict) else {}
        return found

    def rows(self) -> list[GradebookRow]:
        """Every row, current and history, for verification."""
        columns = ROW_COLUMNS if self.version >= 2 else ROW_COLUMNS.removesuffix(", folder")
        return [GradebookRow(*r) for r in self.db.execute(f"SELECT {columns} FROM gradings ORDER BY id")]

    def entries(self) -> list[log.LogEntry]:
        return log.entries(self.db) if self.version >= 2 else []

    def heads(self) -> dict[str, log.Head]:
        return log.heads(self.db) if self.version >= 2 else {}

    def assignments(self) -> list[str]:
        """The assignments with at least one current grading, sorted."""
        rows = self.db.execute("SELECT DISTINCT assignment FROM gradings WHERE current = 1")
        return sorted({str(r[0]) for r in rows})

    def graded_students(self, assignment: str) -> set[str]:
        rows = self.db.execute(
            "SELECT student FROM gradings WHERE assignment = ? AND current = 1", (assignment,)
        )
        return {r[0] for r in rows}

    def folders(self, assignment: str) -> dict[str, str]:
        """folder -> student, of every student the ledger holds a grade of (history too)."""
        rows = self.db.execute("SELECT DISTINCT folder, student FROM gradings WHERE assignment = ?"
                               " AND folder != ''", (assignment,))
        return {str(r[0]): str(r[1]) for r in rows}

    def current(self, assignment: str) -> list[SubmissionResult]:
        rows = self.db.execute(
            "SELECT result FROM gradings WHERE assignment = ? AND current = 1 ORDER BY student",
            (assignment,),
        )
        return [result_from_dict(json.loads(r[0])) for r in rows]

    def history(self, assignment: str, student: str) -> list[tuple[str, float]]:
        rows = self.db.execute(
            "SELECT graded_at, score FROM gradings WHERE assignment = ? AND student = ? ORDER BY id",
            (assignment, student),
        )
        return [(r[0], r[1]) for r in rows]
