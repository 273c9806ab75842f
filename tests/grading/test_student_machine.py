"""The self-check on a student's machine as it is (issue #26): busy, with a temporary folder and a
terminal to keep clean, and sometimes a broken install."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import SOLUTIONS, STUBS

from autograder.grading.student_child import run_check_in_child
from autograder.grading.student_report import render_text
from autograder.grading.student_results import CHECKED
from autograder.manifest import read_manifest

MANIFEST = read_manifest(STUBS / "checks" / "manifest.json")
PUBLIC = sum(t.public_points for t in MANIFEST.tasks)
HOGS = 2  # busy loops sharing one CPU with the check, at a higher priority: it gets about a seventh
# of that CPU, so a task that needs 0.3 s of it takes 2 s of wall time (LIMIT: a wall clock would stop it)
LIMIT = 1.5  # seconds, every task's limit beside the hogs


def _solved(target: Path) -> Path:
    shutil.copytree(STUBS, target, ignore=shutil.ignore_patterns("__pycache__"))
    for task in MANIFEST.tasks:
        shutil.copy(SOLUTIONS / task.file, target / task.file)
    return target


def _limit_every_task(folder: Path, seconds: float) -> None:
    path = folder / "checks" / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    for task in manifest["tasks"]:
        task["time_limit"] = seconds
    path.write_text(json.dumps(manifest), encoding="utf-8")


def _one_cpu() -> set[int]:
    """One CPU this process may run on: the check and the hogs crowd it, and the rest of the
    machine (the suite's other processes) keeps its other CPUs."""
    if not hasattr(os, "sched_getaffinity"):
        return set()
    return {max(os.sched_getaffinity(0))}


def _heavier(cpus: set[int]) -> None:
    if cpus:
        os.sched_setaffinity(0, cpus)
    try:  # as root, the hogs outweigh the check (a student's laptop busy with other work)
        os.setpriority(os.PRIO_PROCESS, 0, -5)
    except OSError:
        pass


@pytest.fixture
def hogs() -> Iterator[None]:
    """Busy loops on the CPU the check runs on (its processes inherit this process's CPU)."""
    cpus = _one_cpu()
    kept = os.sched_getaffinity(0) if cpus else set()
    started = [subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=lambda: _heavier(cpus))
               for _ in range(HOGS)]
    if cpus:
        os.sched_setaffinity(0, cpus)
    try:
        yield
    finally:
        if cpus:
            os.sched_setaffinity(0, kept)
        for hog in started:
            hog.kill()
            hog.wait()


@pytest.mark.parametrize("fork_tasks", [True, False], ids=["fork", "spawn"])
def test_a_correct_folder_gets_full_marks_beside_cpu_hogs(tmp_path: Path, hogs: None, fork_tasks: bool):
    """Every task's limit at LIMIT (plus the check's grace): loading torch, its lazily imported parts
    and the checks are on no task's clock, and the time the hogs keep a task waiting for a CPU is
    not charged to it (a wall clock charged it, and a correct folder lost every task).

    Spawned runs: the training task alone (the heaviest; every task's run is spawned alike, and each
    spawn imports torch afresh, so all seven took minutes on a crowded CPU)."""
    if fork_tasks and sys.platform != "linux":
        pytest.skip("tasks are forked on Linux only")
    folder = _solved(tmp_path / "solved")
    _limit_every_task(folder, LIMIT)
    task = None if fork_tasks else MANIFEST.tasks[0]
    report = run_check_in_child(folder, task.id if task else None, fork_tasks=fork_tasks)
    assert [t.task for t in report.tasks] == [t.id for t in ([task] if task else MANIFEST.tasks)]
    assert all(t.status == CHECKED and t.passed for t in report.tasks), render_text(report, verbose=True)
    assert report.score == (task.public_points if task else PUBLIC)


def test_an_endless_loop_is_still_stopped_beside_cpu_hogs(tmp_path: Path, hogs: None):
    folder = _solved(tmp_path / "solved")
    first = MANIFEST.tasks[0]
    _limit_every_task(folder, LIMIT)
    (folder / first.file).write_text("import time\nwhile True:\n    time.sleep(0.01)\n", encoding="utf-8")
    report = run_check_in_child(folder, first.id)
    assert report.tasks[0].status == "stopped", render_text(report)


@pytest.fixture
def private_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The machine's temporary folder, for this test alone."""
    folder = tmp_path / "machine-tmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", None)
    return folder


@pytest.mark.parametrize("mode", ["child", "in_process"])
def test_nothing_is_left_behind(tmp_path: Path, private_tmp: Path, mode: str):
    """The checkpoint task's probes save weights to temporary folders; the imports write bytecode."""
    folder = _solved(tmp_path / "solved")
    if mode == "child":
        report = run_check_in_child(folder)
    else:
        from autograder.grading.student_check import run_check

        report = run_check(folder)
    assert report.score == PUBLIC, render_text(report, verbose=True)
    assert not [p for p in folder.rglob("__pycache__")], "bytecode written into the student's folder"
    left = sorted(p.name for p in private_tmp.iterdir())
    if mode == "in_process":  # torch's own compiler cache, made by any optimizer step in this process
        left = [name for name in left if not name.startswith("torchinductor_")]
    assert left == [], left


def test_a_flood_of_output_is_capped_with_a_note(tmp_path: Path):
    folder = _solved(tmp_path / "solved")
    first = MANIFEST.tasks[0]
    source = (folder / first.file).read_text(encoding="utf-8")
    (folder / first.file).write_text("print('x' * 10_000_000)\n" + source, encoding="utf-8")
    done = subprocess.run([str(Path(sys.executable).with_name("autograder")), "check", "--task", first.id],
                          cwd=folder, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    shown = done.stdout + done.stderr
    assert len(shown) < 200_000, len(shown)
    assert "more characters of your code's output were not shown" in shown
