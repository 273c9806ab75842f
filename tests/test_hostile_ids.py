"""Hostile and unlucky student ids, graded end to end: one student, one grade, one folder.

A class with the names real classes and curious students produce, graded with `autograder grade
--junit` (sandboxed where bubblewrap works). Proves: `dup.zip` and `dup/`, `Rahim.zip` and
`rahim.zip`, and the NFC and NFD forms of one Bangla name are refused together, each file named
in the summary and the class report, and nothing is graded or written for those ids; `rahim
khan` and `rahim_khan`, `রহিম` and `রহীম` each get a folder, results and feedback of their own;
a 255-byte name is graded, its JUnit file written and recorded once over reruns; `..zip` and a
stray file are named as skipped; grades.csv shows each student's folder and file; the OUT
verifies; the Moodle export takes the whole class.

Issue #37: students named like OUT's own files (`gradebook.sqlite`, `grades.csv`, `report.html`,
`similarity`, `similarity.csv`, `junit`) grade into folders of their own and the class files stay
whole; every file deleted, edited or added by hand in OUT fails `verify` by name (and the export);
a name with a bidi override is shown as its code in grades.csv and the pages;
similarity_pairs.csv ranks the pairs of students.
"""

from __future__ import annotations

import csv
import json
import shutil
import sqlite3
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT, SOLUTIONS, STUBS, sandbox_works

from autograder.cli import main
from autograder.submissions.students import folder_name, student_id

NFC = unicodedata.normalize("NFC", "মোহাম্মদ")
NFD = unicodedata.normalize("NFD", "মোহাম্মদ")
LONG = "ক" * 83  # 249 bytes; with `.zip`, 253 of a file name's 255
RESERVED = ("gradebook.sqlite", "grades.csv", "report.html", "similarity", "similarity.csv", "junit")
BIDI = "eve\u202eexe.txt"  # shows as `evetxt.exe` where the override works
SKIP = shutil.ignore_patterns("graders", "checks", "__pycache__", "*.md")


def _copy(source: Path, dest: Path) -> Path:
    shutil.copytree(source, dest, ignore=SKIP)
    return dest


def _zipped(source: Path, dest: Path) -> Path:
    folder = _copy(source, dest.parent.parent / "unzipped")
    made = Path(shutil.make_archive(str(folder), "zip", folder))
    shutil.rmtree(folder)
    return made.rename(dest)


@pytest.fixture(scope="module")
def graded(kit, tmp_path_factory) -> tuple[Path, Path, str]:
    root = tmp_path_factory.mktemp("ids")
    klass = root / "class"
    klass.mkdir()
    _zipped(STUBS, klass / "dup.zip")
    _copy(SOLUTIONS, klass / "dup")
    _zipped(STUBS, klass / "Rahim.zip")
    _zipped(SOLUTIONS, klass / "rahim.zip")
    _copy(SOLUTIONS, klass / NFC)
    _zipped(STUBS, klass / f"{NFD}.zip")
    _copy(SOLUTIONS, klass / "rahim khan")
    _copy(STUBS, klass / "rahim_khan")
    _copy(SOLUTIONS, klass / "রহিম")
    _zipped(STUBS, klass / "রহীম.zip")
    _zipped(SOLUTIONS, klass / f"{LONG}.zip")
    _zipped(SOLUTIONS, klass / "..zip")
    (klass / "notes.txt").write_text("the TA's notes")
    for name in RESERVED:
        _zipped(STUBS, klass / f"{name}.zip")
    _zipped(STUBS, klass / f"{BIDI}.zip")
    out = root / "out"
    flags = [] if sandbox_works(kit) else ["--no-sandbox"]
    run = CliRunner().invoke(main, ["grade", str(klass), "--out", str(out), "--junit", "--jobs", "1",
                                    "--kit", str(ROOT), *flags])
    assert run.exit_code == 0, run.output
    return klass, out, run.output


def _results(out: Path, student: str) -> dict:
    data: dict = json.loads((out / folder_name(student) / "results.json").read_text(encoding="utf-8"))
    return data


def test_two_submissions_of_one_id_are_refused_together_and_named(graded):
    _, out, output = graded
    assert "graded 12 submissions (12 new;" in output and "8 entries not graded" in output
    for name in ("dup.zip", "dup", "Rahim.zip", "rahim.zip", NFC, f"{NFD}.zip"):
        assert any(line.startswith(f"not graded: {name}: ") and "none was graded" in line
                   for line in output.splitlines()), (name, output)
    assert "`dup` and `dup.zip` are all submissions of student `dup`" in output
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        students = {s for (s,) in db.execute("SELECT student FROM gradings")}
    assert students == {"rahim khan", "rahim_khan", "রহিম", "রহীম", student_id(LONG), *RESERVED, BIDI}
    for refused in ("dup", "rahim", NFC):
        assert not (out / folder_name(refused)).exists()
    report = (out / "report.html").read_text(encoding="utf-8")
    for name in ("dup.zip", "Rahim.zip", "notes.txt", "..zip", f"{NFD}.zip"):
        assert name in report, name


def test_ids_one_escaping_would_merge_keep_their_own_files(graded):
    _, out, _ = graded
    for solved, stub in (("rahim khan", "rahim_khan"), ("রহিম", "রহীম")):
        assert folder_name(solved) != folder_name(stub)
        full, partial = _results(out, solved), _results(out, stub)
        assert full["extra_data"]["student"] == solved and full["score"] == 100
        assert partial["extra_data"]["student"] == stub and partial["score"] < 100
        assert solved in (out / folder_name(solved) / "feedback.md").read_text(encoding="utf-8")
    rows = {r["student"]: r for r in csv.DictReader((out / "grades.csv").open(encoding="utf-8"))}
    assert rows["রহীম"]["folder"] == folder_name("রহীম") and rows["রহীম"]["source"] == "রহীম.zip"
    assert rows["rahim_khan"]["folder"] == "rahim_khan" and rows["rahim khan"]["total"] == "100"


