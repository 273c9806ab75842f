"""OUT's signed list of files, a full disk, and an OUT from before the list (no grading pool: results
are handed to the batch by a stand-in executor).

Proves: a batch writes OUT/out-files.json holding every file it wrote and verifies; the list edited
by hand, or signed with another key, fails verify by name; a full disk while writing leaves no draft
and no half-written file, `grade` says so in one line (exit 5, no traceback), and the rerun
completes with every student recorded once and OUT verifying; an OUT written before the list gets
one on its next `grade` and verifies; OUT's own names are never a student's folder.
"""

from __future__ import annotations

import errno
import json
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import STUBS, make_result

from autograder import atomic
from autograder.batch import Entry, grade_batch
from autograder.cli import main
from autograder.config import Assignment, Kit
from autograder.grading.results import SubmissionResult
from autograder.ledger.signing import load_key
from autograder.output import sealed
from autograder.output.verify import verify_out
from autograder.submissions.students import RESERVED_NAMES, folder_name, reserved


class HandedResults:
    """A stand-in executor: each student's hand-built result, no grading."""

    def grade(self, kit: Kit, target: Assignment, todo: Sequence[Entry], options: Any, plan: Any,
              notice: Any) -> Iterator[SubmissionResult]:
        for entry in todo:
            yield make_result(target, entry.student)


@pytest.fixture
def klass(tmp_path: Path) -> Path:
    folder = tmp_path / "class"
    for student in ("ada", "bob", "carol"):
        (folder / student).mkdir(parents=True)
        (folder / student / "tinynet.py").write_text((STUBS / "tinynet.py").read_text())
    return folder


def _grade(kit: Kit, klass: Path, out: Path) -> Any:
    return grade_batch(kit, klass, out, assignment="nn_module", executor=HandedResults())


def test_a_batch_lists_every_file_it_wrote_and_verifies(kit, klass, tmp_path):
    out = tmp_path / "out"
    _grade(kit, klass, out)
    listed, why = sealed.read_list(out, load_key())
    assert why == "" and listed is not None
    assert {"ada/results.json", "bob/feedback.md", "carol/feedback.html", "grades.csv", "report.html",
            "similarity.csv", "similarity_pairs.csv"} <= set(listed)
    assert set(listed) == sealed.files_on_disk(out)
    report = verify_out(out, load_key())
    assert report.ok and report.files == len(listed), report.lines()


def test_an_out_named_relative_to_the_working_folder_lists_every_file(kit, klass, tmp_path, monkeypatch):
    """`grade ... --out graded` (the README's command): the writers' paths are relative to the working
    folder, not to OUT, and each must still be listed."""
    monkeypatch.chdir(tmp_path)
    _grade(kit, klass, Path("graded"))
    listed, why = sealed.read_list(tmp_path / "graded", load_key())
    assert why == "" and listed is not None and "ada/results.json" in listed and "grades.csv" in listed
    assert set(listed) == sealed.files_on_disk(tmp_path / "graded")
    assert verify_out(Path("graded"), load_key()).ok


def test_the_list_edited_or_under_another_key_fails_verify(kit, klass, tmp_path):
    out = tmp_path / "out"
    _grade(kit, klass, out)
    data = json.loads((out / sealed.LIST_FILE).read_text())
    data["files"].pop("ada/results.json")  # a file hidden from the list
    (out / sealed.LIST_FILE).write_text(json.dumps(data))
    lines = verify_out(out, load_key()).lines()
    assert any(line.startswith("out-files.json: its signature does not hold") for line in lines), lines
    assert any("another" in line or "key id" in line
               for line in verify_out(out, b"k" * 40).lines())


