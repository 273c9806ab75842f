"""The SQLite gradebook: every grading of every student, the latest one current."""

from __future__ import annotations

import json
import sqlite3
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
    result TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS one_current
    ON gradings (assignment, student) WHERE current = 1;
"""


def find_gradebook(out: Path) -> Path:
    """The gradebook of a graded batch: OUT/gradebook.sqlite, or the SQLite file itself."""
    return out / GRADEBOOK_FILE if out.is_dir() else out


class Gradebook:
    """One SQLite file; a regrade supersedes a student's row and keeps the old one as history."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.db = sqlite3.connect(path)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.executescript(SCHEMA)

    def close(self) -> None:
        self.db.close()

    def record(self, result: SubmissionResult) -> None:
        now = datetime.now(UTC).isoformat(timespec="seconds")
        payload = json.dumps(result_to_dict(result), ensure_ascii=False)
        with self.db:  # one transaction: the old row stops being current only if the new one lands
            self.db.execute(
                "UPDATE gradings SET current = 0 WHERE assignment = ? AND student = ? AND current = 1",
                (result.assignment, result.student),
            )
            self.db.execute(
                "INSERT INTO gradings (assignment, student, graded_at, score, max_score, current, result)"
                " VALUES (?, ?, ?, ?, ?, 1, ?)",
                (result.assignment, result.student, now, result.score, result.max_score, payload),
            )

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
