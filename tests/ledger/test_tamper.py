"""Tampering with a graded OUT: every edit the ledger's log must catch, named by student.

Proves: `verify` catches a current grade flipped to an older grading, a current row deleted (and
the Moodle export then refuses instead of sending the old score or one row fewer), points moved
between checks of a task (in the gradebook and in results.json), an edited row, entries
reordered, an entry deleted from the middle or the end of the log, a row added by hand, a
grades.csv or results.json that is not the current grade; another key is named by its id; and
`grade` refuses to make a new key, or use another, where a ledger is signed with one.
"""

from __future__ import annotations

import csv
import json
import shutil
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT, make_result, seal

from autograder.batch import Entry, grade_batch
from autograder.cli import main
from autograder.config import Assignment, Kit
from autograder.errors import ClusterError, ConfigError
from autograder.grading.options import GradeOptions
from autograder.grading.results import SubmissionResult
from autograder.ledger.book import Gradebook
from autograder.ledger.signing import KEY_ENV, key_id, load_key
from autograder.output.reports import write_class, write_student
from autograder.output.verify import verify_out


@pytest.fixture(scope="module")
def assignment(kit: Kit) -> Assignment:
    return kit.assignment("nn_module")


@pytest.fixture(scope="module")
def pristine(tmp_path_factory, assignment) -> Path:
    """ada (100), bob graded twice (95, then 92.5: current), carol (100): a batch's OUT."""
    out = tmp_path_factory.mktemp("pristine") / "out"
    book = Gradebook(out / "gradebook.sqlite")
    try:
        for result in (make_result(assignment, "ada"), make_result(assignment, "bob", {"tinynet": 5}),
                       make_result(assignment, "carol"), make_result(assignment, "bob", {"tinynet": 15})):
            book.record(result)
            write_student(out, result, assignment)
        write_class(out, book, assignment, 1.0)
        seal(out)
    finally:
        book.close()
    return out


@pytest.fixture
def out(pristine, tmp_path) -> Path:
    copy = tmp_path / "out"
    shutil.copytree(pristine, copy)
    return copy


def _sql(out: Path, *statements: str) -> None:
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        for statement in statements:
            db.execute(statement)


def _rows(out: Path, query: str) -> list[tuple]:
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        return db.execute(query).fetchall()


def _problems(out: Path) -> list[str]:
    report = verify_out(out, load_key())
    return report.lines()


def _bob_rows(out: Path) -> tuple[int, int]:
    (old,), (new,) = _rows(out, "SELECT id FROM gradings WHERE student = 'bob' ORDER BY id")
    return old, new


def test_a_graded_out_verifies(pristine):
    report = verify_out(pristine, load_key())
    assert report.ok, report.lines()
    assert report.entries == 5 and report.key_id == key_id(load_key())  # start + four gradings


def test_flipping_current_to_an_older_grading_is_caught_and_the_export_refused(out, tmp_path):
    old, new = _bob_rows(out)
    _sql(out, f"UPDATE gradings SET current = 0 WHERE id = {new}",
         f"UPDATE gradings SET current = 1 WHERE id = {old}")
    found = _problems(out)
    assert any(": bob: the current grade is re-pointed" in line and f"makes row {new} current" in line
               for line in found), found
    moodle = CliRunner().invoke(main, ["export", "moodle", "--gradebook", str(out), "--id-column", "username",
                                       "--out", str(tmp_path / "m.csv"), "--kit", str(ROOT)])
    assert moodle.exit_code != 0 and "re-pointed" in moodle.output and not (tmp_path / "m.csv").exists()


def test_deleting_a_current_row_is_caught(out):
    old, new = _bob_rows(out)
    _sql(out, f"DELETE FROM gradings WHERE id = {new}")
    found = _problems(out)
    assert any(f"row {new}: bob: deleted: ledger entry" in line for line in found), found
    _sql(out, f"UPDATE gradings SET current = 1 WHERE id = {old}")  # and the older one made current
    assert any(": bob: the current grade is re-pointed" in line for line in _problems(out))


def _move_points(result: dict) -> None:
    """bob's tinynet: 7.5 public + 0 hidden -> 0 public + 7.5 hidden: the task's total unchanged."""
    task = next(t for t in (result.get("tasks") or []) if t["task"] == "tinynet")
    public, hidden = task["checks"]
    public["score"], hidden["score"] = hidden["score"], public["score"]


