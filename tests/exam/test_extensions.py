"""Extensions applied by the late policy: homework with a deadline, graded for real (no sandbox).

Proves: a late submission loses its penalty; once the student has their own later deadline (or is
exempt from the late policy), the next `grade` grades them again (the extension is part of the
grade's key) and the penalty is gone, their feedback saying why; a student without an extension
keeps their penalty and is not graded again.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

from click.testing import CliRunner
from conftest import ROOT, SOLUTIONS

from autograder.batch import grade_batch
from autograder.cli import main
from autograder.config import ExamConfig, Kit
from autograder.grading.options import GradeOptions

DEADLINE = datetime(2025, 12, 14, 18, 0, tzinfo=UTC)
LATE = DEADLINE + timedelta(minutes=90)  # two started hours late: -20%


def homework_kit(kit: Kit) -> Kit:
    """nn_module as homework with a deadline and a late policy of 10% per started hour."""
    target = kit.assignment("nn_module")
    policy = ExamConfig(check="public", deadline=DEADLINE, late_penalty=10, late_period="hour")
    return dataclasses.replace(kit, assignments={**kit.assignments,
                                                 "nn_module": dataclasses.replace(target, exam=policy)})


def rows(out: Path) -> dict[str, dict[str, str]]:
    return {r["student"]: r for r in csv.DictReader(io.StringIO((out / "grades.csv").read_text("utf-8")))}


def test_an_extension_or_exemption_lifts_the_late_penalty(kit: Kit, tmp_path: Path, monkeypatch):
    homework = homework_kit(kit)
    klass, out = tmp_path / "class", tmp_path / "out"
    for name in ("ada", "bob", "cem"):
        shutil.copytree(SOLUTIONS, klass / name, ignore=shutil.ignore_patterns("graders", "__pycache__"))
    times = {name: LATE for name in ("ada", "bob", "cem")}
    bare = GradeOptions(sandbox=False)
    first = grade_batch(homework, klass, out, options=bare, jobs=1, times=times)
    assert first.graded == 3
    assert {s: r["total"] for s, r in rows(out).items()} == {"ada": "80", "bob": "80", "cem": "80"}

    extended = CliRunner().invoke(main, ["extend", str(out), "ada", "--until", "2025-12-14T20:00:00+00:00",
                                         "--reason", "ill", "--kit", str(ROOT)])
    assert extended.exit_code == 0, extended.output
    exempt = CliRunner().invoke(main, ["extend", str(out), "bob", "--exempt", "--kit", str(ROOT)])
    assert exempt.exit_code == 0, exempt.output

    again = grade_batch(homework, klass, out, options=bare, jobs=1, times=times)
    assert sorted(again.changed) == ["ada", "bob"] and again.graded == 2  # cem's grade stands
    assert {s: r["total"] for s, r in rows(out).items()} == {"ada": "100", "bob": "100", "cem": "80"}
    ada = json.loads((out / "ada" / "results.json").read_text("utf-8"))
    assert "Your own deadline is 2025-12-14 20:00" in ada["output"]
    assert ada["extra_data"]["exam"]["late"]["status"] == "on_time"
    bob = json.loads((out / "bob" / "results.json").read_text("utf-8"))
    assert "exempt from the late policy" in bob["output"] and bob["extra_data"]["late_penalty"] == 0
    assert bob["extra_data"]["exam"]["late"]["status"] == "late"  # late, and exempt: no penalty
    checked = CliRunner().invoke(main, ["verify", str(out)])
    assert checked.exit_code == 0, checked.output
