"""`autograder adjust|extend|release` on a graded OUT, and every export of it after an adjustment.

Proves: `adjust` records a signed adjustment (who, when, why), rewrites the student's files and the
class files with the adjusted score (the reason in their feedback, en and bn), keeps an oversize or
negative one within its range with both the asked and the made points; `verify` passes, and names an
edited, added or deleted adjustment row; grades.csv, Canvas, Moodle, JUnit and Gradescope's
results.json carry the adjusted score; a bad scope is refused naming what exists, nothing recorded;
`extend --csv` refuses a bad file by file, line and fix with nothing applied, and records a good one;
`release` records held / at / now and refuses a time without an offset where there is no zone.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from conftest import ROOT, make_result, seal

from autograder.cli import main
from autograder.config import Assignment, Kit
from autograder.ledger import records
from autograder.ledger.book import Gradebook
from autograder.ledger.release import AT, HELD, NOW, hold_of
from autograder.output.reports import write_class, write_student

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def assignment(kit: Kit) -> Assignment:
    return kit.assignment("nn_module")


@pytest.fixture
def out(tmp_path: Path, assignment: Assignment) -> Path:
    """jdoe (85: delivery -10, dropout -5) and ayesha (100) graded, their files and the class files."""
    out = tmp_path / "out"
    book = Gradebook(out / "gradebook.sqlite")
    try:
        for result in (make_result(assignment, "jdoe", {"delivery": 10, "dropout": 5}),
                       make_result(assignment, "ayesha")):
            book.record(result)
            write_student(out, result, assignment)
        write_class(out, book, assignment, 2.5)
        seal(out)
    finally:
        book.close()
    return out


def run(*args: str) -> Result:
    return CliRunner().invoke(main, [*args, "--kit", str(ROOT)])


def said(result: Result) -> str:
    """What a command printed, whatever width rich wrapped its error to."""
    return " ".join(result.output.split())


def grades(out: Path) -> dict[str, dict[str, str]]:
    return {r["student"]: r for r in csv.DictReader(io.StringIO((out / "grades.csv").read_text("utf-8")))}


def test_adjust_rewrites_the_files_with_the_adjusted_score_and_verifies(out: Path):
    done = run("adjust", str(out), "JDoe", "--task", "delivery", "--points", "4", "--reason",
               "the grader missed your fix", "--author", "prof")
    assert done.exit_code == 0, done.output
    assert "asked +4" in said(done) and "total 85 as graded -> 89/100" in said(done), done.output
    assert grades(out)["jdoe"]["total"] == "89" and grades(out)["jdoe"]["delivery"] == "14"
    data = json.loads((out / "jdoe" / "results.json").read_text("utf-8"))
    assert data["score"] == 89 and data["extra_data"]["adjusted"]["graded_score"] == 85
    assert "the grader missed your fix" in data["output"]  # the student reads why
    assert "the grader missed your fix" in (out / "jdoe" / "feedback.md").read_text("utf-8")
    assert grades(out)["ayesha"]["total"] == "100"  # nobody else changes
    book = Gradebook(out / "gradebook.sqlite")
    try:
        [row] = book.records(records.ADJUSTMENT)
    finally:
        book.close()
    assert (row["author"], row["points"], row["task"], row["student"]) == ("prof", 4.0, "delivery", "jdoe")
    assert row["made_at"].endswith("+00:00")
    checked = CliRunner().invoke(main, ["verify", str(out)])
    assert checked.exit_code == 0, checked.output


def test_an_oversize_adjustment_is_kept_in_range_with_both_points(out: Path):
    done = run("adjust", str(out), "jdoe", "--check", "dropout.hidden", "--points", "50", "--reason",
               "full marks here", "--lang", "bn")
    assert done.exit_code == 0, done.output
    assert "asked +50, made +5 (kept within the range of check dropout.hidden (task dropout))" in said(done)
    assert grades(out)["jdoe"]["total"] == "90"
    html = (out / "jdoe" / "feedback.html").read_text("utf-8")
    assert 'lang="bn"' in html and "আপনার শিক্ষক" in html and "full marks here" in html  # in Bangla
    taken = run("adjust", str(out), "ayesha", "--points", "-500", "--reason", "copied")
    assert "asked -500, made -100" in said(taken) and grades(out)["ayesha"]["total"] == "0"
    data = json.loads((out / "ayesha" / "results.json").read_text("utf-8"))
    [made] = data["extra_data"]["adjusted"]["adjustments"]
    assert (made["points"], made["made"]) == (-500, -100)
    assert CliRunner().invoke(main, ["verify", str(out)]).exit_code == 0


def test_a_bad_scope_is_refused_and_nothing_is_recorded(out: Path):
    for args, expected in [
        (["--task", "nope"], "no task 'nope'"),
        (["--check", "delivery.nothing"], "has no check 'delivery.nothing'"),
        (["--task", "tinynet", "--check", "delivery.hidden"], "in task 'tinynet'"),
    ]:
        done = run("adjust", str(out), "jdoe", *args, "--points", "1", "--reason", "r")
        assert done.exit_code != 0 and expected in said(done), done.output
    missing = run("adjust", str(out), "zed", "--points", "1", "--reason", "r")
    assert missing.exit_code != 0 and "'zed' has no grade" in said(missing)
    blank = run("adjust", str(out), "jdoe", "--points", "1", "--reason", "  ")
    assert blank.exit_code != 0 and "needs a reason" in said(blank)
    book = Gradebook(out / "gradebook.sqlite")
    try:
        assert book.records(records.ADJUSTMENT) == []
    finally:
        book.close()


@pytest.mark.parametrize("edit", ["UPDATE adjustments SET points = 40", "DELETE FROM adjustments",
                                  "INSERT INTO adjustments (assignment, student, task, check_id, points, "
                                  "reason, author, made_at) VALUES ('nn_module', 'ayesha', '', '', 5, 'x', "
                                  "'x', 'now')"])
def test_verify_names_an_edited_deleted_or_forged_adjustment(out: Path, edit: str):
    assert run("adjust", str(out), "jdoe", "--points", "3", "--reason", "bonus").exit_code == 0
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        db.execute(edit)
    checked = CliRunner().invoke(main, ["verify", str(out)])
    assert checked.exit_code == 1, checked.output
    named = {"UPDATE": "adjustments row 1: jdoe: edited: its points",
             "DELETE": "adjustments row 1: jdoe: deleted",
             "INSERT": "adjustments row 2: ayesha: not in the signed log"}[edit.split()[0]]
    assert named in said(checked), checked.output


def test_every_export_carries_the_adjusted_score(out: Path, tmp_path: Path, assignment: Assignment):
    done = run("adjust", str(out), "jdoe", "--task", "delivery", "--points", "4.5", "--reason", "r")
    assert done.exit_code == 0, done.output
    canvas = tmp_path / "canvas.csv"
    done = run("export", "canvas", "--gradebook", str(out), "--roster", str(DATA / "canvas_roster.csv"),
               "--canvas-id", "12345", "--out", str(canvas), "--allow-missing")
    assert done.exit_code == 0, done.output
    rows = list(csv.reader(io.StringIO(canvas.read_text("utf-8-sig"))))
    assert [r[-1] for r in rows if "jdoe" in r] == ["89.50"]
    moodle = tmp_path / "moodle.csv"
    done = run("export", "moodle", "--gradebook", str(out), "--roster", str(DATA / "moodle_roster.csv"),
               "--out", str(moodle), "--allow-missing")
    assert done.exit_code == 0, done.output
    [jdoe] = [r for r in csv.DictReader(io.StringIO(moodle.read_text("utf-8-sig")))
              if r["Email address"] == "jane.doe@example.edu"]
    assert float(jdoe[f"{assignment.title} (Real)"]) == 89.5
    junit = tmp_path / "junit"
    assert run("export", "junit", "--gradebook", str(out), "--out", str(junit)).exit_code == 0
    tree = ET.parse(junit / "jdoe.xml")
    totals = {p.get("value") for p in tree.iter("property") if p.get("name") == "total_score"}
    delivery = [s for s in tree.iter("testsuite") if s.get("name") == "nn_module.delivery"][0]
    assert totals == {"89.5"}
    scores = {p.get("value") for p in delivery.iter("property") if p.get("name") == "delivery.score"}
    assert scores == {"14.5"}
    data = json.loads((out / "jdoe" / "results.json").read_text("utf-8"))  # Gradescope's results.json
    assert data["score"] == 89.5 and sum(t["score"] for t in data["tests"]) == 89.5


def test_extend_from_a_csv_refuses_bad_rows_with_nothing_applied(out: Path, tmp_path: Path):
    bad = tmp_path / "ext.csv"
    bad.write_text("student,until,exempt,reason\njdoe,2025-12-20T23:59:00+06:00,,ill\n"
                   "ayesha,next week,,\n,,yes,\njdoe,,yes,twice\nbob,,maybe,\n", encoding="utf-8")
    done = run("extend", str(out), "--csv", str(bad))
    assert done.exit_code != 0
    for line, fix in [(3, "not an ISO 8601 time"), (4, "no student"), (5, "jdoe is on line 2 too"),
                      (6, "write yes or no")]:
        assert f"ext.csv, line {line}: " in said(done) and fix in said(done), done.output
    assert "nothing was recorded" in said(done)
    book = Gradebook(out / "gradebook.sqlite")
    try:
        assert book.records(records.EXTENSION) == []
    finally:
        book.close()
    good = tmp_path / "good.csv"
    good.write_text("Student,Until,Exempt,Reason\nJDoe,2025-12-20T23:59:00+06:00,,ill\nayesha,,yes,visa\n",
                    encoding="utf-8")
    done = run("extend", str(out), "--csv", str(good), "--author", "prof")
    assert done.exit_code == 0, done.output
    one = run("extend", str(out), "ayesha", "--until", "2025-12-21T10:00:00+00:00", "--reason", "more")
    assert one.exit_code == 0, one.output
    naive = run("extend", str(out), "ayesha", "--until", "2025-12-21T10:00:00")  # homework: no zone
    assert naive.exit_code != 0 and "no UTC offset" in said(naive)
    book = Gradebook(out / "gradebook.sqlite")
    try:
        found = [(r["student"], r["deadline"], r["exempt"]) for r in book.records(records.EXTENSION)]
    finally:
        book.close()
    assert found == [("jdoe", "2025-12-20T23:59:00+06:00", 0), ("ayesha", "", 1),
                     ("ayesha", "2025-12-21T10:00:00+00:00", 0)]
    assert CliRunner().invoke(main, ["verify", str(out)]).exit_code == 0


def test_release_records_hold_at_and_now(out: Path):
    assert run("release", str(out), "--hold").exit_code == 0
    at = run("release", str(out), "--at", "2025-12-20T09:00:00+06:00")
    assert at.exit_code == 0 and "held until 2025-12-20T09:00:00+06:00" in said(at), at.output
    book = Gradebook(out / "gradebook.sqlite")
    try:
        assert hold_of(book, "nn_module").mode == AT
        assert [r["mode"] for r in book.records(records.RELEASE)] == [HELD, AT]
    finally:
        book.close()
    assert run("release", str(out), "--now").exit_code == 0
    both = run("release", str(out), "--now", "--at", "2025-12-20T09:00:00+06:00")
    assert both.exit_code != 0 and "one of --hold, --at ISO, --now" in said(both)
    book = Gradebook(out / "gradebook.sqlite")
    try:
        assert hold_of(book, "nn_module").mode == NOW
    finally:
        book.close()