def test_a_255_byte_name_is_graded_with_its_junit_file_and_recorded_once(graded, kit):
    klass, out, _ = graded
    student = student_id(LONG)
    assert _results(out, student)["score"] == 100
    assert (out / "junit" / f"{folder_name(student)}.xml").is_file()
    flags = [] if sandbox_works(kit) else ["--no-sandbox"]
    again = CliRunner().invoke(main, ["grade", str(klass), "--out", str(out), "--junit", "--kit", str(ROOT),
                                      *flags])
    assert again.exit_code == 0 and "graded 0 submissions" in again.output, again.output
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM gradings WHERE student = ?", (student,)).fetchone() == (1,)


def test_the_out_verifies_and_the_moodle_export_takes_the_whole_class(graded, tmp_path):
    _, out, _ = graded
    verified = CliRunner().invoke(main, ["verify", str(out)])
    assert verified.exit_code == 0 and "0 do not verify" in verified.output, verified.output
    moodle = CliRunner().invoke(main, ["export", "moodle", "--gradebook", str(out), "--id-column", "username",
                                       "--out", str(tmp_path / "m.csv"), "--kit", str(ROOT)])
    assert moodle.exit_code == 0 and "wrote 12 student rows" in moodle.output, moodle.output


def test_students_named_like_outs_files_get_folders_of_their_own(graded):
    _, out, _ = graded
    for name in RESERVED:
        assert folder_name(name) != name and _results(out, name)["extra_data"]["student"] == name
        assert (out / "junit" / f"{folder_name(name)}.xml").is_file()
    assert (out / "gradebook.sqlite").is_file() and (out / "grades.csv").is_file()
    assert (out / "report.html").is_file() and (out / "similarity.csv").is_file()
    assert {p.suffix for p in (out / "junit").iterdir()} == {".xml"}
    assert not (out / "similarity" / "feedback.html").exists()
    rows = list(csv.DictReader((out / "grades.csv").open(encoding="utf-8")))
    assert len(rows) == 12 and {r["folder"] for r in rows} >= {folder_name(n) for n in RESERVED}


def test_a_bidi_override_is_shown_as_its_code_wherever_the_name_is_written(graded):
    _, out, _ = graded
    shown = "eve<U+202E>exe.txt"
    grades = (out / "grades.csv").read_text(encoding="utf-8")
    assert shown in grades and "\u202e" not in grades
    for page in ("report.html", f"{folder_name(BIDI)}/feedback.html"):
        text = (out / page).read_text(encoding="utf-8")
        assert "\u202e" not in text and "eve&lt;U+202E&gt;exe.txt" in text, page
    assert "\u202e" not in (out / "junit" / f"{folder_name(BIDI)}.xml").read_text(encoding="utf-8")


def test_similarity_pairs_rank_the_pairs_of_students(graded):
    _, out, _ = graded
    rows = list(csv.DictReader((out / "similarity_pairs.csv").open(encoding="utf-8")))
    assert rows and list(rows[0]) == ["student_a", "student_b", "score", "evidence", "files"]
    scores = [float(r["score"]) for r in rows]
    assert scores == sorted(scores, reverse=True)
    pairs = {frozenset((r["student_a"], r["student_b"])) for r in rows}
    assert len(pairs) == len(rows)  # one row per pair
    assert frozenset(("rahim khan", "রহিম")) in pairs  # two copies of one solution


def _tamper_cases() -> dict[str, tuple[str, object]]:
    return {
        "results.json deleted": ("rahim_khan/results.json", None),
        "grades.csv deleted": ("grades.csv", None),
        "feedback.md edited": ("rahim_khan/feedback.md", "Score: 100 / 100\n"),
        "feedback.html edited": (f"{folder_name('রহীম')}/feedback.html", "<p>full marks</p>"),
        "a JUnit file edited": ("junit/rahim_khan.xml", "<testsuites/>"),
        "a file added": ("rahim_khan/extra.txt", "added by hand"),
        "report.html edited": ("report.html", "<html></html>"),
        "similarity_pairs.csv deleted": ("similarity_pairs.csv", None),
    }


@pytest.mark.parametrize("case", list(_tamper_cases()))
def test_a_file_deleted_edited_or_added_by_hand_fails_verify_by_name(graded, tmp_path, case):
    _, pristine, _ = graded
    out = shutil.copytree(pristine, tmp_path / "out")
    name, text = _tamper_cases()[case]
    if text is None:
        (out / name).unlink()
    else:
        (out / name).write_text(str(text), encoding="utf-8")
    verified = CliRunner().invoke(main, ["verify", str(out)])
    assert verified.exit_code == 1, verified.output
    assert any(line.startswith(f"{name}: ") for line in verified.output.splitlines()), verified.output
    if case == "a JUnit file edited":  # the exports refuse such an OUT
        moodle = CliRunner().invoke(main, ["export", "moodle", "--gradebook", str(out), "--id-column",
                                           "username", "--out", str(tmp_path / "m.csv"), "--kit", str(ROOT)])
        assert moodle.exit_code != 0 and name in moodle.output and not (tmp_path / "m.csv").exists()
