"""The ledger's log: append-only entries, each hashing the one before it and signed with the key.

An entry is (seq, kind, assignment, student, when, key id, previous entry's hash, body): `seq`
counts from 1 without gaps, the body is canonical JSON of what the entry says, and the entry's
hash and HMAC cover all of it. Heads (table ledger_heads, signed too) point at the last entry of
the whole log and of each student, so an entry deleted from the end, or a student's last one, is
missed as surely as one from the middle. A student's entry also names that student's previous
entry (`student_prev`): a deleted entry is told by whose it was.

Kinds are what the ledger records: `grading` (a grade recorded; it becomes the current one),
`start` (the log begins, sealing any rows from before it), and the instructor's records
(records.py: an adjustment, an extension, a release, a regrade message), each a row of its table
whose values the entry's body holds; audit.py has one rule for each.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from autograder.errors import LedgerError
from autograder.ledger import signing

GENESIS = "0" * 64  # the "previous hash" of entry 1
ENTRY_TEXT = "autograder-ledger-entry-1"
HEAD_TEXT = "autograder-ledger-head-1"
LOG_STREAM = '["log"]'
KINDS = {
    "start": "the log begins; rows recorded before it are sealed as they were",
    "grading": "a grade recorded for a student; their current grade unless it says `current: false`",
    # The instructor's records (records.py): the body holds the row's every value.
    "adjustment": "points an instructor gave or took, with a reason, on a check, a task or the total",
    "extension": "a student's own deadline, or exemption from the late policy",
    "release": "when an assignment's scores and feedback are shown: held, at a time, or now",
    "regrade_request": "a message of a regrade thread: a student's request or an instructor's answer",
}
COLUMNS = "seq, kind, assignment, student, recorded_at, key_id, prev_hash, body, hash, signature"


def canonical(data: Any) -> str:
    """The one JSON text of `data` that hashes and signatures cover."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def student_stream(assignment: str, student: str) -> str:
    return canonical(["student", assignment, student])


@dataclass(frozen=True)
class LogEntry:
    """One entry as stored."""

    seq: int
    kind: str
    assignment: str
    student: str
    recorded_at: str
    key_id: str
    prev_hash: str
    body: str
    hash: str
    signature: str

    def text(self) -> bytes:
        """What the hash and the signature cover (everything but themselves)."""
        return canonical([ENTRY_TEXT, self.seq, self.kind, self.assignment, self.student, self.recorded_at,
                          self.key_id, self.prev_hash, self.body]).encode("utf-8")

    def data(self) -> dict[str, Any]:
        found = json.loads(self.body)
        return found if isinstance(found, dict) else {}

    @property
    def stream(self) -> str:
        return student_stream(self.assignment, self.student) if self.student else ""


@dataclass(frozen=True)
class Head:
    """Where a stream (the whole log, or one student's entries) ends, signed."""

    stream: str
    seq: int
    hash: str
    key_id: str
    signature: str

    def text(self) -> bytes:
        return canonical([HEAD_TEXT, self.stream, self.seq, self.hash, self.key_id]).encode("utf-8")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _head(db: sqlite3.Connection, stream: str) -> Head | None:
    row = db.execute("SELECT stream, seq, hash, key_id, signature FROM ledger_heads WHERE stream = ?",
                     (stream,)).fetchone()
    return Head(*row) if row else None


def _set_head(db: sqlite3.Connection, key: bytes, stream: str, entry: LogEntry) -> None:
    head = Head(stream, entry.seq, entry.hash, entry.key_id, "")
    db.execute("INSERT OR REPLACE INTO ledger_heads (stream, seq, hash, key_id, signature)"
               " VALUES (?, ?, ?, ?, ?)", (*dataclasses.astuple(head)[:4], signing.sign(key, head.text())))


def _last(db: sqlite3.Connection) -> Head | None:
    """The log's head; without one (deleted), its last entry: appending goes on after it."""
    head = _head(db, LOG_STREAM)
    if head is not None:
        return head
    row = db.execute("SELECT seq, hash, key_id FROM ledger_log ORDER BY seq DESC LIMIT 1").fetchone()
    return Head(LOG_STREAM, int(row[0]), str(row[1]), str(row[2]), "") if row else None


def signed_key_id(db: sqlite3.Connection) -> str | None:
    """The id of the key this log is signed with (None: nothing signed yet)."""
    last = _last(db)
    return last.key_id if last else None


def append(db: sqlite3.Connection, key: bytes, kind: str, assignment: str, student: str,
           body: dict[str, Any]) -> LogEntry:
    """Add one entry after the log's head, inside the caller's write transaction."""
    if kind not in KINDS:
        raise LedgerError(f"no ledger entry kind {kind!r} (known: {', '.join(KINDS)})")
    ours = signing.key_id(key)
    last = _last(db)
    if last is not None and last.key_id != ours:
        raise LedgerError(f"this ledger is signed with key id {last.key_id}, not with the key given "
                          f"(id {ours}): set {signing.KEY_ENV}=/path/to/the key that signed it")
    if student:
        mine = _head(db, student_stream(assignment, student))
        body = {**body, "student_prev": mine.seq if mine else 0}
    seq, prev = (last.seq + 1, last.hash) if last else (1, GENESIS)
    unsigned = LogEntry(seq, kind, assignment, student, _now(), ours, prev, canonical(body), "", "")
    text = unsigned.text()
    entry = dataclasses.replace(unsigned, hash=hashlib.sha256(text).hexdigest(),
                                signature=signing.sign(key, text))
    db.execute(f"INSERT INTO ledger_log ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
               dataclasses.astuple(entry))
    _set_head(db, key, LOG_STREAM, entry)
    if student:
        _set_head(db, key, entry.stream, entry)
    return entry


def entries(db: sqlite3.Connection) -> list[LogEntry]:
    return [LogEntry(*row) for row in db.execute(f"SELECT {COLUMNS} FROM ledger_log ORDER BY seq")]


def heads(db: sqlite3.Connection) -> dict[str, Head]:
    rows = db.execute("SELECT stream, seq, hash, key_id, signature FROM ledger_heads")
    return {row[0]: Head(*row) for row in rows}


def head_holds(key: bytes, head: Head) -> bool:
    return signing.matches(key, head.text(), head.signature)


def entry_holds(key: bytes, entry: LogEntry) -> bool:
    """The entry's hash and signature are those of what it says."""
    text = entry.text()
    return hashlib.sha256(text).hexdigest() == entry.hash and signing.matches(key, text, entry.signature)
