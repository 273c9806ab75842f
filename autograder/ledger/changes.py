"""News of the inbox across processes: each student's version in the gradebook, and a watcher of the file.

A student's rows changing (an upload, a grading taken, a grade landed) moves their version in
table `received_versions`, in the transaction that changed them, so a web worker sees a grade the
grading process recorded. A page's long poll waits on the inbox's condition; the watcher wakes it
whenever another connection (another worker, the grading process) committed to the file, which
SQLite's `PRAGMA data_version` tells without reading any table.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

WATCH_EVERY = 0.1  # seconds between two looks at the file's data version

VERSIONS_SCHEMA = """
CREATE TABLE IF NOT EXISTS received_versions (
    assignment TEXT NOT NULL,
    student TEXT NOT NULL,
    version INTEGER NOT NULL,
    PRIMARY KEY (assignment, student)
);
"""


def touch(db: sqlite3.Connection, assignment: str, student: str) -> None:
    """Inside a write transaction: the student's rows changed. Versions grow with the clock too, so a
    page left open across a restart, or across a copy of the file, is never stuck behind."""
    db.execute(
        "INSERT INTO received_versions (assignment, student, version) VALUES (?, ?, ?)"
        " ON CONFLICT (assignment, student) DO UPDATE SET version = MAX(excluded.version, version + 1)",
        (assignment, student, time.time_ns() // 1000))


def version(db: sqlite3.Connection, assignment: str, student: str) -> int:
    row = db.execute("SELECT version FROM received_versions WHERE assignment = ? AND student = ?",
                     (assignment, student)).fetchone()
    return int(row[0]) if row else 0


class Watcher:
    """A thread that calls `changed` whenever the file's data changed by another connection."""

    def __init__(self, path: Path, changed: Callable[[], None]):
        self.path = path
        self.changed = changed
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="inbox-watcher", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _watch(self) -> None:
        db = sqlite3.connect(self.path, timeout=60.0, check_same_thread=False)
        try:
            seen = None
            while not self._stop.wait(WATCH_EVERY):
                try:
                    now = db.execute("PRAGMA data_version").fetchone()[0]
                except sqlite3.Error:  # busy for a moment: look again
                    continue
                if now != seen:
                    seen = now
                    with contextlib.suppress(Exception):  # a listener's problem never stops the watch
                        self.changed()
        finally:
            db.close()
