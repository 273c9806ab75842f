"""The ledger's schema and its upgrades: one version for the file, gradebooks from before the signed log.

Proves: a fresh gradebook is at SCHEMA_VERSION with every table; a file from a newer kit is
refused, never written; a gradebook from before the signed log is reported by `verify` (read
only: the file is left as it was), upgraded when opened to record (ids from before the identity
rule become history), its rows sealed by the log's first entry, and its current grades due
again until they are signed; an edit to a sealed row is caught; the ledger refuses an id that is
not in the identity rule's form.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import unicodedata
from pathlib import Path

import pytest
from conftest import make_result

from autograder.config import Assignment, Kit
from autograder.errors import LedgerError
from autograder.grading.results import result_to_dict
from autograder.ledger import schema
from autograder.ledger.book import Gradebook
from autograder.ledger.signing import load_key
from autograder.output.verify import verify_out

# The gradings table as kits before the signed log made it (schema 1, user_version 0).
V1 = """
CREATE TABLE gradings (
    id INTEGER PRIMARY KEY AUTOINCREMENT, assignment TEXT NOT NULL, student TEXT NOT NULL,
    graded_at TEXT NOT NULL, score REAL NOT NULL, max_score REAL NOT NULL,
    current INTEGER NOT NULL DEFAULT 1, result TEXT NOT NULL,
    submission_sha256 TEXT NOT NULL DEFAULT '', grader_digest TEXT NOT NULL DEFAULT '',
    signature TEXT NOT NULL DEFAULT ''
);
"""


@pytest.fixture(scope="module")
def assignment(kit: Kit) -> Assignment:
    return kit.assignment("nn_module")


def _v1(path: Path, assignment: Assignment) -> Path:
    with sqlite3.connect(path) as db:
        db.executescript(V1)
        for student, current in (("ada", 0), ("ada", 1), ("Rahim", 1)):
            result = make_result(assignment, student.lower(), {"tinynet": 5 * current})
            prov = result.provenance
            db.execute("INSERT INTO gradings (assignment, student, graded_at, score, max_score, current,"
                       " result, submission_sha256, grader_digest, signature)"
                       " VALUES (?, ?, '2025-01-01', ?, ?, ?, ?, ?, ?, ?)",
                       (assignment.id, student, result.score, result.max_score, current,
                        json.dumps(result_to_dict(result)), prov["submission_sha256"], prov["grader_digest"],
                        prov["signature"]))
    return path


def test_a_fresh_gradebook_is_at_the_schema_version_and_a_newer_one_is_refused(tmp_path):
    book = Gradebook(tmp_path / "g.sqlite")
    try:
        assert book.version == schema.SCHEMA_VERSION
        tables = {r[0] for r in book.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"gradings", "ledger_log", "ledger_heads", "claims"} <= tables <= set(schema.TABLES) | {
            "sqlite_sequence"}
    finally:
        book.close()
    with sqlite3.connect(tmp_path / "g.sqlite") as db:
        db.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION + 1}")
    before = (tmp_path / "g.sqlite").read_bytes()
    with pytest.raises(LedgerError, match="made by a newer torch-autograder"):
        Gradebook(tmp_path / "g.sqlite")
    assert (tmp_path / "g.sqlite").read_bytes() == before


def test_a_gradebook_from_before_the_log_is_reported_upgraded_sealed_and_graded_again(tmp_path,
                                                                                       assignment):
    path = _v1(tmp_path / "gradebook.sqlite", assignment)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    report = verify_out(tmp_path, load_key())
    assert [ln for ln in report.lines() if "from before the signed log (schema 0)" in ln], report.lines()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before  # verify wrote nothing

    book = Gradebook(path)  # opened to record: upgraded
    try:
        assert book.version == schema.SCHEMA_VERSION
        assert book.graded_students(assignment.id) == {"ada"}  # `Rahim` cannot come back under that id
        assert book.keys(assignment.id)["ada"][1] == ""  # not signed yet: the batch grades it again
        book.record(make_result(assignment, "bob"))  # the log's first entry seals rows 1-3
        assert book.legacy_rows() == 3
    finally:
        book.close()
    found = verify_out(tmp_path, load_key()).lines()
    assert [line for line in found if "row 2: ada: recorded before the signed log: run `autograder grade`"
            in line], found
    assert not any("row 1" in line or "row 3" in line for line in found), found  # history: as it was

    book = Gradebook(path)
    try:
        book.record(make_result(assignment, "ada", {"tinynet": 5}))  # what the batch does: graded, signed
    finally:
        book.close()
    assert verify_out(tmp_path, load_key()).ok
    with sqlite3.connect(path) as db:
        db.execute("UPDATE gradings SET score = 99 WHERE id = 1")  # history from before the log, edited
    assert any("row 1 (history): ada: recorded before the signed log and changed since it began" in line
               for line in verify_out(tmp_path, load_key()).lines())


def test_the_ledger_refuses_an_id_not_in_the_identity_rules_form(tmp_path, assignment):
    book = Gradebook(tmp_path / "g.sqlite")
    try:
        for raw in ("Rahim", " rahim", "rahim  khan", unicodedata.normalize("NFD", "মোহাম্মদ")):
            with pytest.raises(LedgerError, match="identity rule"):
                book.record(make_result(assignment, raw))
        assert book.graded_students(assignment.id) == set()
    finally:
        book.close()
