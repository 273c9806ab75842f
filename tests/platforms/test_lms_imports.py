"""Files each importer takes without hand work: Moodle maps its columns itself, Canvas refuses traps,
and no cell turns into a spreadsheet formula (../shared/notes/lms.md §2, §3)."""

from __future__ import annotations

import csv
import dataclasses
import io
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import make_result, seal
from hypothesis import given
from hypothesis import strategies as st

from autograder.cli.export import export
from autograder.config import Assignment, Kit
from autograder.ledger.book import Gradebook
from autograder.ledger.signing import load_key
from autograder.output.reports import grades_rows, write_class
from autograder.output.spreadsheet import formula_like, original_cell, safe_cell
from autograder.output.verify import verify_out
from autograder.platforms.canvas import write_canvas
from autograder.platforms.export_files import ExportError
from autograder.platforms.moodle import write_moodle

DATA = Path(__file__).resolve().parents[1] / "data"
CANVAS_ROSTER = DATA / "canvas_roster.csv"
BOM = b"\xef\xbb\xbf"
TITLE = "Building models with nn.Module"


@pytest.fixture(scope="module")
def assignment(kit: Kit) -> Assignment:
    return kit.assignment("nn_module")


def rows_of(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_bytes().decode("utf-8-sig"), newline="")))


def moodle_automap(header: list[str], grade_items: dict[str, str]) -> dict[int, str]:
    """What Moodle's mapping form preselects for each column (grade_import_form.php, English site):
    the identifier by the user field's name, `<item> (Real)` and `<item> (Feedback)` by item name."""
    fields = {"userid": "User ID", "username": "Username", "useridnumber": "ID number",
              "useremail": "Email address"}
    mapping: dict[int, str] = {}
    for to, label in fields.items():
        if label in header:
            mapping[header.index(label)] = to
            break
    for i, h in enumerate(h.strip() for h in header):
        for marker, prefix in (("(Real)", ""), ("(Feedback)", "feedback_")):
            if marker in h:
                name = h.split(marker)[0].strip()
                for item_id, item in grade_items.items():
                    if item == name:
                        mapping[i] = prefix + item_id
    return mapping


# -- Moodle ------------------------------------------------------------------------------------
def test_moodle_default_email_without_roster_is_refused_and_writes_nothing(tmp_path, assignment):
    out = tmp_path / "m.csv"
    with pytest.raises(ExportError) as info:
        write_moodle([make_result(assignment, "jdoe"), make_result(assignment, "bob")], assignment, out)
    assert "none of the 2 student ids" in str(info.value) and "--roster" in str(info.value)
    assert not out.exists() and not (tmp_path / "m.csv.meta.json").exists()


def test_moodle_cli_refusal_exits_non_zero(tmp_path, assignment):
    book = Gradebook(tmp_path / "g" / "gradebook.sqlite")
    book.record(make_result(assignment, "jdoe"))
    book.close()
    run = CliRunner().invoke(export, ["moodle", "--gradebook", str(tmp_path / "g"), "--allow-unverified",
                                      "--out", str(tmp_path / "m.csv")])
    assert run.exit_code == 2 and "is an email address" in run.stderr
    assert not (tmp_path / "m.csv").exists()


def test_moodle_cli_exits_4_naming_who_is_left_out_unless_allowed(tmp_path, assignment):
    """As Canvas: Moodle would abort the whole import on an unknown user, so an unmatched student is
    left out of the file, named, and the exit code is not 0; the file written stays."""
    book = Gradebook(tmp_path / "g" / "gradebook.sqlite")
    for student in ("ada@example.edu", "bob"):
        book.record(make_result(assignment, student))
    book.close()
    out = tmp_path / "m.csv"
    args = ["moodle", "--gradebook", str(tmp_path / "g"), "--allow-unverified", "--out", str(out)]
    run = CliRunner().invoke(export, args)
    assert run.exit_code == 4, run.output
    assert "1 graded submission(s) match no roster student by email (student id as is)" in run.stderr
    assert "NOT exported: bob" in run.stderr
    said = " ".join(run.stderr.split())  # as rich wraps it
    assert (f"{out} was written but leaves 1 student(s) out (named above): pass --roster ROSTER.csv "
            "(columns student,email) or another --id-column, or pass --allow-missing") in said
    assert [r[0] for r in rows_of(out)[1:]] == ["ada@example.edu"]
    assert CliRunner().invoke(export, [*args, "--allow-missing"]).exit_code == 0


