"""The engine end to end: scores, isolation between tasks, repeatability, outputs, resume."""

from __future__ import annotations

import csv
import dataclasses
import json
import multiprocessing
import os
import shutil
import signal
from pathlib import Path

import pytest
from conftest import SOLUTIONS, STUBS, sandbox_works

from autograder.batch import grade_batch
from autograder.config import Kit
from autograder.errors import WorkerProtocolError
from autograder.grading.grader import Grader, PlainPlan
from autograder.grading.options import GradeOptions
from autograder.ledger.book import Gradebook

TOP_KEYS = {
    "score", "execution_time", "output", "output_format", "test_output_format", "test_name_format",
    "visibility", "stdout_visibility", "extra_data", "tests", "leaderboard",
}
TEST_KEYS = {"score", "max_score", "status", "name", "name_format", "number", "output",
             "output_format", "tags", "visibility", "extra_data"}
VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}


def test_reference_scores_full_marks(grader, reference_copy):
    result = grader.grade(reference_copy, student="reference")
    failing = [(c.check_id, c.feedback) for t in result.tasks for c in t.checks if not c.passed]
    assert failing == []
    assert result.score == result.max_score == 100


def test_stubs_score_zero_with_a_clear_message(grader):
    result = grader.grade(STUBS, student="stubs")
    assert result.score == 0
    for task in result.tasks:
        assert task.max_score > 0 and task.score == 0
        assert all("NotImplementedError" in c.feedback for c in task.checks), task.task


def test_a_plan_restricted_to_some_tasks_grades_those_only(grader, reference_copy):
    first, *rest = [t.id for t in grader.assignment.tasks]
    assert rest, "the restriction must leave a task out to show anything"
    only = PlainPlan(frozenset({first}))
    result = grader.grade(reference_copy, student="reference", plan=only)
    assert [t.task for t in result.tasks] == [first]
    assert result.score == result.max_score == result.tasks[0].max_score > 0
    # A restricted grade has a key of its own: it never stands in for the full grade.
    assert only.context(reference_copy, "reference") != PlainPlan().context(reference_copy, "reference")


@pytest.fixture(scope="module")
def fast_kit(kit: Kit) -> Kit:
    """The bundled kit with 4-second task budgets, so hangs are cut quickly."""
    a = kit.assignment("nn_module")
    tasks = tuple(dataclasses.replace(t, time_limit=4.0, cpu_limit=4.0) for t in a.tasks)
    return dataclasses.replace(kit, assignments={"nn_module": dataclasses.replace(a, tasks=tasks)})


HOSTILE_TASKS = {
    "counting.py": "while True:\n    pass\n",
    "dropout.py": "import os\nos._exit(0)\n",
    "containers.py": (
        "import sys\nfor _ in range(200000):\n    print('spam' * 100)\nsys.stdout.flush()\n"
        "raise SystemExit(0)\n"
    ),
    "numpy_forward.py": "def linear(x, W, b):\n    raise ValueError('x' * 64_000_000)\n"
                        "def delivery_forward(state, x):\n    import os\n    os.kill(os.getpid(), 9)\n",
}


def test_a_hostile_task_costs_only_that_task(fast_kit, reference_copy):
    for name, source in HOSTILE_TASKS.items():
        (reference_copy / name).write_text(source)
    with Grader(fast_kit, "nn_module", GradeOptions(sandbox=sandbox_works(fast_kit))) as grader:
        result = grader.grade(reference_copy, student="mallory")
        for task in result.tasks:
            if f"{task.task}.py" in HOSTILE_TASKS:
                assert task.score == 0, task.task
                assert all(len(c.feedback) < 5000 for c in task.checks)
            else:
                assert task.score == task.max_score, (task.task, [c.feedback for c in task.checks])
        feedback = " ".join(c.feedback for c in result.task("counting").checks)
        assert "time limit of 4 s" in feedback
        # The same warm grader still grades a clean submission as if alone.
        clean = grader.grade(SOLUTIONS, student="clean")
        assert clean.score == 100


