"""`autograder new`: a scaffolded assignment builds, passes doctor and grades (reference 100, stubs 0)."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner
from replay_forger import replay_gains

from autograder.authoring.assignment_checks import assignment_problems
from autograder.authoring.build import build_assignment, diff_assignment
from autograder.authoring.scaffold import check_names, render, scaffold_assignment
from autograder.cli import main
from autograder.config import load_kit
from autograder.errors import ConfigError
from autograder.grading.course import load_graders, validate_points
from autograder.grading.grader import Grader
from autograder.grading.options import GradeOptions
from autograder.manifest import read_manifest

ROOT = Path(__file__).resolve().parents[2]
TASKS = ["alpha", "beta_two"]


def kit_copy(folder: Path) -> Path:
    """A temporary copy of the kit's course content: grading.toml and solutions/."""
    folder.mkdir(parents=True)
    shutil.copy(ROOT / "grading.toml", folder / "grading.toml")
    shutil.copytree(ROOT / "solutions", folder / "solutions",
                    ignore=shutil.ignore_patterns("__pycache__", ".hypothesis"))
    return folder


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory) -> Path:
    kit_root = kit_copy(tmp_path_factory.mktemp("scaffold") / "kit")
    made = scaffold_assignment(kit_root, "second_course", TASKS, "A second course")
    assert made.grading_toml == kit_root / "grading.toml"
    build_assignment(kit_root, "second_course")
    return kit_root


def test_the_scaffold_has_every_part(scaffolded):
    folder = scaffolded / "solutions" / "second_course"
    for rel in ["alpha.py", "beta_two.py", "graders/probes/alpha.py", "graders/params.py",
                "graders/conftest.py",
                "graders/public/test_alpha.py", "graders/hidden/test_beta_two.py", "graders/hidden/_ref.py",
                "graders/messages/en.toml", "graders/messages/bn.toml", "graders/notebook/test_alpha.py",
                "graders/misconceptions.toml", "graders/correct/README.md", "graders/hidden/contract.toml",
                "graders/correct/alpha_added/alpha.py", "graders/correct/beta_two_added/beta_two.py"]:
        assert (folder / rel).is_file(), rel
    section = tomllib.loads((scaffolded / "grading.toml").read_text(encoding="utf-8"))["assignments"]
    assert set(section) >= {"nn_module", "second_course"}, "the other assignments stay declared"
    assert section["second_course"]["languages"] == ["en", "bn"]
    assert set(section["second_course"]["tasks"]) == set(TASKS)
    misconceptions = tomllib.loads((folder / "graders/misconceptions.toml").read_text(encoding="utf-8"))
    # the catalogue's rule (docs/authors/authoring.md): 3 wrong entries a task (here 5: three mistakes,
    # and one mutant per contract property that fails exactly its owner), each task's keywords covered
    per_task = {task: [e["id"] for e in misconceptions["wrong"] if e["task"] == task] for task in TASKS}
    assert {task: len(ids) for task, ids in per_task.items()} == {task: 5 for task in TASKS}
    assert set(misconceptions["required"]) == set(TASKS) and all(misconceptions["required"].values())
    assert misconceptions["minimum"] == {"wrong": 5 * len(TASKS), "correct": len(TASKS)}
    contract = tomllib.loads((folder / "graders/hidden/contract.toml").read_text(encoding="utf-8"))
    assert set(contract) == set(TASKS)
    fails = {e["id"]: e["fails"] for e in misconceptions["wrong"]}
    for task in TASKS:  # the audit rule: every property, its owner, and a mutant failing exactly that
        assert all(fails[p["mutant"]] == [p["owner"]] for p in contract[task]["properties"])
    assert "### BEGIN SOLUTION" in (folder / "alpha.py").read_text(encoding="utf-8")


