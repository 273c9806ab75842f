"""Canvas, Moodle and JUnit exports follow their importers' rules (../shared/notes/lms.md §2, §3, §7)."""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
import xml.etree.ElementTree as ET
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import make_result

import autograder
from autograder.cli.export import export
from autograder.config import Assignment, Kit
from autograder.grading.results import SubmissionResult
from autograder.ledger.book import Gradebook
from autograder.platforms.canvas import write_canvas
from autograder.platforms.export_files import ExportError, meta_path
from autograder.platforms.junit import write_junit, write_junit_all
from autograder.platforms.moodle import write_moodle
from autograder.platforms.rosters import read_canvas_roster

DATA = Path(__file__).resolve().parents[1] / "data"
CANVAS_ROSTER = DATA / "canvas_roster.csv"
MOODLE_ROSTER = DATA / "moodle_roster.csv"
BOM = b"\xef\xbb\xbf"


@pytest.fixture(scope="module")
def assignment(kit: Kit) -> Assignment:
    return kit.assignment("nn_module")


@pytest.fixture
def results(assignment: Assignment) -> list[SubmissionResult]:
    return [
        make_result(assignment, "jdoe", {"delivery": 10, "dropout": 5}),  # 85
        make_result(assignment, "ayesha"),  # 100
        make_result(
            assignment,
            "bsmith",
            {
                "tinynet": 7.5,
                "delivery": 10,
                "counting": 7.5,
                "checkpoint": 7.5,
                "dropout": 5,
                "containers": 5,
            },
        ),  # 57.5
        make_result(assignment, "ghost", {"counting": 2.25}),  # on no roster
    ]


def read_rows(path: Path) -> list[list[str]]:
    raw = path.read_bytes()
    return list(csv.reader(io.StringIO(raw.decode("utf-8-sig"), newline="")))


# -- Canvas ------------------------------------------------------------------------------------
def test_canvas_header_points_row_and_rows(tmp_path, assignment, results):
    out = tmp_path / "canvas.csv"
    report = write_canvas(results, assignment, CANVAS_ROSTER, out, "sis_login_id", "12345")
    raw = out.read_bytes()
    assert raw.startswith(BOM)
    lines = raw[len(BOM) :].decode("utf-8").split("\r\n")
    assert lines[0] == "Student,ID,SIS User ID,SIS Login ID,Section,Building models with nn.Module (12345)"
    assert lines[1] == "    Points Possible,,,,,100.00"
    rows = read_rows(out)
    assert rows[2:] == [
        ["Doe, Jane", "4242", "S0001", "jdoe", "Section 1", "85.00"],
        ["রহমান, আয়েশা", "4243", "S0002", "ayesha", "Section 1, Dhaka", "100.00"],
        ['Smith, Bob "Bobby"', "4245", "S0004", "BSmith", "Section 2", "57.50"],
    ]
    # csv quoting, checked on the bytes: commas and quotes inside names survive
    assert '"Doe, Jane",4242' in lines[2]
    assert '"রহমান, আয়েশা",4243,S0002,ayesha,"Section 1, Dhaka",100.00' == lines[3]
    assert '"Smith, Bob ""Bobby""",4245' in lines[4]
    assert report.rows == 3


def test_canvas_reports_unmatched_and_missing_instead_of_dropping_or_zeroing(tmp_path, assignment, results):
    out = tmp_path / "canvas.csv"
    report = write_canvas(results, assignment, CANVAS_ROSTER, out, "sis_login_id", "12345")
    assert report.unmatched_submissions == ("ghost",)
    assert report.missing_submissions == ("O'Neil, Séan (sean)",)  # Canvas' Test Student is no student
    text = "\n".join(report.warnings)
    assert "ghost" in text and "NOT exported" in text and "O'Neil, Séan (sean)" in text
    names = [r[0] for r in read_rows(out)]
    assert "O'Neil, Séan" not in names and "Student, Test" not in names  # left out, not given 0 or blank
    meta = json.loads(meta_path(out).read_text(encoding="utf-8"))
    assert meta["unmatched_submissions"] == ["ghost"]
    assert len(meta["roster_students_without_submission"]) == 1