def _small_class(root: Path) -> Path:
    klass = root / "class"
    klass.mkdir()
    shutil.copytree(SOLUTIONS, klass / "ada", ignore=shutil.ignore_patterns("graders", "__pycache__"))
    shutil.copytree(STUBS, klass / "bob", ignore=shutil.ignore_patterns("checks", "README.md"))
    shutil.make_archive(str(klass / "carol"), "zip", klass / "ada")
    (klass / "dan.zip").write_bytes(b"not a zip")
    return klass


def _stable(path: Path) -> dict:
    data = json.loads(path.read_text())
    data.pop("execution_time")
    return data


def test_batch_outputs_regrade_and_resume(kit, tmp_path):
    klass = _small_class(tmp_path)
    out = tmp_path / "out"
    use_sandbox = sandbox_works(kit)
    first = grade_batch(kit, klass, out, jobs=2, options=GradeOptions(sandbox=use_sandbox))
    assert first.graded == 4
    grades = (out / "grades.csv").read_text().splitlines()
    assert grades[0].startswith("student,tinynet,delivery,")
    assert grades[0].endswith(",total,max,folder,source,submission_sha256,grader_digest,signature")
    rows = {row["student"]: row for row in csv.DictReader(grades)}
    assert (rows["ada"]["total"], rows["ada"]["max"]) == ("100", "100") and rows["carol"]["total"] == "100"
    assert rows["bob"]["total"] == "0" and rows["dan"]["total"] == "0"
    results = _stable(out / "ada" / "results.json")
    assert set(results) <= TOP_KEYS
    assert results["score"] == 100
    for test in results["tests"]:
        assert set(test) <= TEST_KEYS
        assert test["visibility"] in VISIBILITY and test["status"] in {"passed", "failed"}
        assert test["tags"][0] in {t.id for t in kit.assignment().tasks}
    dan = json.loads((out / "dan" / "results.json").read_text())
    assert "not a readable zip" in dan["output"]
    assert sum(t["max_score"] for t in dan["tests"]) == 100

    before = {p.parent.name: _stable(p) for p in out.glob("*/results.json")}
    again = grade_batch(kit, klass, out, jobs=1, options=GradeOptions(sandbox=use_sandbox), regrade=True)
    assert again.graded == 4
    after = {p.parent.name: _stable(p) for p in out.glob("*/results.json")}
    assert after == before

    (klass / "eve").mkdir()
    shutil.copy(SOLUTIONS / "counting.py", klass / "eve" / "counting.py")
    resumed = grade_batch(kit, klass, out, jobs=1, options=GradeOptions(sandbox=use_sandbox))
    assert (resumed.graded, resumed.skipped) == (1, 4)
    book = Gradebook(out / "gradebook.sqlite")
    try:
        current = book.current("nn_module")
        assert sorted(r.student for r in current) == ["ada", "bob", "carol", "dan", "eve"]
        assert len(book.history("nn_module", "ada")) == 2
    finally:
        book.close()


def test_a_grading_process_killed_by_the_system_stops_the_batch_cleanly(kit, tmp_path):
    """No hang: the batch ends with a message that says what to do, and what was graded stays."""
    klass = _small_class(tmp_path)
    for name in ("fay", "gus", "hal"):
        shutil.copytree(klass / "ada", klass / name)
    out = tmp_path / "out"
    use_sandbox = sandbox_works(kit)
    killed: list[int] = []
    before = {p.pid for p in multiprocessing.active_children()}  # other tests' processes: never a victim

    def kill_one_grading_process(result) -> None:
        if not killed:  # one of this batch's grading processes (forked by its pool), never another's
            victim = min(p.pid for p in multiprocessing.active_children() if p.pid not in before)
            killed.append(victim)
            os.kill(victim, signal.SIGKILL)

    with pytest.raises(WorkerProtocolError, match="run the same command again"):
        grade_batch(kit, klass, out, jobs=2, options=GradeOptions(sandbox=use_sandbox),
                    on_result=kill_one_grading_process)
    assert killed
    book = Gradebook(out / "gradebook.sqlite")
    try:
        graded = {r.student for r in book.current("nn_module")}
    finally:
        book.close()
    assert graded  # the result that arrived before the kill was kept
    resumed = grade_batch(kit, klass, out, jobs=2, options=GradeOptions(sandbox=use_sandbox))
    assert resumed.skipped == len(graded) and resumed.graded == 7 - len(graded)
    assert not [p for p in multiprocessing.active_children() if p.pid in killed]
