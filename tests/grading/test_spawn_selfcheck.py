"""Issue 44: where fork is unavailable (Windows) or unsafe (macOS), the self-check spawns a process
per run; forced on Linux with AUTOGRADER_START_METHOD=spawn, it gives the fork path's verdicts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import ROOT, SOLUTIONS, STUBS

from autograder.grading.student_child import START_METHOD, forks, run_check_in_child
from autograder.grading.student_report import render_text

HANGING = ROOT / "tests" / "hostile" / "loop_in_train.py.txt"  # train_tinynet: `while True: pass`


def _hanging_folder(target: Path, limit: float) -> Path:
    shutil.copytree(STUBS, target, ignore=shutil.ignore_patterns("__pycache__"))
    for path in SOLUTIONS.glob("*.py"):
        shutil.copy(path, target / path.name)
    shutil.copy(HANGING, target / "tinynet.py")
    manifest_path = target / "checks" / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    for task in manifest["tasks"]:
        if task["id"] == "tinynet":
            task["time_limit"] = limit
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    return target


def test_the_setting_chooses_the_start_method(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(START_METHOD, "spawn")
    assert not forks()
    monkeypatch.setenv(START_METHOD, "fork")
    assert forks()


def test_a_hang_under_forced_spawn_costs_what_it_costs_under_fork(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch):
    folder = _hanging_folder(tmp_path / "student", 3)
    verdicts = {}
    for method in ("fork", "spawn"):
        monkeypatch.setenv(START_METHOD, method)
        report = run_check_in_child(folder, "tinynet")
        (task,) = report.tasks
        checks = [(r.name, r.passed, r.message_key) for r in task.checks]
        verdicts[method] = (task.status, report.score, checks)
        assert task.status == "checked", render_text(report, verbose=True)
    assert verdicts["spawn"] == verdicts["fork"]
    _, score, checks = verdicts["spawn"]
    assert score == 6  # registration (2) and weight_shapes (4), as graded (tests/sandbox/test_task_time.py)
    assert [name for name, passed, _ in checks if passed] == ["registration", "weight_shapes"], checks
    stopped = dict((name, key) for name, _, key in checks)
    assert stopped["losses_are_floats"] in ("engine.time_limit", "engine.cpu_limit"), checks
