"""Proof that the graders work: per assignment, a catalogue of wrong and correct submissions, graded end
to end.

Every assignment under `solutions/` with its own grading.toml section (exam extensions reuse another's
graders and are left out) keeps its catalogue with its graders, private (never shipped to students):
`solutions/<id>/graders/misconceptions.toml` lists wrong submissions, each a small edit of one reference
file (one mistake): the task it breaks must lose points with feedback naming the misconception, and every
other task must keep full marks (but a task whose file imports the broken one: it uses the student's
function). Each entry is graded for its own task and the tasks importing it; the first entry of each
task is graded in full besides, where every other task must keep its marks (tasks are graded
independently, each in its own sandboxed process, so what one entry shows there holds for the task's
others). One mistake, one charge: `fails` lists exactly the checks of its task the mistake must fail
(those whose own property it breaks) and `must_not_fail` the checks a cascade would hit (the task's
other checks of the same function or class, every check relying, in the task's contract matrix, on a
property the failing checks prove, and any the graders of issue #20 failed too); the grading must fail
exactly `fails` and none of `must_not_fail`. Its `[required]` table names, per task, the
misconceptions agreed with the grader writer (a keyword some entry's feedback must contain).
`solutions/<id>/graders/correct/<variant>/` holds correct files written in other styles: overlaid on the
reference they must score full marks (grading.toml's total). The reference scores full marks
and the stubs score 0.
"""

from __future__ import annotations

import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kit_assignments import ASSIGNMENTS
from test_contract_matrix import CONTRACTS, proven

from autograder.authoring.catalogue_forms import load_wrong
from autograder.authoring.task_imports import dependents
from autograder.config import load_kit
from autograder.grading.grader import PlainPlan

ROOT = Path(__file__).resolve().parents[1]

# The static rules a catalogue follows (sizes, entries, [required], correct variants) are doctor's:
# autograder/authoring/misconception_rules.py. This module grades the entries.


@dataclass(frozen=True)
class Catalogue:
    assignment: str
    solutions: Path
    stubs: Path
    tasks: dict[str, str]  # task -> file, from grading.toml
    given: tuple[str, ...]
    wrong: tuple[dict[str, Any], ...]
    required: dict[str, list[str]]
    variants: tuple[Path, ...]
    traps: tuple[str, ...]  # the catalogue's [lesson] traps

    @property
    def graders(self) -> Path:
        return self.solutions / "graders"


def load_catalogue(assignment: str) -> Catalogue:
    with (ROOT / "grading.toml").open("rb") as f:
        section = tomllib.load(f)["assignments"][assignment]
    solutions = ROOT / "solutions" / assignment
    path = solutions / "graders" / "misconceptions.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    correct = solutions / "graders" / "correct"
    found = correct.iterdir() if correct.is_dir() else ()
    variants = sorted(p for p in found if p.is_dir() and not p.name.startswith((".", "_")))
    return Catalogue(
        assignment=assignment,
        solutions=solutions,
        stubs=ROOT / "assignments" / assignment,
        tasks={name: t["file"] for name, t in section.get("tasks", {}).items()},
        given=tuple(section.get("given", [])),
        wrong=tuple(load_wrong(load_kit(ROOT).assignment(assignment))),  # short forms derived
        required=data.get("required", {}),
        variants=tuple(variants),
        traps=tuple(data.get("lesson", {}).get("traps", [])),
    )


CATALOGUES = {assignment: load_catalogue(assignment) for assignment in ASSIGNMENTS}
WRONG = [(c, e) for c in CATALOGUES.values() for e in c.wrong]
WRONG_IDS = [f"{c.assignment}:{e.get('id')}" for c, e in WRONG]
# The first entry of each task: graded in full (every task), where no other task may lose a point.
FIRST = [(c, e) for c in CATALOGUES.values() for e in
         {entry["task"]: entry for entry in reversed(c.wrong)}.values()]
FIRST_IDS = [f"{c.assignment}:{e.get('id')}" for c, e in FIRST]
VARIANTS = [(c, v) for c in CATALOGUES.values() for v in c.variants]
VARIANT_IDS = [f"{c.assignment}:{v.name}" for c, v in VARIANTS]


@pytest.fixture(params=ASSIGNMENTS)
def catalogue(request) -> Catalogue:
    return CATALOGUES[request.param]


# ----------------------------------------------------------------------------- building submissions


def apply_edit(text: str, replace: list[list[str]], where: str) -> str:
    """Apply [old, new] replacements in order; each `old` must occur exactly once when applied."""
    for old, new in replace:
        count = text.count(old)
        assert count == 1, (
            f"{where}: {old!r} occurs {count} times in the reference (must be exactly once); "
            "the reference drifted, update the catalogue entry"
        )
        text = text.replace(old, new)
    return text


