"""Issue #35: docs/authors/authoring.md's worked example is a real assignment, at the cost the page states.

docs/worked_example/norms/ holds what an author writes over `autograder new norms --tasks
unit_rows,norm_linear,unit_rows_np` (English only: grading.toml `languages = ["en"]`, no bn.toml).
Scaffolded into a kit of its own and overlaid with those files, it passes doctor's static rules, its
points add up, the reference scores full marks; every file of it is shown on the page as it is; and
the hand-written lines of graders and messages per task are the numbers the page states (at most
100 each). Issue #46: so are the lines of its contract and catalogue per task, in the short forms the
kit derives the rest of (at most 25 each); the full kit's per-assignment tests run on it in
tests/authoring/test_scaffolded_kit.py.
"""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path

from conftest import ROOT

from autograder.authoring.assignment_checks import assignment_problems
from autograder.authoring.catalogue_forms import edit_applies
from autograder.authoring.scaffold import scaffold_assignment
from autograder.config import load_kit
from autograder.grading.course import load_graders, validate_points
from autograder.grading.grader import Grader
from autograder.grading.options import GradeOptions

EXAMPLE = ROOT / "docs" / "worked_example" / "norms"
PAGE = ROOT / "docs" / "authors" / "authoring.md"
TASKS = ["unit_rows", "norm_linear", "unit_rows_np"]
LIMIT = 100  # hand-written lines of graders and messages per task (issue #35)
TOML_LIMIT = 25  # hand-written lines of contract and catalogue per task (issue #46)


def hand_written_lines(task: str) -> int:
    """Non-blank lines of the task's probes, checks, notebook cell and own messages (references,
    catalogue of mistakes, correct variants and generated files are not counted)."""
    graders = EXAMPLE / "graders"
    files = [graders / "probes" / f"{task}.py", graders / "public" / f"test_{task}.py",
             graders / "hidden" / f"test_{task}.py", graders / "notebook" / f"test_{task}.py"]
    count = sum(1 for f in files if f.is_file() for line in f.read_text().splitlines() if line.strip())
    messages = (graders / "messages" / "en.toml").read_text().split("\n\n")
    return count + sum(len(block.strip().splitlines()) for block in messages if block.startswith(f"[{task}."))


def toml_lines() -> dict[str, int]:
    """Per task, the lines of its contract tables and its [[wrong]] entries that are neither blank nor
    comments (an entry belongs to the task whose reference its edit applies to, as the kit derives it)."""
    graders = EXAMPLE / "graders"
    counted = dict.fromkeys(TASKS, 0)
    references = {task: (EXAMPLE / f"{task}.py").read_text(encoding="utf-8") for task in TASKS}
    for name in ("hidden/contract.toml", "misconceptions.toml"):
        for block in (graders / name).read_text(encoding="utf-8").split("\n\n"):
            lines = [line for line in block.splitlines() if line.strip() and not line.startswith("#")]
            if not lines:
                continue
            entry = tomllib.loads("\n".join(lines))
            if "wrong" in entry:
                owners = [t for t in TASKS if edit_applies(references[t], entry["wrong"][0]["replace"])]
            else:
                owners = list(entry)
            assert len(owners) == 1, (name, block)
            counted[owners[0]] += len(lines)
    return counted


def test_the_page_states_each_tasks_lines_and_they_are_few() -> None:
    page = PAGE.read_text(encoding="utf-8")
    toml = toml_lines()
    for task in TASKS:
        lines = hand_written_lines(task)
        assert lines <= LIMIT and toml[task] <= TOML_LIMIT, (task, lines, toml[task])
        assert re.search(rf"\| `{task}` \| [^|]+ \| {lines} \| {toml[task]} \|", page), (task, lines, toml)
    graders = sum(map(hand_written_lines, TASKS))
    total = rf"{graders} lines of graders for the three tasks .* and {sum(toml.values())}\s"
    assert re.search(total, page.replace("\n", " ")), total


def test_the_page_shows_every_file_as_it_is() -> None:
    page = PAGE.read_text(encoding="utf-8")
    for path in sorted(p for p in EXAMPLE.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        assert path.read_text(encoding="utf-8").strip() in page, path.relative_to(EXAMPLE)


def test_the_worked_example_builds_passes_doctor_and_scores_full_marks(tmp_path: Path) -> None:
    kit_root = tmp_path / "kit"
    kit_root.mkdir()
    (kit_root / "grading.toml").write_text("[kit]\nlanguage = \"en\"\n", encoding="utf-8")
    scaffold_assignment(kit_root, "norms", TASKS, title="Unit rows")
    toml = kit_root / "grading.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace('["en", "bn"]', '["en"]'), encoding="utf-8")
    solutions = kit_root / "solutions" / "norms"
    (solutions / "graders" / "messages" / "bn.toml").unlink()
    shutil.copytree(EXAMPLE, solutions, dirs_exist_ok=True)
    kit = load_kit(kit_root)
    assignment = kit.assignment("norms")
    assert assignment_problems(assignment) == []
    validate_points(load_graders(assignment))
    reference = tmp_path / "reference"
    reference.mkdir()
    for task in TASKS:
        shutil.copy(solutions / f"{task}.py", reference)
    with Grader(kit, "norms", GradeOptions(sandbox=False)) as grader:
        result = grader.grade(reference, student="reference")
    failed = [(c.check_id, c.feedback) for t in result.tasks for c in t.checks if not c.passed]
    assert result.score == result.max_score == 30, failed