def _full_disk_on(monkeypatch: pytest.MonkeyPatch, call: int) -> None:
    """The `call`-th file written through a draft fills the disk half way through."""
    calls = {"n": 0}
    real_open = open

    class HalfWritten:
        def __init__(self, path: Any, mode: str):
            self.handle = real_open(path, mode)

        def __enter__(self) -> HalfWritten:
            return self

        def __exit__(self, *exc: object) -> None:
            self.handle.close()

        def write(self, data: bytes) -> int:
            calls["n"] += 1
            if calls["n"] == call:
                self.handle.write(data[: len(data) // 2])
                raise OSError(errno.ENOSPC, "No space left on device")
            return int(self.handle.write(data))

    monkeypatch.setattr(atomic, "open", HalfWritten, raising=False)


@pytest.mark.parametrize("call", [2, 5, 11])  # a student's feedback, the next student's, the class files
def test_a_full_disk_leaves_nothing_half_written_and_the_rerun_completes(kit, klass, tmp_path, monkeypatch,
                                                                         call):
    out = tmp_path / "out"
    with monkeypatch.context() as patch:
        _full_disk_on(patch, call)
        with pytest.raises(OSError) as stopped:
            _grade(kit, klass, out)
    assert atomic.disk_full(stopped.value)
    assert not [p for p in out.rglob("*") if atomic.DRAFT.fullmatch(p.name)]  # no draft left
    for path in out.glob("*/results.json"):
        json.loads(path.read_text())  # each whole
    again = _grade(kit, klass, out)
    assert again.graded + again.skipped == 3
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM gradings WHERE current = 1").fetchone() == (3,)
    assert verify_out(out, load_key()).ok, verify_out(out, load_key()).lines()


def test_grade_says_a_full_disk_in_one_line(klass, tmp_path, monkeypatch):
    def full(*_args: Any, **_kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "out" / "grades.csv"))

    monkeypatch.setattr("autograder.batch.grade_batch", full)
    run = CliRunner().invoke(main, ["grade", str(klass), "--out", str(tmp_path / "out"), "--no-sandbox"])
    assert run.exit_code == 5 and "Traceback" not in run.output, run.output
    assert "the disk is full writing into" in run.output and "run the same command again" in run.output
    assert atomic.disk_full(sqlite3.OperationalError("database or disk is full"))
    assert not atomic.disk_full(OSError(errno.EACCES, "Permission denied"))


def test_an_out_from_before_the_list_gets_one_on_its_next_grade(kit, klass, tmp_path):
    out = tmp_path / "out"
    _grade(kit, klass, out)
    (out / sealed.LIST_FILE).unlink()
    assert any(line.startswith("out-files.json: missing") for line in verify_out(out, load_key()).lines())
    again = _grade(kit, klass, out)
    assert again.graded == 0
    assert verify_out(out, load_key()).ok, verify_out(out, load_key()).lines()


def test_outs_own_names_are_never_a_students_folder():
    for name in (*RESERVED_NAMES, "gradebook.sqlite-wal", "grades.csv.partial", "notes.html", "x.json"):
        assert reserved(name) and folder_name(name) != name and "~" in folder_name(name)
    for plain in ("ada", "rahim.khan", "a@b.com", "similarity2"):
        assert folder_name(plain) == plain  # every other plain id keeps its folder


def test_what_adjust_similarity_and_an_export_into_out_write_is_listed_and_verifies(kit, klass, tmp_path):
    out = tmp_path / "out"
    _grade(kit, klass, out)
    runner = CliRunner()
    steps = [["export", "junit", "--gradebook", str(out), "--out", str(out / "junit"),
              "--kit", str(kit.root)],
             ["adjust", str(out), "bob", "--points", "2", "--reason", "kind", "--kit", str(kit.root)],
             ["similarity", str(klass), "--out", str(out), "--floor", "0", "--kit", str(kit.root)]]
    for step in steps:
        done = runner.invoke(main, step)
        assert done.exit_code == 0, (step, done.output)
        report = verify_out(out, load_key())
        assert report.ok, (step, report.lines())
    listed, _ = sealed.read_list(out, load_key())
    assert listed is not None and "junit/bob.xml" in listed
    rows = (out / "similarity_pairs.csv").read_text().splitlines()
    assert rows[0] == "student_a,student_b,score,evidence,files" and len(rows) == 4  # 3 students, 3 pairs