@pytest.mark.parametrize(("match_by", "ids"), [("sis_user_id", ("S0001", "S0002")), ("id", ("4242", "4243"))])
def test_canvas_matches_by_other_columns(tmp_path, assignment, match_by, ids):
    results = [make_result(assignment, ids[0]), make_result(assignment, ids[1], {"tinynet": 1})]
    out = tmp_path / "canvas.csv"
    report = write_canvas(results, assignment, CANVAS_ROSTER, out, match_by, "12345")
    rows = read_rows(out)
    assert [r[0] for r in rows[2:]] == ["Doe, Jane", "রহমান, আয়েশা"]
    assert [r[5] for r in rows[2:]] == ["100.00", "99.00"]
    assert report.unmatched_submissions == ()


def test_canvas_matching_ignores_case_of_login_ids(tmp_path, assignment):
    out = tmp_path / "canvas.csv"
    report = write_canvas(
        [make_result(assignment, "bsmith")], assignment, CANVAS_ROSTER, out, canvas_assignment_id="12345"
    )
    assert read_rows(out)[2][3] == "BSmith" and report.unmatched_submissions == ()


def test_canvas_roster_missing_the_match_column_is_an_error_naming_file_and_column(
    tmp_path, assignment, results
):
    roster = tmp_path / "no_sis.csv"
    roster.write_text('Student,ID,SIS Login ID,Section\n"Doe, Jane",4242,jdoe,S1\n', encoding="utf-8")
    with pytest.raises(ExportError) as info:
        write_canvas(results, assignment, roster, tmp_path / "c.csv", "sis_user_id", "1")
    assert str(roster) in str(info.value) and "'SIS User ID'" in str(info.value)
    assert not (tmp_path / "c.csv").exists()


def test_canvas_rejects_a_non_canvas_roster_and_a_non_numeric_id(tmp_path, assignment, results):
    roster = tmp_path / "other.csv"
    roster.write_text("name,email\nA,a@x\n", encoding="utf-8")
    with pytest.raises(ExportError, match="not a Canvas gradebook export"):
        write_canvas(results, assignment, roster, tmp_path / "c.csv", "sis_login_id", "1")
    with pytest.raises(ExportError, match="must be a number"):
        write_canvas(results, assignment, CANVAS_ROSTER, tmp_path / "c.csv", "sis_login_id", "HW1")


def test_canvas_reads_semicolon_rosters_and_skips_non_student_rows(tmp_path):
    roster = tmp_path / "semi.csv"
    roster.write_bytes(BOM + b"Student;ID;SIS Login ID;Section;HW (1)\n    Points Possible;;;;10,00\n"
                             b"\"Doe; Jane\";4242;jdoe;S1;8,5\n")
    students = read_canvas_roster(roster, "sis_login_id")
    assert [(s.name, s.canvas_id, s.sis_login_id, s.sis_user_id) for s in students] == [
        ("Doe; Jane", "4242", "jdoe", "")
    ]
    assert [s.name for s in read_canvas_roster(CANVAS_ROSTER, "id")] == [
        "Doe, Jane", "রহমান, আয়েশা", "O'Neil, Séan", 'Smith, Bob "Bobby"', "Student, Test"
    ]


def test_canvas_duplicate_roster_keys_are_an_error(tmp_path, assignment, results):
    roster = tmp_path / "dup.csv"
    roster.write_text("Student,ID,SIS Login ID,Section\nA,1,jdoe,S\nB,2,JDoe,S\n", encoding="utf-8")
    with pytest.raises(ExportError, match="share SIS Login ID"):
        write_canvas(results, assignment, roster, tmp_path / "c.csv", "sis_login_id", "1")


def test_canvas_meta_states_assignment_time_and_kit_version(tmp_path, assignment, results):
    out = tmp_path / "canvas.csv"
    write_canvas(results, assignment, CANVAS_ROSTER, out, "sis_login_id", "12345", bom=False)
    assert not out.read_bytes().startswith(BOM)
    meta = json.loads(meta_path(out).read_text(encoding="utf-8"))
    assert meta["assignment"] == "nn_module" and meta["title"] == assignment.title
    assert meta["kit_version"] == autograder.__version__
    assert datetime.fromisoformat(meta["exported_at"]).tzinfo is not None
    assert meta["sha256"] == hashlib.sha256(out.read_bytes()).hexdigest()
    assert meta["column"] == "Building models with nn.Module (12345)" and meta["match_by"] == "SIS Login ID"