def test_moodle_bytes_and_columns_moodle_maps_by_itself(tmp_path, assignment):
    out = tmp_path / "m.csv"
    write_moodle([make_result(assignment, "ada@example.edu", {"tinynet": 5})], assignment, out)
    raw = out.read_bytes()
    head, first, end = raw.split(b"\r\n")
    assert head == BOM + f"Email address,{TITLE} (Real),{TITLE} (Feedback)".encode()
    assert first.startswith(b"ada@example.edu,95.00,") and end == b""
    header = rows_of(out)[0]
    assert moodle_automap(header, {"17": TITLE, "18": "Other"}) == {0: "useremail", 1: "17", 2: "feedback_17"}
    activity = "Assignment: Lab 1"  # an activity's grade item: the name the gradebook shows
    write_moodle([make_result(assignment, "ada")], assignment, out, "username", grade_item=activity)
    header = rows_of(out)[0]
    assert header == ["Username", f"{activity} (Real)", f"{activity} (Feedback)"]
    assert moodle_automap(header, {"3": activity}) == {0: "username", 1: "3", 2: "feedback_3"}


def test_moodle_feedback_in_the_gradebooks_language(tmp_path, assignment):
    out = tmp_path / "m.csv"
    result = make_result(assignment, "ada", {"tinynet": 5})
    write_moodle([result], assignment, out, "username", lang="bn")
    feedback = rows_of(out)[1][2]
    assert feedback.startswith(f"{TITLE}: মোট 95/100। ") and "export করা হয়েছে" in feedback
    write_moodle([result], assignment, out, "username", lang="en")
    assert "exported" in rows_of(out)[1][2] and "।" not in rows_of(out)[1][2]


# -- Canvas ------------------------------------------------------------------------------------
def test_canvas_id_the_roster_does_not_have_is_refused(tmp_path, assignment):
    out = tmp_path / "c.csv"
    with pytest.raises(ExportError) as info:
        write_canvas([make_result(assignment, "jdoe")], assignment, CANVAS_ROSTER, out, "sis_login_id",
                     "99999")
    message = str(info.value)
    assert "no assignment with id 99999" in message
    assert "Homework 0 (111)" in message and f"{TITLE} (12345)" in message
    assert not out.exists()


def test_canvas_points_possible_must_be_the_kits_maximum(tmp_path, assignment):
    roster = tmp_path / "r.csv"
    roster.write_bytes(b"Student,ID,SIS Login ID,Section,NN (12345)\r\n    Points Possible,,,,10.00\r\n"
                       b"\"Doe, Jane\",4242,jdoe,S1,\r\n")
    with pytest.raises(ExportError, match="10.00 points possible but the kit grades nn_module out of 100"):
        write_canvas([make_result(assignment, "jdoe")], assignment, roster, tmp_path / "c.csv",
                     "sis_login_id", "12345")
    roster.write_bytes(roster.read_bytes().replace(b",10.00", b",100,00").replace(b",", b";"))
    report = write_canvas([make_result(assignment, "jdoe")], assignment, roster, tmp_path / "c.csv",
                          "sis_login_id", "12345")  # a decimal comma (`;` separated) is the same 100
    assert report.rows == 1
    assert rows_of(tmp_path / "c.csv")[0][-1] == "NN (12345)"  # the column as Canvas names it


def test_canvas_test_student_is_no_missing_student(tmp_path, assignment):
    results = [make_result(assignment, s) for s in ("jdoe", "ayesha", "bsmith", "sean")]
    report = write_canvas(results, assignment, CANVAS_ROSTER, tmp_path / "c.csv", "sis_login_id", "12345")
    assert report.missing_submissions == () and report.warnings == []
    assert "Student, Test" not in [r[0] for r in rows_of(tmp_path / "c.csv")]


def test_canvas_nothing_matched_is_refused_and_writes_nothing(tmp_path, assignment):
    out = tmp_path / "c.csv"
    with pytest.raises(ExportError, match="none of the 2 graded students matches"):
        write_canvas([make_result(assignment, "x1"), make_result(assignment, "x2")], assignment,
                     CANVAS_ROSTER, out, "sis_login_id", "12345")
    assert not out.exists()


