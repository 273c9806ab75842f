"""The ledger's one schema: every table of the gradebook's SQLite file, and the version it is at.

One SQLite file holds a course's ledger: its gradings, the signed log over them, the claims of
running batches, the log of scores sent to an LMS, and the service's inbox. The file's version is
SQLite's `user_version`; a change to any of these tables (the inbox's too, whose DDL the
ledger keeps in received.py) raises SCHEMA_VERSION here and adds its step to `_upgrade`.

Versions: 0, gradings without their key; 1, gradings keyed by submission and graders, signed;
2, the signed, hash-chained log (`ledger_log`, `ledger_heads`) and each grading's folder; 3, the
instructor's records, each signed by an entry of the log (`adjustments`, `extensions`, `releases`,
`regrade_messages`: records.py).
"""

from __future__ import annotations

import sqlite3

from autograder.errors import LedgerError
from autograder.submissions.students import is_student_id

SCHEMA_VERSION = 3
LOG_VERSION = 2  # the first version with the signed log: older files are read as from before it
# The tables, each at the schema version that last changed it (`received`: received.py).
TABLES = {"gradings": 2, "ledger_log": 2, "ledger_heads": 2, "claims": 1, "lti_publishes": 1,
          "received": 1, "adjustments": 3, "extensions": 3, "releases": 3, "regrade_messages": 3}

GRADINGS = """
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
    signature TEXT NOT NULL DEFAULT '',
    folder TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX IF NOT EXISTS one_current
    ON gradings (assignment, student) WHERE current = 1
"""

# One row per entry, numbered from 1 without gaps; each names the hash of the one before it and
# is signed (HMAC) with the key whose id it gives. What an entry says is its kind and body.
LOG = """
CREATE TABLE IF NOT EXISTS ledger_log (
    seq INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    assignment TEXT NOT NULL,
    student TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    key_id TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    body TEXT NOT NULL,
    hash TEXT NOT NULL,
    signature TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ledger_heads (
    stream TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    hash TEXT NOT NULL,
    key_id TEXT NOT NULL,
    signature TEXT NOT NULL
)
"""

CLAIMS = """
CREATE TABLE IF NOT EXISTS claims (
    assignment TEXT NOT NULL,
    student TEXT NOT NULL,
    owner TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    started TEXT NOT NULL,
    expires REAL NOT NULL,
    PRIMARY KEY (assignment, student)
)
"""

# The instructor's records (records.py): each row is written with the signed log entry that holds
# its values, in one transaction; the newest row of a scope is the one in force (history stays).
RECORDS = """
CREATE TABLE IF NOT EXISTS adjustments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    assignment TEXT NOT NULL,
    student TEXT NOT NULL,
    task TEXT NOT NULL DEFAULT '',
    check_id TEXT NOT NULL DEFAULT '',
    points REAL NOT NULL,
    reason TEXT NOT NULL,
    author TEXT NOT NULL,
    made_at TEXT NOT NULL,
    request INTEGER
);
CREATE INDEX IF NOT EXISTS adjustments_by_student ON adjustments (assignment, student, id);
CREATE TABLE IF NOT EXISTS extensions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    assignment TEXT NOT NULL,
    student TEXT NOT NULL,
    deadline TEXT NOT NULL DEFAULT '',
    exempt INTEGER NOT NULL DEFAULT 0,
    reason TEXT NOT NULL,
    author TEXT NOT NULL,
    made_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS extensions_by_student ON extensions (assignment, student, id);
CREATE TABLE IF NOT EXISTS releases (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    assignment TEXT NOT NULL,
    mode TEXT NOT NULL CHECK (mode IN ('held', 'at', 'now')),
    release_at TEXT NOT NULL DEFAULT '',
    author TEXT NOT NULL,
    made_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS releases_by_assignment ON releases (assignment, id);
CREATE TABLE IF NOT EXISTS regrade_messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    assignment TEXT NOT NULL,
    student TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('student', 'instructor')),
    author TEXT NOT NULL,
    text TEXT NOT NULL,
    upload INTEGER,
    closes INTEGER NOT NULL DEFAULT 0,
    adjustment INTEGER,
    made_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS regrade_messages_by_student ON regrade_messages (assignment, student, id)
"""

PUBLISHES = """
CREATE TABLE IF NOT EXISTS lti_publishes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    assignment TEXT NOT NULL,
    lineitem TEXT NOT NULL,
    student TEXT NOT NULL,
    user_id TEXT NOT NULL,
    score REAL NOT NULL,
    max_score REAL NOT NULL,
    comment TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('sent', 'refused', 'pending')),
    http_status INTEGER,
    message TEXT NOT NULL DEFAULT '',
    result_fingerprint TEXT NOT NULL,
    queued_at TEXT NOT NULL,
    attempted_at TEXT,
    sent_at TEXT
);
CREATE INDEX IF NOT EXISTS lti_publishes_latest ON lti_publishes (assignment, lineitem, student, id)
"""


def statements(*ddl: str) -> list[str]:
    return [s for text in ddl for s in text.split(";") if s.strip()]


def version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def prepare(db: sqlite3.Connection) -> None:
    """Create or upgrade every table in one transaction (a second run opening the file at once
    waits, then finds it done); a file from a newer kit is refused, never written."""
    with db:
        db.execute("BEGIN IMMEDIATE")
        found = version(db)
        if found > SCHEMA_VERSION:
            raise LedgerError(f"this gradebook is at schema {found}, made by a newer torch-autograder than "
                              f"this one (schema {SCHEMA_VERSION}): upgrade the kit to read or write it")
        for statement in statements(GRADINGS, LOG, CLAIMS, RECORDS):  # lti_publishes: on first use
            db.execute(statement)
        if found < SCHEMA_VERSION:
            _upgrade(db)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _upgrade(db: sqlite3.Connection) -> None:
    columns = {row[1] for row in db.execute("PRAGMA table_info(gradings)")}
    # 0 -> 1: the key columns (empty: those grades are graded again once)
    for name in ("submission_sha256", "grader_digest", "signature", "folder"):  # 1 -> 2: folder
        if name not in columns:
            db.execute(f"ALTER TABLE gradings ADD COLUMN {name} TEXT NOT NULL DEFAULT ''")
    # 1 -> 2: ids from before the identity rule can never be graded again under that spelling; as
    # history, they leave the class files, and the batch grades the student under their id.
    rows = db.execute("SELECT id, student FROM gradings WHERE current = 1").fetchall()
    for row_id, student in rows:
        if not is_student_id(student):
            db.execute("UPDATE gradings SET current = 0 WHERE id = ?", (row_id,))


def has_table(db: sqlite3.Connection, name: str) -> bool:
    """Whether the file holds table `name` (a file opened read-only may be from an older version)."""
    return db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone() \
        is not None
