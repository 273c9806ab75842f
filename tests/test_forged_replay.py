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
from test_contract_matrix import answers_are_data

from autograder.config import Kit
from autograder.grading.course import load_graders

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_replayed_reference_answers_earn_nothing(kit: Kit, tmp_path: Path, assignment: str) -> None:
    folder = tmp_path / "reference"
    shutil.copytree(ROOT / "solutions" / assignment, folder,
                    ignore=shutil.ignore_patterns("graders", "__pycache__"))
    gained = replay_gains(load_graders(kit.assignment(assignment)), folder)
    # Checks whose answer is data the student writes (the contract matrix's answers_are_data) are
    # the only ones a replay may earn, and exactly the points the matrix says.
    want = answers_are_data(assignment)
    assert gained == want, f"checks whose points a replay of the reference's answers earns: {gained}"