def test_canvas_cli_exits_4_naming_who_is_left_out_unless_allowed(tmp_path, assignment):
    book = Gradebook(tmp_path / "g" / "gradebook.sqlite")
    for student in ("jdoe", "ghost"):
        book.record(make_result(assignment, student))
    book.close()
    args = ["canvas", "--gradebook", str(tmp_path / "g"), "--allow-unverified", "--roster",
            str(CANVAS_ROSTER), "--canvas-id", "12345", "--out", str(tmp_path / "c.csv")]
    run = CliRunner().invoke(export, args)
    assert run.exit_code == 4, run.output
    assert "ghost" in run.stderr and "O'Neil, Séan (sean)" in run.stderr
    assert "leaves 4 student(s) out" in run.stderr
    assert (tmp_path / "c.csv").exists()
    assert CliRunner().invoke(export, [*args, "--allow-missing"]).exit_code == 0


# -- Spreadsheet formulas ----------------------------------------------------------------------
def canvas_importer_match(row: list[str], students: dict[str, str]) -> str | None:
    """Canvas' GradebookImporter: a row's student by the ID column first (exact), then by name."""
    if row[1] in students:
        return row[1]
    return next((i for i, n in students.items() if n == row[0]), None)


def test_canvas_display_cells_are_inert_and_ids_stay_exact(tmp_path, assignment):
    roster = tmp_path / "r.csv"
    roster.write_text('Student,ID,SIS User ID,SIS Login ID,Section,NN (12345)\n'
                      '"=HYPERLINK(""http://x"")",4242,S1,jdoe,+Section,\n'
                      "Ada,4243,S2,-ada,@s,\n", encoding="utf-8")
    report = write_canvas([make_result(assignment, "jdoe"), make_result(assignment, "-ada")], assignment,
                          roster, tmp_path / "c.csv", "sis_login_id", "12345")
    rows = rows_of(tmp_path / "c.csv")[2:]
    assert rows[0][:5] == ["'=HYPERLINK(\"http://x\")", "4242", "S1", "jdoe", "'+Section"]
    assert rows[1][:5] == ["Ada", "4243", "S2", "-ada", "'@s"]  # the login id Canvas matches by: exact
    assert not any(formula_like(cell) for row in rows for cell in (row[0], row[4]))
    canvas = {"4242": '=HYPERLINK("http://x")', "4243": "Ada"}
    assert [canvas_importer_match(r, canvas) for r in rows] == ["4242", "4243"]
    assert any("-ada" in note for note in report.notes)  # said, since a spreadsheet would run it


def test_moodle_feedback_is_inert_and_the_identifier_exact(tmp_path, assignment):
    out = tmp_path / "m.csv"
    titled = dataclasses.replace(assignment, title="=Lab 1")  # the feedback starts with the title
    report = write_moodle([make_result(assignment, "-jdoe")], titled, out, "username")
    row = rows_of(out)[1]
    assert row[0] == "-jdoe" and row[2].startswith("'=") and original_cell(row[2]).startswith("=")
    assert any("-jdoe" in note for note in report.notes)


def test_grades_csv_student_cells_are_inert_and_verify_reads_them_back(assignment):
    rows = grades_rows([make_result(assignment, "=1+1"), make_result(assignment, "'quoted")], assignment)
    students = [r[0] for r in rows[1:]]
    assert students == ["''quoted", "'=1+1"]
    assert [original_cell(s) for s in students] == ["'quoted", "=1+1"]


@given(st.text(max_size=20))
def test_safe_cell_is_inert_and_exactly_undone(text):
    cell = safe_cell(text)
    assert not formula_like(cell) and original_cell(cell) == text


def test_verify_reads_back_the_inert_student_cells_of_grades_csv(tmp_path, assignment):
    book = Gradebook(tmp_path / "gradebook.sqlite")
    try:
        for student in ("=hyperlink(1)", "+x", "'quoted", "plain"):
            book.record(make_result(assignment, student))
        write_class(tmp_path, book, assignment, 1.0)
        seal(tmp_path)
    finally:
        book.close()
    cells = [r[0] for r in rows_of(tmp_path / "grades.csv")[1:]]
    assert cells == ["''quoted", "'+x", "'=hyperlink(1)", "plain"]
    report = verify_out(tmp_path, load_key())
    assert report.ok and report.checked >= 8, report.lines()
