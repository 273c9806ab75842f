"""The instructor's records in the ledger: adjustments, extensions, releases and regrade messages, signed.

A record is a row of its table written in the same transaction as the log entry (of the record's
kind) whose body holds every value of the row, so `audit.py` holds each table against the log: a
row edited, added by hand or deleted is named by student. The newest record of a scope is the one
in force (an adjustment of one check, a student's extension, an assignment's release); the older
ones stay as history, and undoing one is a newer record (an adjustment of 0 points, no extension).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from autograder.errors import LedgerError
from autograder.ledger import log, schema


@dataclass(frozen=True)
class RecordKind:
    """One kind of record: its log entry kind, its table and the columns an entry signs (all but id)."""

    kind: str
    table: str
    columns: tuple[str, ...]
    per_student: bool = True  # False: the record is the assignment's (a release), in no student's stream


ADJUSTMENT = RecordKind("adjustment", "adjustments", (
    "assignment", "student", "task", "check_id", "points", "reason", "author", "made_at", "request"))
EXTENSION = RecordKind("extension", "extensions", (
    "assignment", "student", "deadline", "exempt", "reason", "author", "made_at"))
RELEASE = RecordKind("release", "releases", ("assignment", "mode", "release_at", "author", "made_at"),
                     per_student=False)
REGRADE_MESSAGE = RecordKind("regrade_request", "regrade_messages", (
    "assignment", "student", "role", "author", "text", "upload", "closes", "adjustment", "made_at"))
KINDS = {k.kind: k for k in (ADJUSTMENT, EXTENSION, RELEASE, REGRADE_MESSAGE)}


def insert(db: sqlite3.Connection, key: bytes, kind: RecordKind, values: Mapping[str, Any]) -> int:
    """Write one record and its signed entry, inside the caller's write transaction; its row id."""
    missing = [c for c in kind.columns if c not in values]
    if missing:
        raise LedgerError(f"a {kind.kind} record needs {', '.join(missing)}")
    row = {c: values[c] for c in kind.columns}
    cursor = db.execute(f"INSERT INTO {kind.table} ({', '.join(kind.columns)}) VALUES "
                        f"({', '.join('?' for _ in kind.columns)})", tuple(row.values()))
    row_id = int(cursor.lastrowid or 0)
    student = str(row.get("student", "")) if kind.per_student else ""
    log.append(db, key, kind.kind, str(row["assignment"]), student, {"row": row_id, **row})
    return row_id


def rows(db: sqlite3.Connection, kind: RecordKind, assignment: str | None = None,
         student: str | None = None) -> list[dict[str, Any]]:
    """The table's rows (with `id`), oldest first; none when the file predates the table."""
    if not schema.has_table(db, kind.table):
        return []
    query, args = f"SELECT id, {', '.join(kind.columns)} FROM {kind.table}", []
    where = []
    if assignment is not None:
        where.append("assignment = ?")
        args.append(assignment)
    if student is not None and kind.per_student:
        where.append("student = ?")
        args.append(student)
    if where:
        query += " WHERE " + " AND ".join(where)
    names = ("id", *kind.columns)
    return [dict(zip(names, r, strict=True)) for r in db.execute(query + " ORDER BY id", args)]


def newest(db: sqlite3.Connection, kind: RecordKind, assignment: str) -> int:
    """The id of the assignment's newest record of `kind` (0: none): what a watcher compares."""
    if not schema.has_table(db, kind.table):
        return 0
    found = db.execute(f"SELECT MAX(id) FROM {kind.table} WHERE assignment = ?", (assignment,)).fetchone()
    return int(found[0] or 0)


def signed_values(body: Mapping[str, Any], kind: RecordKind) -> dict[str, Any]:
    """A record as its signed entry holds it (with `id`): what verify reads instead of the table."""
    return {"id": int(body.get("row", 0)), **{c: body.get(c) for c in kind.columns}}