def copy_reference(cat: Catalogue, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    for name in [*cat.tasks.values(), *cat.given]:
        shutil.copy(cat.solutions / name, dest / name)
    return dest


def build_wrong(cat: Catalogue, entry: dict[str, Any], dest: Path) -> Path:
    copy_reference(cat, dest)
    target = dest / entry["file"]
    edited = apply_edit(target.read_text(), entry["replace"], entry["id"])
    assert edited != target.read_text(), f"{entry['id']}: the edit changes nothing"
    target.write_text(edited)
    return dest


def build_variant(cat: Catalogue, variant: Path, dest: Path) -> Path:
    copy_reference(cat, dest)
    for src in variant.iterdir():
        if src.is_file() and src.suffix == ".py":
            shutil.copy(src, dest / src.name)
    return dest


# ----------------------------------------------------------------------------- reading results


def task_feedback(task_result: Any) -> str:
    parts = []
    for check in task_result.checks:
        if check.feedback:
            parts.append(str(check.feedback))
    return "\n".join(parts)


def describe(result: Any, only: set[str] | None = None) -> str:
    """Every check of every task (or of `only`), with its score and feedback, for failure output."""
    lines = [f"total {result.score}/{result.max_score}"]
    for task in result.tasks:
        if only is not None and task.task not in only:
            continue
        lines.append(f"[{task.task}] {task.score}/{task.max_score}")
        for check in task.checks:
            mark = "ok  " if check.passed else "FAIL"
            lines.append(f"  {mark} {check.check_id} {check.score}/{check.max_score}: {check.title}")
            if check.feedback and not check.passed:
                for line in str(check.feedback).splitlines():
                    lines.append(f"         | {line}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- catalogue shape


def test_assignments_found():
    assert "nn_module" in ASSIGNMENTS and "tensors_autograd" in ASSIGNMENTS, ASSIGNMENTS
    assert "nn_module_exam" not in ASSIGNMENTS  # an exam extension: nn_module's catalogue covers it


def test_task_files_are_the_reference_and_stub_files(catalogue):
    """Every task file of grading.toml is a reference with solution markers, built into a stub, and
    the reference folder holds no other marked file (a task grading.toml forgot)."""
    from autograder.authoring.markers import has_markers

    assert catalogue.tasks, f"{catalogue.assignment} declares no tasks"
    assert len(set(catalogue.tasks.values())) == len(catalogue.tasks), "two tasks share a file"
    marked = {p.name for p in catalogue.solutions.glob("*.py") if has_markers(p.read_text(encoding="utf-8"))}
    assert marked == set(catalogue.tasks.values()), (sorted(marked), catalogue.tasks)
    for name in catalogue.tasks.values():
        assert (catalogue.stubs / name).is_file(), f"assignments/{catalogue.assignment}/{name}: not built"


def test_the_catalogue_follows_doctors_rules(catalogue):
    """The static rules (sizes per task and [minimum], well-formed entries whose edits apply once to the
    reference and whose check ids are their task's, [required] covered, a correct variant per task) are
    `autograder doctor`'s own (autograder/authoring/misconception_rules.py): one set of rules."""
    from autograder.authoring.misconception_rules import misconception_problems
    from autograder.config import load_kit

    assert list(misconception_problems(load_kit(ROOT).assignment(catalogue.assignment))) == []


def checks_of(cat: Catalogue, task: str) -> set[str]:
    """The check ids of a task, as its contract matrix names them (tests/test_contract_matrix.py
    proves the matrix names exactly the checks the engine loads)."""
    return set(CONTRACTS[cat.assignment][task]["relies_on"])


def cascade_prone(cat: Catalogue, entry: dict[str, Any]) -> set[str]:
    """The checks of the entry's task that rely (in the contract matrix) on a property one of its
    failing checks proves: where a cascade would show, so the catalogue must decide each of them."""
    table = CONTRACTS[cat.assignment][entry["task"]]
    broken = set().union(*(proven(table).get(c, set()) for c in entry["fails"]))
    return {check for check, needs in table["relies_on"].items() if broken & set(needs)}


def test_every_cascade_prone_check_is_decided(catalogue):
    """Each check that relies on a property a mistake's failing checks prove is listed in `fails` (it
    fails too, the mistake breaking its own property as well) or in `must_not_fail`."""
    undecided = {
        entry["id"]: sorted(cascade_prone(catalogue, entry) - {*entry["fails"], *entry["must_not_fail"]})
        for entry in catalogue.wrong
    }
    undecided = {k: v for k, v in undecided.items() if v}
    assert not undecided, f"checks neither in fails nor in must_not_fail: {undecided}"


def test_the_lessons_named_traps_fail_a_public_check(catalogue):
    """The traps each lesson names (the catalogue's [lesson] traps, from SPEC and the lesson pages): a
    student's own `autograder check` must show them, so each fails a public check, not only hidden
    ones (issue #26)."""
    from autograder.config import load_kit
    from autograder.grading.course import load_graders

    graders = load_graders(load_kit(ROOT).assignment(catalogue.assignment))
    public = {c.id for found in graders.checks.values() for c in found if c.public}
    entries = {entry["id"]: entry for entry in catalogue.wrong}
    traps = catalogue.traps
    assert len(set(traps)) == len(traps), f"a trap named twice: {traps}"
    assert set(traps) <= set(entries), sorted(set(traps) - set(entries))
    assert {trap: entries[trap]["fails"] for trap in traps if not set(entries[trap]["fails"]) & public} == {}


# ----------------------------------------------------------------------------- grading


def total_points(cat: Catalogue) -> float:
    """The assignment's maximum: the sum of its tasks' points in grading.toml (any total)."""
    from autograder.config import load_kit

    return sum(task.points for task in load_kit(ROOT).assignment(cat.assignment).tasks)


def test_reference_scores_full_marks(catalogue, assignment_grader, tmp_path):
    grader = assignment_grader(catalogue.assignment)
    result = grader.grade(copy_reference(catalogue, tmp_path / "reference"), student="reference")
    assert result.score == result.max_score == total_points(catalogue), describe(result)
    for task in result.tasks:
        assert task.score == task.max_score, describe(result, {task.task})


def test_stubs_score_zero(catalogue, assignment_grader, tmp_path):
    grader = assignment_grader(catalogue.assignment)
    dest = tmp_path / "stubs"
    dest.mkdir()
    for name in catalogue.tasks.values():
        shutil.copy(catalogue.stubs / name, dest / name)
    for name in catalogue.given:
        source = catalogue.stubs / name if (catalogue.stubs / name).exists() else catalogue.solutions / name
        shutil.copy(source, dest / name)
    result = grader.grade(dest, student="stubs")
    assert {t.task for t in result.tasks} == set(catalogue.tasks)
    for task in result.tasks:
        assert task.score == 0, describe(result, {task.task})
    assert result.score == 0


def check_the_charge(entry: dict[str, Any], result: Any) -> None:
    """The entry's task lost points, with feedback naming the mistake, in exactly its `fails`."""
    broken = result.task(entry["task"])
    assert broken.score < broken.max_score, f"{entry['id']} ({entry['why']}) was not caught:\n" + describe(
        result, {entry["task"]}
    )
    feedback = task_feedback(broken).lower()
    missing = [k for k in entry["feedback"] if k.lower() not in feedback]
    assert not missing, f"{entry['id']}: feedback lacks {missing}:\n" + describe(result, {entry["task"]})
    failed = {c.check_id for c in broken.checks if not c.passed}
    cascade = sorted(failed & set(entry["must_not_fail"]))
    assert not cascade, f"{entry['id']}: one mistake charged again in {cascade}:\n" + describe(
        result, {entry["task"]})
    assert failed == set(entry["fails"]), (
        f"{entry['id']}: failed {sorted(failed)}, the catalogue says exactly {sorted(entry['fails'])}:\n"
        + describe(result, {entry["task"]}))


@pytest.mark.parametrize(("cat", "entry"), WRONG, ids=WRONG_IDS)
def test_wrong_submission_is_caught(assignment_grader, tmp_path, cat, entry):
    grader = assignment_grader(cat.assignment)
    submission = build_wrong(cat, entry, tmp_path / entry["id"])
    importers = dependents(grader.assignment, entry["task"])  # they use its function, mistake and all
    touched = frozenset({entry["task"], *importers})
    result = grader.grade(submission, student=entry["id"], plan=PlainPlan(touched))
    assert {t.task for t in result.tasks} == touched
    check_the_charge(entry, result)


@pytest.mark.parametrize(("cat", "entry"), FIRST, ids=FIRST_IDS)
def test_a_mistake_costs_no_other_task(assignment_grader, tmp_path, cat, entry):
    """Graded in full, the first entry of each task: its charge is the same, and every task that does
    not import its file keeps full marks."""
    grader = assignment_grader(cat.assignment)
    submission = build_wrong(cat, entry, tmp_path / entry["id"])
    result = grader.grade(submission, student=entry["id"])
    assert {t.task for t in result.tasks} == set(cat.tasks)
    check_the_charge(entry, result)
    importers = dependents(grader.assignment, entry["task"])
    others = [t for t in result.tasks if t.task != entry["task"] and t.task not in importers
              and t.score != t.max_score]
    assert not others, f"{entry['id']} cost points in other tasks:\n" + describe(
        result, {t.task for t in others}
    )


def test_every_task_has_an_entry_graded_in_full():
    for cat in CATALOGUES.values():
        assert {e["task"] for c, e in FIRST if c is cat} == set(cat.tasks), cat.assignment


@pytest.mark.parametrize(("cat", "variant"), VARIANTS, ids=VARIANT_IDS)
def test_correct_variant_scores_full_marks(assignment_grader, tmp_path, cat, variant):
    grader = assignment_grader(cat.assignment)
    submission = build_variant(cat, variant, tmp_path / variant.name)
    result = grader.grade(submission, student=variant.name)
    assert result.score == result.max_score == total_points(cat), describe(result)
