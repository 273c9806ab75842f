"""A student id spelled in NFD (as a macOS zip gives it) is the same student as its NFC roster row."""

from __future__ import annotations

import csv
import unicodedata
from pathlib import Path

import pytest
from conftest import make_result

from autograder.config import Assignment, TaskConfig
from autograder.exam.variants import VariantSpace
from autograder.platforms.canvas import write_canvas
from autograder.platforms.moodle import write_moodle
from autograder.platforms.rosters import read_lti_roster, roster_from_members
from autograder.submissions.students import student_key

# "রাফি" and "অদিতি" are the same in NFC and NFD (no Bangla letter in them decomposes); the vowel
# signs ো and ৌ do (ে + া, ে + ৗ), so these names arrive from a macOS zip with other code points.
NAMES = ("শোভন", "সৌমিত্র")
ASSIGNMENT = Assignment(id="hw1", title="হোমওয়ার্ক ১", root=Path("."), given=(),
                        tasks=(TaskConfig("tensors", "tensors.py", 10),))


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


# (the roster's spelling, the submission's spelling): the macOS case and its mirror
SPELLINGS = [pytest.param(nfc, nfd, id="nfc-roster-nfd-submission"),
             pytest.param(nfd, nfc, id="nfd-roster-nfc-submission")]


def write_rows(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    return path


def test_the_names_differ_between_nfc_and_nfd():
    for name in NAMES:
        assert nfc(name) != nfd(name)
        assert student_key(nfc(name)) == student_key(nfd(name))


@pytest.mark.parametrize(("roster_form", "submission_form"), SPELLINGS)
def test_canvas_matches_the_roster_row(tmp_path, roster_form, submission_form):
    roster = write_rows(tmp_path / "canvas.csv", [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Lab (7)"],
        ["    Points Possible", "", "", "", "", f"{ASSIGNMENT.max_score:.2f}"],
        *[[f"Student {i}", str(100 + i), f"S{i}", roster_form(n), "A", ""] for i, n in enumerate(NAMES)],
    ])
    results = [make_result(ASSIGNMENT, submission_form(n)) for n in NAMES]
    report = write_canvas(results, ASSIGNMENT, roster, tmp_path / "out.csv", "sis_login_id", "7")
    assert report.unmatched_submissions == () and report.missing_submissions == ()
    with (tmp_path / "out.csv").open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.reader(handle))[2:]
    assert [(r[3], r[5]) for r in rows] == [(roster_form(n), "10.00") for n in NAMES]


@pytest.mark.parametrize(("roster_form", "submission_form"), SPELLINGS)
def test_moodle_matches_the_roster_row(tmp_path, roster_form, submission_form):
    roster = write_rows(tmp_path / "moodle.csv", [
        ["student", "email", "username", "idnumber"],
        *[[roster_form(n), f"s{i}@example.edu", f"s{i}", ""] for i, n in enumerate(NAMES)],
    ])
    results = [make_result(ASSIGNMENT, submission_form(n)) for n in NAMES]
    report = write_moodle(results, ASSIGNMENT, tmp_path / "out.csv", "email", roster)
    assert report.unmatched_submissions == () and report.missing_submissions == ()
    with (tmp_path / "out.csv").open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.reader(handle))[1:]
    assert sorted(r[0] for r in rows) == ["s0@example.edu", "s1@example.edu"]


@pytest.mark.parametrize(("roster_form", "submission_form"), SPELLINGS)
def test_lti_roster_and_members_match(tmp_path, roster_form, submission_form):
    roster = write_rows(tmp_path / "lti.csv", [
        ["student", "lti_user_id"], *[[roster_form(n), f"u-{i}"] for i, n in enumerate(NAMES)],
    ])
    members = [{"user_id": f"u-{i}", "lis_person_sourcedid": roster_form(n), "status": "Active"}
               for i, n in enumerate(NAMES)]
    for user_ids in (read_lti_roster(roster), roster_from_members(members, "lis_person_sourcedid")):
        # the publish looks a result's student up by its student_key
        assert [user_ids.get(student_key(submission_form(n))) for n in NAMES] == ["u-0", "u-1"]


def test_the_exam_variant_is_the_same_for_both_spellings():
    space = VariantSpace("exam1", (("hidden", tuple(range(16))), ("lr", (0.1, 0.01, 0.001)),
                                   ("layers", (1, 2, 3, 4, 5))))
    secret = b"course secret"
    for name in NAMES:
        assert space.derive(secret, nfd(name)) == space.derive(secret, nfc(name))
