"""The student's self-check: a copy of the built folder, no kit; in process and in spawned children."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import SOLUTIONS, STUBS

from autograder.cli import main
from autograder.errors import ConfigError
from autograder.grading.student_check import run_check
from autograder.grading.student_child import run_check_in_child
from autograder.grading.student_report import render_html, render_text
from autograder.grading.student_results import CHECKED, ENDED, NO_IMPORT, NOT_DEFINED, NOT_STARTED, STOPPED
from autograder.manifest import read_manifest

MANIFEST = read_manifest(STUBS / "checks" / "manifest.json")
TASKS = [t.id for t in MANIFEST.tasks]
PUBLIC = sum(t.public_points for t in MANIFEST.tasks)


def _run(mode: str, folder: Path, task: str | None = None, lang: str | None = None):
    if mode == "in_process":
        return run_check(folder, task, lang)
    return run_check_in_child(folder, task, lang, start_method="spawn")


@pytest.fixture
def stubs(tmp_path: Path) -> Path:
    """A student's copy of the built folder, somewhere outside the kit."""
    folder = tmp_path / "my work"
    shutil.copytree(STUBS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


@pytest.fixture
def solved(stubs: Path) -> Path:
    for task in MANIFEST.tasks:
        shutil.copy(SOLUTIONS / task.file, stubs / task.file)
    return stubs


@pytest.mark.parametrize("mode", ["in_process", "spawn"])
def test_reference_files_get_full_public_marks(solved: Path, mode: str):
    report = _run(mode, solved)
    assert [t.task for t in report.tasks] == TASKS
    assert all(t.status == CHECKED and t.passed for t in report.tasks), render_text(report, verbose=True)
    assert report.score == report.max_score == PUBLIC > 0
    assert report.exit_code == 0
    # the manifest's public points are what the public checks are worth
    assert {t.task: t.max_score for t in report.tasks} == {t.id: t.public_points for t in MANIFEST.tasks}


@pytest.mark.parametrize("mode", ["in_process", "spawn"])
def test_stubs_are_not_started_one_line_each_and_exit_1(stubs: Path, mode: str):
    report = _run(mode, stubs)
    assert {t.status for t in report.tasks} == {NOT_STARTED}
    assert report.score == 0 and report.exit_code == 1
    text = render_text(report).splitlines()
    first = MANIFEST.tasks[0]
    assert f"{first.id}: not started, 0/{first.public_points:g}" in text
    assert len(text) == len(TASKS) + 3  # a title, the folder checked, one line a task, the total
    assert len(render_text(report, verbose=True).splitlines()) > len(text)  # --verbose shows every check


@pytest.mark.parametrize("mode", ["in_process", "spawn"])
def test_a_broken_file_is_one_line_with_its_line_number(stubs: Path, mode: str):
    first, second = MANIFEST.tasks[0], MANIFEST.tasks[1]
    shutil.copy(SOLUTIONS / first.file, stubs / first.file)
    (stubs / second.file).write_text("import torch\n\ndef broken(:\n    pass\n", encoding="utf-8")
    report = _run(mode, stubs, lang="en")
    by_task = {t.task: t for t in report.tasks}
    assert by_task[first.id].passed and by_task[second.id].status == NO_IMPORT
    line = [x for x in render_text(report).splitlines() if x.startswith(f"{second.id}:")]
    assert len(line) == 1 and "SyntaxError" in line[0] and "line 3" in line[0], line
    assert report.exit_code == 1


def test_a_folder_built_by_another_kit_version_says_so(stubs: Path):
    path = stubs / "checks" / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["kit_version"] = "0.0.1"
    path.write_text(json.dumps(manifest), encoding="utf-8")
    report = run_check(stubs, MANIFEST.tasks[0].id)
    assert "built with torch-autograder 0.0.1" in render_text(report)
    assert "built with" not in render_text(run_check(stubs, MANIFEST.tasks[0].id,
                                                     checks_dir=STUBS / "checks"))


def test_one_task_and_bangla(solved: Path):
    task = MANIFEST.tasks[1].id
    report = run_check(solved, task, "bn")
    assert [t.task for t in report.tasks] == [task] and report.exit_code == 0
    assert "সবগুলো পাস" in render_text(report)
    with pytest.raises(ConfigError, match="no task 'nope'"):
        run_check(solved, "nope")


def test_a_task_that_hangs_or_exits_costs_that_task_only(solved: Path):
    hang, ends = MANIFEST.tasks[0], MANIFEST.tasks[2]
    manifest = json.loads((solved / "checks" / "manifest.json").read_text(encoding="utf-8"))
    manifest["tasks"][0]["time_limit"] = 2  # the others keep theirs: a loaded machine is slow
    (solved / "checks" / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    (solved / hang.file).write_text("while True:\n    pass\n", encoding="utf-8")
    (solved / ends.file).write_text("import os\nos._exit(3)\n", encoding="utf-8")
    report = run_check_in_child(solved)
    status = {t.task: t.status for t in report.tasks}
    assert status[hang.id] == STOPPED and status[ends.id] == ENDED
    assert all(t.passed for t in report.tasks if t.task not in (hang.id, ends.id))
    assert "stopped after 2 s" in render_text(report)


HANGING_TRAIN = Path(__file__).resolve().parents[1] / "hostile" / "loop_in_train.py.txt"


def _sleeping_train(folder: Path, limit: float) -> None:
    """tinynet.py whose train_tinynet never returns (it sleeps on line 22: light on the CPU), with
    `limit` seconds for the task in the folder's manifest."""
    source = HANGING_TRAIN.read_text(encoding="utf-8")
    (folder / "tinynet.py").write_text(
        source.replace("while True: pass", 'while True: __import__("time").sleep(0.01)'), encoding="utf-8")
    path = folder / "checks" / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    for task in manifest["tasks"]:
        if task["id"] == "tinynet":
            task["time_limit"] = limit
    path.write_text(json.dumps(manifest), encoding="utf-8")


@pytest.mark.skipif(sys.platform != "linux", reason="the self-check times each call where it forks (Linux)")
@pytest.mark.parametrize("lang", ["en", "bn"])
def test_a_hanging_call_gets_the_same_verdicts_from_self_check_and_grade(solved: Path, kit, lang: str):
    """The self-check runs each probe call as the grade does: the hanging train_tinynet costs the same
    public checks, with the same feedback (train_tinynet and tinynet.py:22), in English and Bangla."""
    import dataclasses

    from autograder.grading.grader import Grader
    from autograder.grading.options import GradeOptions
    from autograder.submissions.collect import collect

    limit = 2.0
    _sleeping_train(solved, limit)
    report = run_check_in_child(solved, "tinynet", lang)
    assignment = kit.assignment("nn_module")
    task = dataclasses.replace(assignment.task("tinynet"), time_limit=limit, cpu_limit=limit)
    fast = dataclasses.replace(kit, assignments={**kit.assignments, "nn_module": dataclasses.replace(
        assignment, tasks=tuple(task if t.id == "tinynet" else t for t in assignment.tasks))})
    with Grader(fast, "nn_module", GradeOptions(sandbox=False, lang=lang, public_only=True)) as grader:
        graded = grader.grade_task(task, collect(solved, assignment.given, fast.assignment("nn_module")))
    checked = {c.name: (c.score, c.message_key, c.feedback) for c in report.tasks[0].checks}
    assert checked == {c.name: (c.score, c.message_key, c.feedback) for c in graded.checks}
    kept = {name for name, (score, _, _) in checked.items() if score > 0}
    assert kept == {"registration", "weight_shapes"}, checked
    for name, (_, key, feedback) in checked.items():
        if name not in kept:
            assert key == "engine.time_limit" and "`train_tinynet(" in feedback, feedback
            assert "`tinynet.py:22`" in feedback and "sleep(0.01)" in feedback
            assert "tinynet_train" not in feedback
    text = render_text(report)
    assert "tinynet.py:22" in text and "tinynet_train" not in text
    assert ("সময়সীমা" in text) == (lang == "bn")


def test_notebook_names_are_checked_in_process(solved: Path):
    """What check() in a kernel does: the names a notebook defined, no task file needed."""
    task = MANIFEST.tasks[0]
    namespace: dict = {}
    source = (SOLUTIONS / task.file).read_text(encoding="utf-8")
    exec(compile(source, "<cell>", "exec"), namespace)
    (solved / task.file).unlink()
    report = run_check(solved, task.id, namespace=namespace)
    assert report.tasks[0].passed and report.score == task.public_points
    empty = run_check(solved, namespace={"unrelated": 1})
    by_task = {t.task: t.status for t in empty.tasks}
    assert by_task.pop(task.id) == NOT_DEFINED  # neither in the notebook nor in a file beside it
    assert set(by_task.values()) == {CHECKED}  # the others' files beside the notebook are checked
    html = render_html(report)
    assert f'data-task="{task.id}"' in html and f"{task.public_points:g}/{task.public_points:g}" in html


def test_cli_exit_codes_and_no_kit(solved: Path, stubs: Path, tmp_path: Path):
    # 0: every public check passes; 1: some fail; 2: a usage error or no checks here
    ok = CliRunner().invoke(main, ["check", str(solved), "--in-process"])
    assert ok.exit_code == 0, ok.output
    assert f"public checks: {PUBLIC:g}/{PUBLIC:g}" in ok.output
    (tmp_path / "empty").mkdir()
    nowhere = CliRunner().invoke(main, ["check", str(tmp_path / "empty")])
    assert nowhere.exit_code == 2 and "checks/manifest.json" in nowhere.output
    bad = CliRunner().invoke(main, ["check", "--nope"])
    assert bad.exit_code == 2
    # a manifest that is not one says which file and what to do
    (solved / "checks" / "manifest.json").write_text("{", encoding="utf-8")
    broken = CliRunner().invoke(main, ["check", str(solved)])
    assert broken.exit_code == 2 and "manifest.json" in broken.output and "fresh copy" in broken.output


def test_the_check_path_needs_nothing_of_linux_or_the_sandbox():
    """Windows and macOS: no fork, no sandbox client, launcher, cgroups or resource limits imported."""
    code = (
        "import sys; import autograder.cli; "
        "from autograder.grading import student_check, student_child, notebook_check; "
        "print(sorted(m for m in sys.modules if m in {'resource', 'autograder.sandbox.client', "
        "'autograder.sandbox.launch', 'autograder.sandbox.cgroup', 'autograder.sandbox.seccomp', "
        "'autograder.sandbox.inside.child', 'autograder.sandbox.inside.server'}))"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == "[]", shown.stdout


def test_from_a_subfolder_the_folder_is_found_named_and_its_files_checked(solved: Path):
    """Issue #38: from notes/ or checks/ the check finds the folder as git finds its root, reads the
    task files there (not "tinynet.py is missing" for every task) and says which folder it checked."""
    (solved / "notes").mkdir()
    in_checks = run_check(solved / "checks")
    from_notes = run_check_in_child(solved / "notes", start_method="spawn")
    for report in (in_checks, from_notes):
        assert report.folder == str(solved.resolve()), report.folder
        assert report.score == report.max_score == PUBLIC, render_text(report)
        assert f"checked the folder {solved.resolve()}" in render_text(report).splitlines()[1]


def test_bangla_self_check_outside_a_folder_and_of_a_mistake(stubs: Path, tmp_path: Path):
    """Issue #38: --lang bn answers in Bangla outside a folder and for an unknown task, and a mistake's
    checks carry no English status word (no FAIL/PASS)."""
    from autograder.authoring.latin_scan import latin_words

    (tmp_path / "elsewhere").mkdir()
    nowhere = CliRunner().invoke(main, ["check", str(tmp_path / "elsewhere"), "--lang", "bn"])
    assert nowhere.exit_code == 2 and "checks/manifest.json নেই" in nowhere.output, nowhere.output
    assert nowhere.output.startswith("ত্রুটি: ") and latin_words(nowhere.output) == [], nowhere.output
    unknown = CliRunner().invoke(main, ["check", str(stubs), "--task", "nope", "--lang", "bn"])
    assert unknown.exit_code == 2 and "'nope' নামে কোনো task নেই" in unknown.output, unknown.output
    source = (SOLUTIONS / "counting.py").read_text(encoding="utf-8")
    wrong = source.replace("total += b * a + (b if bias else 0)", "total += b * a + b")  # bias=False ignored
    assert wrong != source
    (stubs / "counting.py").write_text(wrong, encoding="utf-8")
    report = run_check(stubs, "counting", "bn")
    text = render_text(report, verbose=True)
    assert report.exit_code == 1 and "  ফেল " in text and "  পাস " in text, text
    assert not {"FAIL", "PASS", "Observed", "Idea"} & set(re.findall(r"[A-Za-z]+", text)), text
    shown = text.replace(str(stubs.resolve()), "").replace("counting:", "")  # the folder, the task id
    assert latin_words(shown) == [], text
    (stubs / "checks" / "manifest.json").write_text("{", encoding="utf-8")
    damaged = CliRunner().invoke(main, ["check", str(stubs), "--lang", "bn"])
    assert damaged.exit_code == 2 and "নতুন একটি কপি চান" in damaged.output, damaged.output
