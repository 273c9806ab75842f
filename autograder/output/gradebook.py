"""The SQLite gradebook (the ledger): every grading of every student, keyed by what it was computed from.

A row records the result, its submission digest and grader digest (see grading/provenance.py) and
its signature; the latest row of a student is current, earlier ones are history. A key that is
already current is never recorded twice, so a rerun, a retried task or a second run is harmless.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from autograder.grading.results import SubmissionResult, result_from_dict, result_to_dict

GRADEBOOK_FILE = "gradebook.sqlite"  # in the OUT folder of a graded batch

SCHEMA = """
CREATE TABLE IF NOT EXISTS gradings (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    assignment TEXT NOT NULL,
    student TEXT NOT NULL,
    graded_at TEXT NOT NULL,
    score REAL NOT NULL,
    max_score REAL NOT NULL,
    current INTEGER NOT NULL DEFAULT 1,
    result TEXT NOT NULL,
    submission_sha256 TEXT NOT NULL DEFAULT '',
    grader_digest TEXT NOT NULL DEFAULT '',
    signature TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX IF NOT EXISTS one_current
    ON gradings (assignment, student) WHERE current = 1;
"""


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


class Gradebook:
    """One SQLite file; a regrade supersedes a student's row and keeps the old one as history."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        # Several runs (and threads of a service) share one file: wait for a writer, never fail at once.
        self.db = sqlite3.connect(path, timeout=60.0, check_same_thread=False)
        self.db.execute("PRAGMA busy_timeout=60000")
        self._wal()
        with self.db:  # one writer sets the file up; a second run opening it at once waits, then sees it
            self.db.execute("BEGIN IMMEDIATE")
            for statement in filter(str.strip, SCHEMA.split(";")):
                self.db.execute(statement)
            self._migrate()

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

    def _migrate(self) -> None:
        """A gradebook from before the ledger gets its key columns (empty: graded again once)."""
        columns = {row[1] for row in self.db.execute("PRAGMA table_info(gradings)")}
        for name in ("submission_sha256", "grader_digest", "signature"):
            if name not in columns:
                self.db.execute(f"ALTER TABLE gradings ADD COLUMN {name} TEXT NOT NULL DEFAULT ''")

    def close(self) -> None:
        self.db.close()

    def record(self, result: SubmissionResult, *, after: Callable[[sqlite3.Connection], None] | None = None,
               force: bool = False, current: bool = True) -> bool:
        """Make `result` the student's current grade; False (nothing written) when its key already is,
        unless `force` (a regrade asked for). `after` runs in the same transaction (a claim's release).
        `current=False` (with `force`) records it as history only, the current grade left as it is:
        a grading that does not count (the service's `counts` rule)."""
        now = datetime.now(UTC).isoformat(timespec="seconds")
        payload = json.dumps(result_to_dict(result), ensure_ascii=False)
        prov = result.provenance
        key = (str(prov.get("submission_sha256", "")), str(prov.get("grader_digest", "")))
        with self.db:  # one transaction: the old row stops being current only if the new one lands
            row = self.db.execute(
                "SELECT submission_sha256, grader_digest FROM gradings"
                " WHERE assignment = ? AND student = ? AND current = 1",
                (result.assignment, result.student),
            ).fetchone()
            written = force or row is None or tuple(row) != key or not all(key)
            if written and current:
                self.db.execute(
                    "UPDATE gradings SET current = 0 WHERE assignment = ? AND student = ? AND current = 1",
                    (result.assignment, result.student),
                )
            if written:
                self.db.execute(
                    "INSERT INTO gradings (assignment, student, graded_at, score, max_score, current, result,"
                    " submission_sha256, grader_digest, signature) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (result.assignment, result.student, now, result.score, result.max_score, int(current),
                     payload, key[0], key[1], str(prov.get("signature", ""))),
                )
            if after is not None:
                after(self.db)
        return written

    def keys(self, assignment: str) -> dict[str, tuple[str, str]]:
        """student -> (submission digest, grader digest) of their current grade."""
        rows = self.db.execute(
            "SELECT student, submission_sha256, grader_digest FROM gradings"
            " WHERE assignment = ? AND current = 1", (assignment,),
        )
        return {r[0]: (r[1], r[2]) for r in rows}

    def rows(self) -> list[GradebookRow]:
        """Every row, current and history, for verification."""
        query = ("SELECT id, assignment, student, score, max_score, current, result, submission_sha256,"
                 " grader_digest, signature FROM gradings ORDER BY id")
        return [GradebookRow(*r) for r in self.db.execute(query)]

    def assignments(self) -> list[str]:
        """The assignments with at least one current grading, sorted."""
        rows = self.db.execute("SELECT DISTINCT assignment FROM gradings WHERE current = 1")
        return sorted({str(r[0]) for r in rows})

    def graded_students(self, assignment: str) -> set[str]:
        rows = self.db.execute(
            "SELECT student FROM gradings WHERE assignment = ? AND current = 1", (assignment,)
        )
        return {r[0] for r in rows}

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