def test_the_scaffold_builds_and_passes_doctor(scaffolded):
    kit = load_kit(scaffolded)
    assignment = kit.assignment("second_course")
    assert diff_assignment(scaffolded, "second_course") == []
    stub = (scaffolded / "assignments" / "second_course" / "alpha.py").read_text(encoding="utf-8")
    assert "raise NotImplementedError" in stub and "2.0 * x" not in stub
    readme = (scaffolded / "assignments" / "second_course" / "README.md").read_text(encoding="utf-8")
    assert "it checks `second_course`" in readme  # the folder names its assignment, so does its manifest
    manifest = read_manifest(scaffolded / "assignments" / "second_course" / "checks" / "manifest.json")
    assert manifest.assignment == "second_course" and manifest.languages == ("en", "bn")
    validate_points(load_graders(assignment))
    assert assignment_problems(assignment) == []
    load_graders(assignment, lang="bn")  # declared, so Bangla feedback loads


@pytest.mark.parametrize(("folder", "want"), [("solutions", 1.0), ("assignments", 0.0)])
def test_reference_full_marks_and_stubs_zero(scaffolded, tmp_path, folder, want):
    kit = load_kit(scaffolded)
    submission = tmp_path / "submission"
    shutil.copytree(scaffolded / folder / "second_course", submission,
                    ignore=shutil.ignore_patterns("graders", "checks", "__pycache__"))
    with Grader(kit, "second_course", GradeOptions(sandbox=False)) as grader:
        result = grader.grade(submission, student="s1")
    assert result.max_score == 20
    assert result.score == want * result.max_score, [c.feedback for t in result.tasks for c in t.checks]
    if want == 0:
        feedback = "\n".join(c.feedback for t in result.tasks for c in t.checks)
        assert "NotImplementedError" in feedback  # the engine's common.not_implemented message


def test_a_replay_of_the_reference_earns_nothing_from_the_scaffold(scaffolded, tmp_path):
    """A new assignment's checks already rest on hidden inputs (the public example has a hidden case,
    the hidden checks' hypothesis examples are seeded from the secret): replayed answers earn 0."""
    submission = tmp_path / "reference"
    shutil.copytree(scaffolded / "solutions" / "second_course", submission,
                    ignore=shutil.ignore_patterns("graders", "__pycache__"))
    graders = load_graders(load_kit(scaffolded).assignment("second_course"))
    assert replay_gains(graders, submission) == {}


def test_the_cli_scaffolds_builds_and_refuses_a_second_time(tmp_path):
    kit_root = kit_copy(tmp_path / "kit")
    runner = CliRunner()
    made = runner.invoke(main, ["new", "third_one", "--tasks", "gamma", "--kit", str(kit_root)])
    assert made.exit_code == 0, made.output
    assert "solutions/third_one" in made.output and (kit_root / "assignments/third_one/gamma.py").is_file()
    again = runner.invoke(main, ["new", "third_one", "--tasks", "gamma", "--kit", str(kit_root)])
    said = " ".join(again.output.split())  # rich wraps long lines
    assert again.exit_code != 0 and "already declares [assignments.third_one]" in said


def test_an_existing_id_or_folder_is_refused_and_nothing_is_written(tmp_path):
    kit_root = kit_copy(tmp_path / "kit")
    before = (kit_root / "grading.toml").read_text(encoding="utf-8")
    with pytest.raises(ConfigError, match="already declares"):
        scaffold_assignment(kit_root, "nn_module", ["x"])
    (kit_root / "solutions" / "leftover").mkdir()
    with pytest.raises(ConfigError, match="already exists"):
        scaffold_assignment(kit_root, "leftover", ["x"])
    assert (kit_root / "grading.toml").read_text(encoding="utf-8") == before


@pytest.mark.parametrize(("assignment", "tasks", "message"), [
    ("Bad-Id", ["a"], "assignment id 'Bad-Id' is not a valid name"),
    ("9lives", ["a"], "not a valid name"),
    ("ok", ["class"], "task name 'class' is not a valid name"),
    ("ok", ["json"], "shadow an installed module"),
    ("ok", ["data"], "clash with the kit's files"),
    ("ok", ["a", "a"], "named twice"),
    ("ok", [], "no tasks"),
])
def test_bad_names_are_refused_with_the_fix(assignment, tasks, message):
    with pytest.raises(ConfigError, match=message):
        check_names(assignment, tasks)
    with pytest.raises(ConfigError):
        render(assignment, tasks)