def test_results_of_another_assignment_or_twice_the_same_student_are_refused(tmp_path, assignment):
    other = SubmissionResult("jdoe", "other", ())
    with pytest.raises(ExportError, match="assignment 'other'"):
        write_canvas([other], assignment, CANVAS_ROSTER, tmp_path / "c.csv", "sis_login_id", "1")
    twice = [make_result(assignment, "jdoe"), make_result(assignment, "jdoe")]
    with pytest.raises(ExportError, match="two results"):
        write_moodle(twice, assignment, tmp_path / "m.csv", "username")


def test_reexport_after_a_regrade_shows_the_new_score(tmp_path, assignment):
    book = Gradebook(tmp_path / "gradebook.sqlite")
    try:
        book.record(make_result(assignment, "jdoe", {"delivery": 10}))
        write_canvas(
            book.current("nn_module"), assignment, CANVAS_ROSTER, tmp_path / "c.csv", "sis_login_id", "12345"
        )
        write_moodle(book.current("nn_module"), assignment, tmp_path / "m.csv", "username")
        assert read_rows(tmp_path / "c.csv")[2][5] == "90.00"
        assert read_rows(tmp_path / "m.csv")[1][1] == "90.00"
        book.record(make_result(assignment, "jdoe"))  # the regrade
        write_canvas(
            book.current("nn_module"), assignment, CANVAS_ROSTER, tmp_path / "c.csv", "sis_login_id", "12345"
        )
        write_moodle(book.current("nn_module"), assignment, tmp_path / "m.csv", "username")
        assert read_rows(tmp_path / "c.csv")[2][5] == "100.00"
        assert read_rows(tmp_path / "m.csv")[1][1] == "100.00"
        write_junit(book.current("nn_module")[0], tmp_path / "jdoe.xml")
        assert ET.parse(tmp_path / "jdoe.xml").getroot().get("failures") == "0"
    finally:
        book.close()


# -- Moodle ------------------------------------------------------------------------------------
def test_moodle_without_roster_uses_student_ids_and_puts_feedback_in_the_same_file(
    tmp_path, assignment, results
):
    out = tmp_path / "moodle.csv"
    report = write_moodle(results, assignment, out, id_column="username")
    rows = read_rows(out)
    assert rows[0] == [
        "Username",
        "Building models with nn.Module (Real)",
        "Building models with nn.Module (Feedback)",
    ]
    assert [r[:2] for r in rows[1:]] == [["ayesha", "100.00"], ["bsmith", "57.50"], ["ghost", "97.75"],
                                         ["jdoe", "85.00"]]
    feedback = dict((r[0], r[2]) for r in rows[1:])["jdoe"]
    assert feedback.startswith("Building models with nn.Module: 85/100.")
    assert "delivery 10/20" in feedback and "dropout 10/15" in feedback and "tinynet 15/15" in feedback
    assert autograder.__version__ in feedback
    assert report.unmatched_submissions == () and report.warnings == []
    meta = json.loads(meta_path(out).read_text(encoding="utf-8"))
    title = "Building models with nn.Module"
    assert meta["map"] == {
        "Username": "username",
        f"{title} (Real)": f"the grade item {title!r} (or new)",
        f"{title} (Feedback)": f"feedback for {title!r}",
    }
    assert meta["kit_version"] == autograder.__version__ and meta["assignment"] == "nn_module"


def test_moodle_with_roster_maps_ids_and_warns_about_the_rest(tmp_path, assignment, results):
    out = tmp_path / "moodle.csv"
    report = write_moodle(results, assignment, out, id_column="email", roster=MOODLE_ROSTER)
    rows = read_rows(out)
    assert rows[0][0] == "Email address"
    assert [r[0] for r in rows[1:]] == [
        "ayesha.rahman@example.edu",
        "bob.smith@example.edu",
        "jane.doe@example.edu",
    ]
    assert report.unmatched_submissions == ("ghost",)
    assert report.missing_submissions == ("sean (sean.oneil@example.edu)",)
    report = write_moodle(results, assignment, out, id_column="idnumber", roster=MOODLE_ROSTER)
    assert [r[0] for r in read_rows(out)[1:]] == ["S0002", "S0004", "S0001"]
    assert report.missing_submissions == ("sean (no idnumber)",)


