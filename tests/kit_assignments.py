"""The assignments the kit's tests run for: every `solutions/<id>/` with its own grading.toml section.

Exam extensions (`extends = "..."`) reuse another assignment's references and graders, so they are
left out here (tests/test_exam.py covers them). Imported by the test modules and tests/conftest.py.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def assignment_ids() -> list[str]:
    """Assignment ids in grading.toml order that have solutions/<id>/ and extend no other."""
    with (ROOT / "grading.toml").open("rb") as f:
        sections = tomllib.load(f).get("assignments", {})
    return [
        name
        for name, section in sections.items()
        if "extends" not in section and (ROOT / "solutions" / name).is_dir()
    ]


ASSIGNMENTS = assignment_ids()