def test_moving_points_between_checks_is_caught_in_the_gradebook_and_in_results_json(out):
    (row_id, text), = _rows(out, "SELECT id, result FROM gradings WHERE student = 'bob' AND current = 1")
    result = json.loads(text)
    _move_points(result)
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        db.execute("UPDATE gradings SET result = ? WHERE id = ?", (json.dumps(result), row_id))
    found = _problems(out)
    assert any(f"row {row_id}: bob: edited: its stored result" in line and "moved between checks" in line
               for line in found), found

    path = out / "carol" / "results.json"  # the same in carol's results.json, totals kept
    data = json.loads(path.read_text())
    tests = [t for t in data["tests"] if t["tags"] == ["tinynet"]]
    tests[0]["score"], tests[1]["score"] = 0.0, tests[0]["score"] + tests[1]["score"]
    path.write_text(json.dumps(data))
    assert any(line.startswith("carol/results.json: carol: ") and "does not match its signature" in line
               for line in _problems(out))


def test_an_edited_row_is_caught_by_what_was_signed(out):
    _sql(out, "UPDATE gradings SET score = 100 WHERE student = 'bob' AND current = 1",
         "UPDATE gradings SET graded_at = '2020-01-01T00:00:00+00:00' WHERE student = 'ada'")
    found = _problems(out)
    assert any(": bob: edited: its score column is 100.0" in line and "signed 92.5" in line
               for line in found), found
    assert any(": ada: edited: its graded at is '2020-01-01" in line for line in found), found


def test_reordered_entries_are_caught_by_student(out):
    seqs = dict(_rows(out, "SELECT student, seq FROM ledger_log WHERE student IN ('ada', 'carol')"))
    a, c = seqs["ada"], seqs["carol"]
    _sql(out, f"UPDATE ledger_log SET seq = -1 WHERE seq = {a}",  # carol's entry first, ada's after
         f"UPDATE ledger_log SET seq = {a} WHERE seq = {c}",
         f"UPDATE ledger_log SET seq = {c} WHERE seq = -1")
    found = _problems(out)
    for student, seq in (("carol", a), ("ada", c)):
        assert any(f"ledger entry {seq}: {student}: a grading entry whose signature no longer holds" in line
                   for line in found), found


def test_an_entry_deleted_from_the_middle_or_the_end_is_caught_by_student(out, pristine):
    (first,), = _rows(out, "SELECT seq FROM ledger_log WHERE student = 'bob' ORDER BY seq LIMIT 1")
    _sql(out, f"DELETE FROM ledger_log WHERE seq = {first}")
    found = _problems(out)
    assert any(f"ledger entries {first}-{first}: missing" in line for line in found), found
    assert any(f"bob: follows this student's entry {first}, which is missing" in line
               for line in found), found

    end = out.parent / "end"
    shutil.copytree(pristine, end)
    old, new = _bob_rows(end)  # bob's last grading undone: its entry, its row, the older one current again
    _sql(end, "DELETE FROM ledger_log WHERE seq = (SELECT MAX(seq) FROM ledger_log)",
         f"DELETE FROM gradings WHERE id = {new}", f"UPDATE gradings SET current = 1 WHERE id = {old}")
    found = _problems(end)
    assert any("ledger entries 5-5: missing: deleted from the end of the log" in line
               for line in found), found
    assert any(": bob: this student's latest entry is missing" in line for line in found), found


def test_a_row_added_by_hand_and_files_that_are_not_the_current_grade_are_caught(out, assignment):
    _sql(out, "INSERT INTO gradings (assignment, student, graded_at, score, max_score, current, result,"
              " submission_sha256, grader_digest, signature, folder) SELECT assignment, 'mallory', graded_at,"
              " score, max_score, 1, result, submission_sha256, grader_digest, signature, 'mallory'"
              " FROM gradings WHERE student = 'ada'")
    found = _problems(out)
    assert any(": mallory: not in the signed log: the row was added by hand" in line for line in found), found

    shutil.copy(out / "ada" / "results.json", out / "carol" / "results.json")  # someone else's file
    write_student(out, make_result(assignment, "bob", {"tinynet": 5}), assignment)  # older, signed too
    rows = list(csv.reader((out / "grades.csv").open(encoding="utf-8")))
    total = rows[0].index("total")
    rows[[r[0] for r in rows].index("bob")][total] = "95"  # bob's older grade, which is signed too
    with (out / "grades.csv").open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    found = _problems(out)
    assert any(line.startswith("carol/results.json: ada: names student 'ada'") for line in found), found
    assert any(line.startswith("bob/results.json: bob: not the student's current grade: the ledger's is row")
               for line in found), found
    assert any("grades.csv line" in line and ": bob: does not show the student's current grade: total is '95'"
               in line for line in found), found


