"""The strongest forger of observations there is, against every assignment: it answers every probe
call as the reference solution answered it in a grading whose hidden challenges it could not know
(tests/replay_forger.py). Each check's points must rest on inputs drawn from the graders' secret,
so that the replayed answers earn nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from kit_assignments import ASSIGNMENTS
from replay_forger import replay_gains

from autograder.config import Kit
from autograder.grading.course import load_graders

ROOT = Path(__file__).resolve().parents[1]
# Checks whose answer is data the student writes, not something their code computes: a replayed
# answer is the same numbers a student could type in (the SPEC fixes TUNED's seed and data, and the
# grading process trains with them itself), so a replay of it is the task done.
ANSWERS_ARE_DATA = {"tensors_autograd": {"training.tuned_form": 2.0, "training.tuned": 4.0}}


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_replayed_reference_answers_earn_nothing(kit: Kit, tmp_path: Path, assignment: str) -> None:
    folder = tmp_path / "reference"
    shutil.copytree(ROOT / "solutions" / assignment, folder,
                    ignore=shutil.ignore_patterns("graders", "__pycache__"))
    gained = replay_gains(load_graders(kit.assignment(assignment)), folder)
    want = ANSWERS_ARE_DATA.get(assignment, {})
    assert gained == want, f"checks whose points a replay of the reference's answers earns: {gained}"