def test_moodle_email_mode_without_roster_leaves_out_ids_that_are_not_emails(tmp_path, assignment):
    results = [make_result(assignment, "ada@example.edu"), make_result(assignment, "bob")]
    report = write_moodle(results, assignment, tmp_path / "m.csv")  # default: email
    assert [r[0] for r in read_rows(tmp_path / "m.csv")[1:]] == ["ada@example.edu"]
    assert report.unmatched_submissions == ("bob",)  # one unknown user would abort Moodle's whole import


def test_moodle_bangla_names_survive_and_roster_errors_name_the_column(tmp_path, assignment):
    out = tmp_path / "m.csv"
    write_moodle([make_result(assignment, "আয়েশা, রহমান")], assignment, out, "username")
    assert out.read_bytes().startswith(BOM)
    assert '"আয়েশা, রহমান",100.00' in out.read_bytes().decode("utf-8-sig")
    bad = tmp_path / "r.csv"
    bad.write_text("student,email\njdoe,j@x\n", encoding="utf-8")
    with pytest.raises(ExportError) as info:
        write_moodle([], assignment, out, "idnumber", bad)
    assert str(bad) in str(info.value) and "'idnumber'" in str(info.value)


def test_moodle_two_students_on_one_identifier_is_an_error(tmp_path, assignment):
    roster = tmp_path / "r.csv"
    roster.write_text("student,email\na,x@e.edu\nb,X@e.edu\n", encoding="utf-8")
    with pytest.raises(ExportError, match="same Moodle email"):
        write_moodle([make_result(assignment, "a"), make_result(assignment, "b")], assignment,
                     tmp_path / "m.csv", "email", roster)


