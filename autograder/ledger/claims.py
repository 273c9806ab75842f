"""Claims on the ledger: a batch holds the students it grades, under a lease that dies with it.

Two runs on one gradebook never grade the same student twice: each claims its students first, in
one transaction, and skips those another live run holds. A claim lapses when its lease runs out
(the run renews it while it works) or at once when its process is gone from this machine, so a
run killed with SIGKILL never blocks the next one for longer than a lease.
"""

from __future__ import annotations

import os
import secrets
import socket
import sqlite3
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from autograder.ledger import schema

LEASE_SECONDS = 60.0
RENEW_EVERY = 15.0


def process_start(pid: int) -> str:
    """When a process started (clock ticks since boot): tells a live pid from a reused one."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return ""


def alive(host: str, pid: int, started: str) -> bool:
    if host != socket.gethostname():
        return True  # another machine's run: only its lease can tell
    return bool(started) and process_start(pid) == started


class Claims:
    """This run's claims on a gradebook file; as a context, a thread renews the lease while it works.

    Its own connection: the renewing thread never shares a transaction with the grades being recorded.
    """

    def __init__(self, path: Path, lease: float = LEASE_SECONDS):
        self.owner = secrets.token_hex(8)
        self.lease = lease
        self.db = sqlite3.connect(path, timeout=60.0, check_same_thread=False)
        self.db.execute("PRAGMA busy_timeout=60000")
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        with self._lock, self.db:
            self.db.execute("BEGIN IMMEDIATE")
            for statement in schema.statements(schema.CLAIMS):  # a gradebook opened first made it
                self.db.execute(statement)

    def close(self) -> None:
        self.db.close()

    def claim(self, assignment: str, students: Iterable[str]) -> tuple[list[str], list[str]]:
        """(students now ours, students another live run holds), in one transaction."""
        me = (self.owner, socket.gethostname(), os.getpid(), process_start(os.getpid()))
        ours, busy = [], []
        with self._lock, self.db:
            self.db.execute("BEGIN IMMEDIATE")  # no other run claims between our read and write
            now = time.time()
            for student in students:
                row = self.db.execute(
                    "SELECT owner, host, pid, started, expires FROM claims"
                    " WHERE assignment = ? AND student = ?", (assignment, student),
                ).fetchone()
                held = row is not None and row[0] != self.owner and row[4] > now
                if held and alive(row[1], row[2], row[3]):
                    busy.append(student)
                    continue
                self.db.execute(
                    "INSERT OR REPLACE INTO claims (assignment, student, owner, host, pid, started, expires)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)", (assignment, student, *me, now + self.lease),
                )
                ours.append(student)
        return ours, busy

    def release_in(self, db: sqlite3.Connection, assignment: str, student: str) -> None:
        """Drop one claim inside the caller's transaction (the one that records the grade)."""
        db.execute("DELETE FROM claims WHERE assignment = ? AND student = ? AND owner = ?",
                   (assignment, student, self.owner))

    def release_all(self) -> None:
        with self._lock, self.db:
            self.db.execute("DELETE FROM claims WHERE owner = ?", (self.owner,))

    def renew(self) -> None:
        with self._lock, self.db:
            self.db.execute("UPDATE claims SET expires = ? WHERE owner = ?",
                            (time.time() + self.lease, self.owner))

    def __enter__(self) -> Claims:
        self._stop.clear()
        self._thread = threading.Thread(target=self._renewing, name="claims-lease", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.release_all()
        self.close()

    def _renewing(self) -> None:
        while not self._stop.wait(min(RENEW_EVERY, self.lease / 4)):
            try:
                self.renew()
            except sqlite3.Error:  # a busy file: the next beat tries again, the lease has slack
                continue
