"""The instructor's acts on the ledger: adjustments through a batch regrade, regrade threads, release.

Proves: an adjustment made after a batch stays on the grade `grade --regrade` records (the files
show it, `verify` holds); a regrade request opens a thread, is listed as open, and is closed by an
answer with an adjustment that names it (or without one), both sides reading the same thread; the
release rule holds every student while held, until the `at` time (a student with a later extension
until their own deadline), and holds an exam's grade until each student's own (extended) deadline.
"""

from __future__ import annotations

import csv
import dataclasses
import io
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import make_result

from autograder.batch import Entry, grade_batch
from autograder.config import Assignment, ExamConfig, Kit
from autograder.grading.options import GradeOptions
from autograder.grading.results import SubmissionResult
from autograder.ledger import instructor, regrades
from autograder.ledger.book import Gradebook
from autograder.ledger.release import ALL, AT, HELD, NONE, NOW, PUBLIC, Rules, next_change, release_of
from autograder.ledger.signing import load_key
from autograder.output.verify import verify_out

T0 = datetime(2025, 12, 14, 6, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


@pytest.fixture(scope="module")
def assignment(kit: Kit) -> Assignment:
    return kit.assignment("nn_module")


class HandGraded:
    """An executor that 'grades' each claimed submission as a hand-built result losing `lost`."""

    def __init__(self, lost: dict[str, float]):
        self.lost = lost

    def grade(self, kit: Kit, target: Assignment, todo: Sequence[Entry], options: GradeOptions, plan: object,
              notice: object) -> Iterator[SubmissionResult]:
        for entry in todo:
            yield make_result(target, entry.student, self.lost)


def test_an_adjustment_outlasts_grade_regrade(tmp_path: Path, kit: Kit, assignment: Assignment):
    klass, out = tmp_path / "class", tmp_path / "out"
    for name in ("ada", "bob"):
        (klass / name).mkdir(parents=True)
        (klass / name / "tinynet.py").write_text("x = 1\n")
    bare = GradeOptions(sandbox=False)
    grade_batch(kit, klass, out, options=bare, executor=HandGraded({"tinynet": 5}))  # 95 each
    book = Gradebook(out / "gradebook.sqlite")
    try:
        made = instructor.adjust(book, assignment, "ada", 3.0, "the hidden check was wrong", "prof",
                                 check_id="tinynet.hidden")
    finally:
        book.close()
    assert made.standing.score == 98.0 and made.made == 3.0 and made.adjustment.task == "tinynet"
    # the graders changed: everyone is graded again, and ada's adjustment stays on her new grade
    grade_batch(kit, klass, out, options=bare, regrade=True, executor=HandGraded({"tinynet": 6}))  # 94
    rows = {r["student"]: r for r in csv.DictReader(io.StringIO((out / "grades.csv").read_text("utf-8")))}
    assert (rows["ada"]["total"], rows["bob"]["total"]) == ("97", "94")
    assert "the hidden check was wrong" in (out / "ada" / "feedback.md").read_text("utf-8")
    book = Gradebook(out / "gradebook.sqlite")
    try:
        assert [r.score for r in book.current(assignment.id)] == [94.0, 94.0]  # the gradings as graded
        assert len(book.history(assignment.id, "ada")) == 2
    finally:
        book.close()
    report = verify_out(out, load_key())
    assert report.ok, report.lines()


def test_a_regrade_request_is_a_thread_both_sides_read(tmp_path: Path, assignment: Assignment):
    book = Gradebook(tmp_path / "g.sqlite")
    try:
        for student in ("ada", "bob"):
            book.record(make_result(assignment, student, {"dropout": 5}))
        asked = regrades.ask(book, assignment.id, "Ada", "my dropout is right: see line 4", upload=7, now=T0)
        regrades.ask(book, assignment.id, "ada", "and the seed too", now=T0 + HOUR)
        regrades.ask(book, assignment.id, "bob", "please look again", now=T0 + 2 * HOUR)
        assert [r.student for r in regrades.open_requests(book, assignment.id)] == ["ada", "bob"]
        [ada_open, _] = regrades.open_requests(book, assignment.id)
        assert ada_open.opened == asked and len(ada_open.messages) == 2 and asked.upload == 7

        reply, made = regrades.answer(book, assignment, "ada", "you are right", "prof", points=5,
                                      task="dropout")
        assert made is not None and made.standing.score == 100.0
        assert made.adjustment.request == asked.id and reply.adjustment == made.adjustment.id
        assert reply.closes and reply.upload == 7
        assert [r.student for r in regrades.open_requests(book, assignment.id)] == ["bob"]
        # the student reads the answer in the same thread; the grade as it counts has the points
        thread = regrades.thread(book, assignment.id, "ada")
        assert [(m.role, m.text) for m in thread] == [
            ("student", "my dropout is right: see line 4"), ("student", "and the seed too"),
            ("instructor", "you are right")]
        assert book.standing(assignment.id)[0].score == 100.0

        note, none = regrades.answer(book, assignment, "bob", "looking into it", "prof", closes=False)
        assert none is None and not note.closes
        assert regrades.open_request(book, assignment.id, "bob") is not None  # still open
        regrades.answer(book, assignment, "bob", "the grade stands", "prof")
        assert regrades.open_requests(book, assignment.id) == []
        regrades.ask(book, assignment.id, "bob", "one more thing")  # a new request after a closed one
        assert [r.opened.text for r in regrades.open_requests(book, assignment.id)] == ["one more thing"]

        with pytest.raises(instructor.InstructorError, match="no grade"):
            regrades.ask(book, assignment.id, "zed", "hello")
        with pytest.raises(instructor.InstructorError, match="needs its text"):
            regrades.answer(book, assignment, "bob", " ", "prof", points=2)
        assert len(book.adjustments(assignment.id)) == 1  # the refused answer recorded nothing
    finally:
        book.close()
    report = verify_out(tmp_path / "g.sqlite", load_key())
    assert report.ok, report.lines()


def exam(target: Assignment, check: str) -> Assignment:
    return dataclasses.replace(target, exam=ExamConfig(check=check, deadline=T0 + HOUR, late_penalty=10,
                                                       cutoff=T0 + 5 * HOUR))


def test_the_release_rule_follows_the_ledger(tmp_path: Path, assignment: Assignment):
    book = Gradebook(tmp_path / "g.sqlite")
    try:
        instructor.extend(book, assignment, [instructor.ExtensionAsked("ada", T0 + 3 * HOUR)], "prof")
        homework = Rules.of(book, assignment.id)
        assert release_of(assignment, "bob", T0, homework).level == ALL  # no release record: at once
        # an exam with nothing shown before the deadline: ada's own deadline is two hours later
        hidden = exam(assignment, "none")
        assert release_of(hidden, "bob", T0 + 2 * HOUR, homework).level == ALL
        ada = release_of(hidden, "ada", T0 + 2 * HOUR, homework)
        assert (ada.level, ada.until) == (NONE, T0 + 3 * HOUR)
        assert release_of(exam(assignment, "public"), "ada", T0 + 2 * HOUR, homework).level == PUBLIC
        assert next_change(hidden, ["ada", "bob"], T0 + 2 * HOUR, homework) == T0 + 3 * HOUR

        assert instructor.release(book, assignment.id, HELD, "prof").mode == HELD
        held = Rules.of(book, assignment.id)
        shown = release_of(assignment, "bob", T0 + 100 * HOUR, held)
        assert shown.level == NONE and shown.held and shown.until is None
        assert next_change(assignment, ["bob"], T0, held) is None  # only the button releases it

        instructor.release(book, assignment.id, AT, "prof", at=T0 + 2 * HOUR)
        at = Rules.of(book, assignment.id)
        assert release_of(assignment, "bob", T0 + HOUR, at).until == T0 + 2 * HOUR
        assert release_of(assignment, "bob", T0 + 2 * HOUR, at).level == ALL
        assert release_of(assignment, "ada", T0 + 2 * HOUR, at).until == T0 + 3 * HOUR  # her own deadline
        assert release_of(assignment, "ada", T0 + 3 * HOUR, at).level == ALL

        instructor.release(book, assignment.id, NOW, "prof")
        assert release_of(assignment, "ada", T0, Rules.of(book, assignment.id)).level == ALL
        with pytest.raises(instructor.InstructorError, match="needs that moment"):
            instructor.release(book, assignment.id, AT, "prof")
        instructor.extend(book, assignment, [instructor.ExtensionAsked("ada")], "prof")  # withdrawn
        assert Rules.of(book, assignment.id).extensions == {}
    finally:
        book.close()