# -- JUnit -------------------------------------------------------------------------------------
def test_junit_structure_counts_and_points(tmp_path, assignment):
    result = make_result(assignment, "jdoe", {"delivery": 10, "dropout": 2.5})
    path = write_junit(result, tmp_path / "jdoe.xml")
    assert path.read_bytes().startswith(b"<?xml version='1.0' encoding='utf-8'?>")
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("14", "2", "0")
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [f"nn_module.{t.id}" for t in assignment.tasks]
    delivery = suites[1]
    assert (delivery.get("tests"), delivery.get("failures")) == ("2", "1")
    datetime.fromisoformat(delivery.get("timestamp"))
    props = {p.get("name"): p.get("value") for p in delivery.find("properties")}
    first = {p.get("name"): p.get("value") for p in suites[0].find("properties")}
    assert first["kit_version"] == autograder.__version__ and first["assignment"] == "nn_module"
    assert (props["delivery.score"], props["delivery.max_score"]) == ("10", "20")
    assert first["total_score"] == "87.5"
    assert "assignment" not in props  # what the submission shares is said once, in the first suite
    cases = delivery.findall("testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("nn_module.delivery", "delivery works"), ("nn_module.delivery", "delivery edge cases")]
    assert cases[0].find("failure") is None
    failure = cases[1].find("failure")
    assert failure.get("message") == "expected 3, got 4" and failure.text == "expected 3, got 4"
    assert failure.get("type") == "delivery.wrong"
    assert cases[1].find("properties") is None  # junit-10.xsd: properties only on the testsuite
    assert (props["delivery.hidden.points"], props["delivery.hidden.max_points"]) == ("0", "10")
    assert props["delivery.hidden.visibility"] == "hidden"
    assert sum(len(s.findall("testcase")) for s in suites) == 14


def test_junit_survives_control_characters_and_non_ascii(tmp_path, assignment):
    nasty = '\x1b[31mboom\x00\x07 দুঃখিত <&> "quoted"\n  line two'
    result = make_result(assignment, "রহিম", {"tinynet": 7.5}, feedback=nasty)
    root = ET.parse(write_junit(result, tmp_path / "x.xml")).getroot()
    failure = root.find("testsuite/testcase/failure")
    assert failure is not None and "boom" in failure.text and "দুঃখিত <&>" in failure.text
    assert "\x00" not in failure.text and failure.get("message").startswith("?[31mboom")


def test_junit_all_one_file_per_student(tmp_path, assignment, results):
    written = write_junit_all(results, tmp_path / "junit")
    assert sorted(p.name for p in written) == ["ayesha.xml", "bsmith.xml", "ghost.xml", "jdoe.xml"]
    for path in written:
        assert ET.parse(path).getroot().get("tests") == "14"
    # Two ids that one escaping would merge get a file each, neither overwriting the other.
    pair = write_junit_all([make_result(assignment, "a b"), make_result(assignment, "a_b")], tmp_path / "j2")
    assert len({p.name for p in pair}) == 2 and "a_b.xml" in {p.name for p in pair}
    assert [ET.parse(p).getroot().get("name") for p in pair] == ["nn_module: a b", "nn_module: a_b"]


# -- CLI ---------------------------------------------------------------------------------------
@pytest.fixture
def graded(tmp_path, assignment, results) -> Path:
    book = Gradebook(tmp_path / "graded" / "gradebook.sqlite")
    for result in results:
        book.record(result)
    book.close()
    return tmp_path / "graded"


def test_cli_export_canvas_warns_on_stderr(tmp_path, graded):
    out = tmp_path / "canvas.csv"
    run = CliRunner().invoke(export, ["canvas", "--gradebook", str(graded), "--roster", str(CANVAS_ROSTER),
                                      "--canvas-id", "12345", "--out", str(out)])
    assert run.exit_code == 4, run.output  # written, but students are left out: said, and not exit 0
    assert "leaves 2 student(s) out" in run.stderr
    assert "wrote 3 student rows" in run.stdout
    assert "warning: 1 graded submission(s) match no roster student by SIS Login ID" in run.stderr
    assert "ghost" in run.stderr and "O'Neil, Séan (sean)" in run.stderr
    assert read_rows(out)[1] == ["    Points Possible", "", "", "", "", "100.00"]


def test_cli_export_errors_are_one_line_and_exit_2(tmp_path, graded):
    run = CliRunner().invoke(export, ["canvas", "--gradebook", str(graded), "--roster", str(CANVAS_ROSTER),
                                      "--canvas-id", "1", "--match-by", "sis_user_id", "--out",
                                      str(tmp_path / "c.csv"), "--assignment", "nope"])
    assert run.exit_code == 2 and "unknown assignment 'nope'" in run.stderr
    run = CliRunner().invoke(export, ["moodle", "--gradebook", str(tmp_path / "missing"), "--out",
                                      str(tmp_path / "m.csv")])
    assert run.exit_code == 2 and "no gradebook at" in run.stderr
    assert not (tmp_path / "missing").exists()


def test_cli_export_moodle_and_junit(tmp_path, graded):
    out = tmp_path / "moodle.csv"
    book = str(graded / "gradebook.sqlite")
    args = [
        "moodle",
        "--gradebook",
        book,
        "--id-column",
        "email",
        "--roster",
        str(MOODLE_ROSTER),
        "--out",
        str(out),
    ]
    written = out.read_bytes() if out.exists() else b""
    run = CliRunner().invoke(export, args)
    assert run.exit_code == 4, run.output  # written, but ghost (no email) and sean are not in it, as Canvas
    assert "wrote 3 student rows" in run.stdout and "'Email address' -> useremail" in run.stdout
    assert "ghost" in run.stderr and "sean (sean.oneil@example.edu)" in run.stderr
    said = " ".join(run.stderr.split())  # as rich wraps it
    assert f"{out} was written but leaves 2 student(s) out" in said
    assert f"fill the email of the unmatched ones in roster {MOODLE_ROSTER}" in said
    assert out.read_bytes() != written and len(read_rows(out)) == 4  # the file stays, whole
    run = CliRunner().invoke(export, [*args, "--allow-missing"])
    assert run.exit_code == 0, run.output
    run = CliRunner().invoke(export, ["junit", "--gradebook", str(graded), "--out", str(tmp_path / "junit")])
    assert run.exit_code == 0, run.output
    assert len(list((tmp_path / "junit").glob("*.xml"))) == 4


def test_a_submission_that_could_not_be_graded_says_why(tmp_path, assignment):
    if "problem" not in {f.name for f in dataclasses.fields(SubmissionResult)}:
        pytest.skip("SubmissionResult.problem not in this engine version")
    empty = make_result(assignment, "zed", {t.id: t.points for t in assignment.tasks})
    result = dataclasses.replace(empty, problem="`zed.zip` is not a readable zip file")
    write_moodle([result], assignment, tmp_path / "m.csv", "username")
    assert "Not graded: `zed.zip` is not a readable zip file." in read_rows(tmp_path / "m.csv")[1][2]
    root = ET.parse(write_junit(result, tmp_path / "zed.xml")).getroot()
    assert "not a readable zip file" in root.find("testsuite/system-out").text
