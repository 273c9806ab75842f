"""Which grading process holds which inbox row: claims in the gradebook file, so no upload is graded twice.

A grading process (the single-process server's queue, or `serve --workers`'s grading process,
or a second one started on the same data by mistake) takes a queued row and claims it in the
same transaction; only the claim's owner may record its grade. A claim lapses when its process
is gone from this machine (pid and start time, as the batch's claims in claims.py) or its
lease ran out (a process on another machine: it renews the lease while it works), and the row
is queued again. A graded row keeps its claim: it says which process graded it.
"""

from __future__ import annotations

import os
import secrets
import socket
import sqlite3
import time
from dataclasses import dataclass

from autograder.ledger.claims import alive, process_start

LEASE_SECONDS = 60.0
RENEW_EVERY = 15.0

CLAIMS_SCHEMA = """
CREATE TABLE IF NOT EXISTS grading_claims (
    row_id INTEGER PRIMARY KEY REFERENCES received (id),
    owner TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    started TEXT NOT NULL,
    expires REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS grading_claims_by_owner ON grading_claims (owner);
"""
# Rows being graded whose student another live owner grades: not taken by this owner (one student's
# uploads are graded by one process at a time, so which grading counts is decided in one place).
OTHERS_GRADING = ("SELECT 1 FROM received g JOIN grading_claims c ON c.row_id = g.id"
                  " WHERE g.assignment = r.assignment AND g.student = r.student AND g.status = 'grading'"
                  " AND c.owner != ?")


@dataclass(frozen=True)
class Grader:
    """A grading process as its claims name it."""

    owner: str
    host: str
    pid: int
    started: str

    @classmethod
    def this_process(cls) -> Grader:
        return cls(secrets.token_hex(8), socket.gethostname(), os.getpid(), process_start(os.getpid()))


def prepare(db: sqlite3.Connection) -> None:
    db.executescript(CLAIMS_SCHEMA)


def release_stale(db: sqlite3.Connection, me: Grader, *, own: bool = False) -> int:
    """Inside a write transaction: rows being graded that no live process holds, queued again (with
    `own`, this process's too: nothing is in flight before its queue starts). Their count."""
    now = time.time()
    stale = []
    for row_id, owner, host, pid, started, expires in db.execute(
            "SELECT r.id, c.owner, c.host, c.pid, c.started, c.expires FROM received r"
            " LEFT JOIN grading_claims c ON c.row_id = r.id WHERE r.status = 'grading'"):
        if owner == me.owner:
            if own:
                stale.append(row_id)
            continue
        if owner is None or expires <= now or not alive(host, pid, started):
            stale.append(row_id)
    for row_id in stale:
        db.execute("UPDATE received SET status = 'queued' WHERE id = ? AND status = 'grading'", (row_id,))
    return len(stale)


def claim_queued(db: sqlite3.Connection, me: Grader, limit: int) -> list[int]:
    """Inside a write transaction: up to `limit` queued rows, oldest first, now grading and ours."""
    ids = [int(r[0]) for r in db.execute(
        f"SELECT id FROM received r WHERE status = 'queued' AND NOT EXISTS ({OTHERS_GRADING})"
        " ORDER BY id LIMIT ?", (me.owner, limit))]
    for row_id in ids:
        claim_row(db, me, row_id)
    return ids


def claim_row(db: sqlite3.Connection, me: Grader, row_id: int) -> None:
    """Inside a write transaction: this row, grading and ours."""
    db.execute("UPDATE received SET status = 'grading', attempts = attempts + 1 WHERE id = ?", (row_id,))
    db.execute("INSERT OR REPLACE INTO grading_claims (row_id, owner, host, pid, started, expires)"
               " VALUES (?, ?, ?, ?, ?, ?)",
               (row_id, me.owner, me.host, me.pid, me.started, time.time() + LEASE_SECONDS))


OURS = "id IN (SELECT row_id FROM grading_claims WHERE owner = ?)"  # a condition on `received`


def renew(db: sqlite3.Connection, me: Grader) -> None:
    """Move the lease of every row this process is grading on."""
    with db:
        db.execute("UPDATE grading_claims SET expires = ? WHERE owner = ? AND row_id IN"
                   " (SELECT id FROM received WHERE status = 'grading')",
                   (time.time() + LEASE_SECONDS, me.owner))


def graded_by(db: sqlite3.Connection, row_id: int) -> tuple[str, int] | None:
    """(host, pid) of the process that holds, or graded, the row."""
    row = db.execute("SELECT host, pid FROM grading_claims WHERE row_id = ?", (row_id,)).fetchone()
    return (str(row[0]), int(row[1])) if row else None
