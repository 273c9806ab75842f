"""The ledger: a grade is keyed by what it was computed from, claimed while graded, and signed.

Proves: a rerun grades exactly the changed submissions and the stale ones (graders changed) and
names them; nothing starts when nothing is due; two concurrent runs grade each student once; a
run killed with SIGKILL and run again leaves every student exactly once, as an uninterrupted run
would; `verify` catches a score edited in results.json, grades.csv or the gradebook, and exports
refuse such an OUT unless told otherwise.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT, SOLUTIONS, STUBS, sandbox_works

from autograder import batch
from autograder.batch import grade_batch
from autograder.cli import main
from autograder.config import Kit, load_kit
from autograder.grading.options import GradeOptions
from autograder.ledger.book import Gradebook

AUTOGRADER = str(Path(sys.executable).with_name("autograder"))


def _student(klass: Path, name: str, source: Path) -> Path:
    dest = klass / name
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("graders", "checks", "__pycache__", "*.md"))
    return dest


def _class(root: Path, names: dict[str, Path]) -> Path:
    klass = root / "class"
    klass.mkdir(exist_ok=True)
    for name, source in names.items():
        _student(klass, name, source)
    return klass


def _kit_copy(root: Path) -> Kit:
    kit = root / "kit"
    shutil.copytree(ROOT / "solutions", kit / "solutions", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "grading.toml", kit / "grading.toml")
    return load_kit(kit)


def _rows(out: Path) -> list[tuple[str, int, float]]:
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        try:
            return list(db.execute("SELECT student, current, score FROM gradings ORDER BY id"))
        except sqlite3.OperationalError as exc:  # the file is there, its tables not yet
            if "no such table" not in str(exc):
                raise
            return []


def _stable(out: Path) -> dict[str, dict]:
    found = {}
    for path in sorted(out.glob("*/results.json")):
        data = json.loads(path.read_text())
        data.pop("execution_time")
        found[path.parent.name] = data
    return found


def test_a_rerun_grades_what_changed_and_what_went_stale(tmp_path, monkeypatch):
    kit = _kit_copy(tmp_path)
    options = GradeOptions(sandbox=sandbox_works(kit))
    klass = _class(tmp_path, {"ada": SOLUTIONS, "bob": STUBS, "carol": SOLUTIONS})
    out = tmp_path / "out"
    first = grade_batch(kit, klass, out, options=options, jobs=1)
    assert (first.new, first.changed, first.stale) == (("ada", "bob", "carol"), (), ())

    class NoPool:
        def __init__(self, *args: object, **kwargs: object) -> None:
            raise AssertionError("a pool was started with nothing to grade")

    with monkeypatch.context() as patch:
        patch.setattr(batch, "GradingPool", NoPool)
        again = grade_batch(kit, klass, out, options=options, jobs=1)
    assert (again.graded, again.skipped) == (0, 3)

    _student(klass, "bob", SOLUTIONS)  # bob hands in a complete solution
    changed = grade_batch(kit, klass, out, options=options, jobs=1)
    assert (changed.graded, changed.changed, changed.new, changed.stale) == (1, ("bob",), (), ())
    assert "1 changed" in changed.describe()
    book = Gradebook(out / "gradebook.sqlite")
    try:
        scores = {r.student: r.score for r in book.current("nn_module")}
        assert scores == {"ada": 100, "bob": 100, "carol": 100}
        assert [s for _, s in book.history("nn_module", "bob")] == [0, 100]  # history kept
    finally:
        book.close()

    params = kit.assignment("nn_module").graders / "params.py"
    params.write_text(params.read_text() + "\n# the instructor fixed a reference number\n")
    stale = grade_batch(kit, klass, out, options=options, jobs=1)
    assert stale.stale == ("ada", "bob", "carol") and stale.graded == 3
    assert stale.stale_files == ("solutions/nn_module/graders/params.py",)  # this file alone changed
    assert ("3 stale because the graders changed in solutions/nn_module/graders/params.py (ada, bob, carol)"
            in stale.describe())
    shown = json.loads((out / "ada" / "results.json").read_text())["extra_data"]["provenance"]
    assert "grader_files" not in shown and shown["grader_digest"]  # the per-file map stays in the gradebook
    assert len(_rows(out)) == 3 + 1 + 3


def _cli_grade(klass: Path, out: Path, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([AUTOGRADER, "grade", str(klass), "--out", str(out), "--quiet", "--jobs", "1",
                             "--kit", str(ROOT), *extra], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=env, start_new_session=True)


def _flags(kit: Kit) -> list[str]:
    return [] if sandbox_works(kit) else ["--no-sandbox"]


def test_two_runs_at_once_grade_each_student_once(kit, tmp_path):
    klass = _class(tmp_path, {f"s{i}": SOLUTIONS if i % 2 else STUBS for i in range(4)})
    out = tmp_path / "out"
    first, second = _cli_grade(klass, out, *_flags(kit)), _cli_grade(klass, out, *_flags(kit))
    outputs = [p.communicate(timeout=600)[0] for p in (first, second)]
    assert [p.returncode for p in (first, second)] == [0, 0], "\n----\n".join(o[-3000:] for o in outputs)
    graded = [int(o.split("graded ")[1].split()[0]) for o in outputs]
    assert sum(graded) == 4, outputs
    rows = _rows(out)
    assert sorted(student for student, _, _ in rows) == ["s0", "s1", "s2", "s3"]  # no one twice


def test_a_killed_run_then_a_rerun_leaves_everyone_once_as_if_uninterrupted(kit, tmp_path):
    names = {f"s{i}": SOLUTIONS if i % 3 else STUBS for i in range(5)}
    klass = _class(tmp_path, names)
    whole = tmp_path / "whole"
    grade_batch(kit, klass, whole, options=GradeOptions(sandbox=sandbox_works(kit)), jobs=1)

    out = tmp_path / "out"
    run = _cli_grade(klass, out, *_flags(kit))
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not ((out / "gradebook.sqlite").exists() and _rows(out)):
        time.sleep(0.2)
    os.killpg(run.pid, signal.SIGKILL)  # the run and everything it started, mid-batch
    run.communicate(timeout=60)
    assert 0 < len(_rows(out)) < 5
    rerun = _cli_grade(klass, out, *_flags(kit))
    text = rerun.communicate(timeout=600)[0]
    assert rerun.returncode == 0, text
    rows = _rows(out)
    assert sorted(s for s, _, _ in rows) == sorted(names) and all(current for _, current, _ in rows)
    assert _stable(out) == _stable(whole)


@pytest.fixture(scope="module")
def graded(kit, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("signed")
    klass = _class(root, {"ada": SOLUTIONS, "bob": STUBS})
    out = root / "out"
    grade_batch(kit, klass, out, options=GradeOptions(sandbox=sandbox_works(kit)), jobs=1)
    return out


def _verify(out: Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["verify", str(out)])
    return result.exit_code, result.output


def test_verify_catches_a_score_edited_in_each_place(graded, tmp_path):
    code, text = _verify(graded)
    assert code == 0 and "0 do not verify" in text, text

    edited = tmp_path / "results"
    shutil.copytree(graded, edited)
    path = edited / "bob" / "results.json"
    data = json.loads(path.read_text())
    data["score"], data["tests"][0]["score"] = 2, 2
    path.write_text(json.dumps(data))
    code, text = _verify(edited)
    assert code == 1 and "bob/results.json: bob" in text and "2 do not verify" in text, text
    assert "bob/results.json: edited after the kit wrote it" in text, text  # and OUT's list names the file

    edited = tmp_path / "csv"
    shutil.copytree(graded, edited)
    rows = list(csv.reader((edited / "grades.csv").open()))
    total = rows[0].index("total")
    for row in rows[1:]:
        if row[0] == "bob":
            row[total] = "95"
    with (edited / "grades.csv").open("w", newline="") as handle:
        csv.writer(handle).writerows(rows)
    code, text = _verify(edited)
    assert code == 1 and "grades.csv line" in text and ": bob:" in text and "2 do not verify" in text, text
    assert "grades.csv: edited after the kit wrote it" in text, text

    edited = tmp_path / "book"
    shutil.copytree(graded, edited)
    with sqlite3.connect(edited / "gradebook.sqlite") as db:
        db.execute("UPDATE gradings SET score = 90 WHERE student = 'bob'")
    code, text = _verify(edited)
    assert code == 1 and "gradebook.sqlite row" in text and "score column" in text, text

    refused = CliRunner().invoke(main, ["export", "moodle", "--gradebook", str(edited), "--id-column",
                                        "username", "--out", str(tmp_path / "m.csv"), "--kit", str(ROOT)])
    assert refused.exit_code != 0 and "--allow-unverified" in refused.output, refused.output
    assert not (tmp_path / "m.csv").exists()
    allowed = CliRunner().invoke(main, ["export", "moodle", "--gradebook", str(edited), "--id-column",
                                        "username", "--out", str(tmp_path / "m.csv"), "--kit", str(ROOT),
                                        "--allow-unverified"])
    assert allowed.exit_code == 0 and (tmp_path / "m.csv").exists(), allowed.output


def test_provenance_is_recorded_with_every_grade(graded):
    data = json.loads((graded / "ada" / "results.json").read_text())
    prov = data["extra_data"]["provenance"]
    assert len(prov["submission_sha256"]) == 64 and len(prov["grader_digest"]) == 64
    assert set(prov["versions"]) == {"autograder", "torch", "numpy", "hypothesis"}
    assert prov["signature"].startswith("hmac-sha256:") and prov["seeds"]
    with sqlite3.connect(graded / "gradebook.sqlite") as db:
        (sha, digest, signature), = db.execute(
            "SELECT submission_sha256, grader_digest, signature FROM gradings WHERE student = 'ada'")
    assert (sha, digest, signature) == (prov["submission_sha256"], prov["grader_digest"], prov["signature"])
