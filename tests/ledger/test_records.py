"""The instructor's records (adjustments, extensions, releases, regrade messages): signed, held by `verify`.

Proves: an adjustment on a check, a task or the total changes the grade as it counts (each kept in
its range, the newest of a scope in force, 0 points undoing it) and outlasts a regrade; results.json
and grades.csv show the adjusted score and verify; each kind of record edited (any column), deleted or
added by hand is named by `verify`, by student; a ledger from before the records (schema 2) verifies.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from conftest import make_result, seal

from autograder.config import Assignment, Kit
from autograder.errors import LedgerError
from autograder.ledger import records
from autograder.ledger.adjustments import applied
from autograder.ledger.book import Gradebook
from autograder.ledger.release import HELD, Rules, release_of
from autograder.output.reports import write_class, write_student
from autograder.output.verify import verify_out
from autograder.platforms.lti.scores import score_comment

WHEN = "2025-12-14T10:00:00+00:00"


@pytest.fixture(scope="module")
def assignment(kit: Kit) -> Assignment:
    return kit.assignment("nn_module")


def adjustment(assignment: Assignment, student: str, points: float, task: str = "", check: str = "",
               reason: str = "the grader missed it") -> dict[str, Any]:
    return {"assignment": assignment.id, "student": student, "task": task, "check_id": check,
            "points": points, "reason": reason, "author": "prof", "made_at": WHEN, "request": None}


def one_of_each(assignment: Assignment, student: str) -> list[tuple[records.RecordKind, dict[str, Any]]]:
    return [
        (records.ADJUSTMENT, adjustment(assignment, student, 2.0, "tinynet", "tinynet.hidden")),
        (records.EXTENSION, {"assignment": assignment.id, "student": student, "deadline": WHEN, "exempt": 0,
                             "reason": "ill", "author": "prof", "made_at": WHEN}),
        (records.RELEASE, {"assignment": assignment.id, "mode": HELD, "release_at": "", "author": "prof",
                           "made_at": WHEN}),
        (records.REGRADE_MESSAGE, {"assignment": assignment.id, "student": student, "role": "student",
                                   "author": student, "text": "please look at tinynet", "upload": None,
                                   "closes": 0, "adjustment": None, "made_at": WHEN}),
    ]


def test_adjustments_apply_in_their_range_and_outlast_a_regrade(tmp_path: Path, assignment: Assignment):
    book = Gradebook(tmp_path / "g.sqlite")
    try:
        book.record(make_result(assignment, "ada", {"tinynet": 5}))  # 95: tinynet's hidden half 2.5 / 7.5
        with book.recording() as add:
            add(records.ADJUSTMENT, adjustment(assignment, "ada", 3.0, "tinynet", "tinynet.hidden"))
            add(records.ADJUSTMENT, adjustment(assignment, "ada", -2.0, reason="copied a line"))
        [ada] = book.standing(assignment.id)
        assert ada.score == 96.0 and ada.task("tinynet").score == 13.0
        assert [a["made"] for a in applied(ada)] == [3.0, -2.0]
        assert any("copied a line" in note for note in ada.notes)  # the student reads why
        # a regrade: the graders' new result is current, the adjustments stay on it
        book.record(make_result(assignment, "ada", {"tinynet": 6}), force=True)  # 94
        [ada] = book.standing(assignment.id)
        assert ada.score == 95.0
        assert book.current(assignment.id)[0].score == 94.0  # the grading itself stays as graded
        with book.recording() as add:  # the newest of a scope is in force; more than the check holds is cut
            add(records.ADJUSTMENT, adjustment(assignment, "ada", 10.0, "tinynet", "tinynet.hidden"))
        [ada] = book.standing(assignment.id)
        assert ada.task("tinynet").score == 15.0 and ada.score == 98.0
        with book.recording() as add:  # 0 points undoes the check's adjustment; on a task, within it
            add(records.ADJUSTMENT, adjustment(assignment, "ada", 0.0, "tinynet", "tinynet.hidden"))
            add(records.ADJUSTMENT, adjustment(assignment, "ada", -20.0, "dropout"))
        [ada] = book.standing(assignment.id)
        assert ada.task("dropout").score == 0.0 and ada.task("tinynet").score == 9.0
        assert ada.score == round(94.0 - 15.0 - 2.0, 6)
        assert "77" in score_comment(ada, "nn_module")  # the LMS's comment says the adjusted total
        with pytest.raises(LedgerError, match="adjustments applied"):
            book.record(ada, force=True)  # an adjusted result is never a grading of its own
    finally:
        book.close()


@pytest.fixture
def out(tmp_path: Path, assignment: Assignment) -> Path:
    """ada and bob graded, every kind of record made for ada, the files written as the batch writes them."""
    out = tmp_path / "out"
    book = Gradebook(out / "gradebook.sqlite")
    try:
        for result in (make_result(assignment, "ada", {"tinynet": 5}), make_result(assignment, "bob")):
            book.record(result)
        with book.recording() as add:
            for kind, values in one_of_each(assignment, "ada"):
                add(kind, values)
        for result in book.current(assignment.id):
            write_student(out, book.adjusted(result), assignment)
        write_class(out, book, assignment, 1.0)
        seal(out)
    finally:
        book.close()
    return out


def test_the_files_show_the_adjusted_grade_and_verify(out: Path, key: bytes):
    data = json.loads((out / "ada" / "results.json").read_text(encoding="utf-8"))
    assert data["score"] == 97.0 and data["extra_data"]["adjusted"]["graded_score"] == 95.0
    assert [t["score"] for t in data["tests"] if "adjustment" in t["extra_data"]] == [2.0]
    assert "97" in (out / "grades.csv").read_text(encoding="utf-8").split("ada", 1)[1].split("\n")[0]
    report = verify_out(out, key)
    assert report.ok, report.lines()


@pytest.fixture
def key() -> bytes:
    from autograder.ledger.signing import load_key

    return load_key()


@pytest.mark.parametrize(("table", "column", "value"), [
    ("adjustments", "points", 7.0), ("adjustments", "reason", "nothing"), ("adjustments", "check_id", "x"),
    ("extensions", "deadline", "2030-01-01T00:00:00+00:00"), ("extensions", "exempt", 1),
    ("releases", "mode", "now"), ("regrade_messages", "text", "I never asked"),
])
def test_an_edited_record_fails_verify(out: Path, key: bytes, table: str, column: str, value: Any):
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        db.execute(f"UPDATE {table} SET {column} = ?", (value,))
    report = verify_out(out, key)
    lines = "\n".join(report.lines())
    assert not report.ok
    assert f"{table} row 1" in lines and f"edited: its {column.replace('_', ' ')}" in lines, lines


def test_a_deleted_or_forged_record_fails_verify(out: Path, key: bytes, assignment: Assignment):
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        db.execute("DELETE FROM adjustments")
        db.execute("INSERT INTO extensions (assignment, student, deadline, exempt, reason, author, made_at)"
                   " VALUES (?, 'bob', '', 1, 'forged', 'nobody', ?)", (assignment.id, WHEN))
    lines = "\n".join(verify_out(out, key).lines())
    assert "adjustments row 1: ada: deleted: ledger entry" in lines
    assert "extensions row 2: bob: not in the signed log: this extension was added by hand" in lines, lines


def test_the_release_and_extensions_are_read_from_the_ledger(out: Path, assignment: Assignment):
    book = Gradebook(out / "gradebook.sqlite")
    try:
        rules = Rules.of(book, assignment.id)
    finally:
        book.close()
    assert rules.hold.mode == HELD and set(rules.extensions) == {"ada"}
    assert release_of(assignment, "bob", rules=rules).held
