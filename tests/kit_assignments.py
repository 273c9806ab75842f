"""The assignments the kit's tests run for: every `solutions/<id>/` with its own grading.toml section.

Exam extensions (`extends = "..."`) reuse another assignment's references and graders, so they are
left out here (tests/test_exam.py covers them). Imported by the test modules and tests/conftest.py.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _sections() -> dict[str, dict]:
    with (ROOT / "grading.toml").open("rb") as f:
        return dict(tomllib.load(f).get("assignments", {}))


def languages(assignment: str) -> tuple[str, ...]:
    """The feedback languages grading.toml declares for `assignment` (default English only)."""
    return tuple(_sections()[assignment].get("languages", ["en"]))


def assignment_ids() -> list[str]:
    """Assignment ids in grading.toml order that have solutions/<id>/ and extend no other."""
    sections = _sections()
    return [
        name
        for name, section in sections.items()
        if "extends" not in section and (ROOT / "solutions" / name).is_dir()
    ]


ASSIGNMENTS = assignment_ids()