def test_another_key_is_named_by_its_id(out, tmp_path, monkeypatch):
    other = tmp_path / "other.key"
    other.write_text("f" * 64)
    report = verify_out(out, other.read_bytes())
    assert len(report.problems) == 1, report.lines()
    line = report.lines()[0]
    assert f"signed with key id {key_id(load_key())}" in line and f"key id {key_id(b'f' * 64)}" in line
    assert KEY_ENV in line


def test_grade_refuses_a_new_or_another_key_where_the_ledger_is_signed(out, tmp_path, monkeypatch, kit):
    empty = tmp_path / "class"
    empty.mkdir()
    expected = key_id(load_key())
    gone = tmp_path / "deleted.key"
    monkeypatch.setenv(KEY_ENV, str(gone))  # the key was deleted
    with pytest.raises(ConfigError, match=f"signed with key id {expected}: set {KEY_ENV}="):
        grade_batch(kit, empty, out, options=GradeOptions(sandbox=False))
    assert not gone.exists()  # no new key was made
    checked = CliRunner().invoke(main, ["verify", str(out)])
    assert checked.exit_code != 0 and f"signed with key id {expected}" in checked.output, checked.output
    assert not gone.exists()
    run = CliRunner().invoke(main, ["grade", str(empty), "--out", str(out), "--no-sandbox",
                                    "--kit", str(ROOT)])
    assert run.exit_code != 0 and expected in run.output and KEY_ENV in run.output, run.output
    gone.write_text("e" * 64)  # another key
    another = f"is key id {key_id(b'e' * 64)}, but this ledger is signed with key id {expected}"
    with pytest.raises(ConfigError, match=another):
        grade_batch(kit, empty, out, options=GradeOptions(sandbox=False))


class _StopsAfterOne:
    """An executor that grades its first submission (a hand-built result) and then fails."""

    def grade(self, kit: Kit, target: Assignment, todo: Sequence[Entry], options: GradeOptions, plan: object,
              notice: object) -> Iterator[SubmissionResult]:
        yield make_result(target, todo[0].student)
        raise ClusterError("the cluster went away")


def test_the_class_files_follow_the_ledger_after_an_abort(out, tmp_path, kit, assignment):
    klass = tmp_path / "class"
    for name in ("dan", "eve"):
        (klass / name).mkdir(parents=True)
        (klass / name / "tinynet.py").write_text("x = 1\n")
    before = (out / "report.html").read_text(encoding="utf-8")
    with pytest.raises(ClusterError, match="went away"):
        grade_batch(kit, klass, out, options=GradeOptions(sandbox=False), executor=_StopsAfterOne())
    students = [r["student"] for r in csv.DictReader((out / "grades.csv").open(encoding="utf-8"))]
    assert students == ["ada", "bob", "carol", "dan"]  # dan was recorded before the abort
    assert (out / "report.html").read_text(encoding="utf-8") != before
    assert verify_out(out, load_key()).ok, _problems(out)


def test_a_grading_that_does_not_count_is_signed_as_history(out, assignment):
    book = Gradebook(out / "gradebook.sqlite")
    try:  # the service's `counts` rule: recorded, signed, and the current grade left as it was
        book.record(make_result(assignment, "ada", {"tinynet": 15}), force=True, current=False)
    finally:
        book.close()
    (row_id,), = _rows(out, "SELECT MAX(id) FROM gradings WHERE student = 'ada'")
    assert _rows(out, f"SELECT current FROM gradings WHERE id = {row_id}") == [(0,)]
    assert verify_out(out, load_key()).ok, _problems(out)
    _sql(out, "UPDATE gradings SET current = 0 WHERE student = 'ada'",
         f"UPDATE gradings SET current = 1 WHERE id = {row_id}")  # made current by hand
    assert any(f": ada: the current grade is re-pointed: row {row_id} is marked current" in line
               for line in _problems(out)), _problems(out)
