"""Proof that the graders work: a catalogue of wrong and correct submissions, graded end to end.

`tests/catalogue/misconceptions.toml` lists wrong submissions, each a small edit of one reference
file: the task it breaks must lose points with feedback naming the misconception, and every other
task must keep full marks. `tests/catalogue/correct/<variant>/` holds correct files written in
other styles: overlaid on the reference they must score 100. The reference scores 100 and the
stubs score 0.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT = "nn_module"
SOLUTIONS = ROOT / "solutions" / ASSIGNMENT
STUBS = ROOT / "assignments" / ASSIGNMENT
CATALOGUE = Path(__file__).resolve().parent / "catalogue"
MISCONCEPTIONS = CATALOGUE / "misconceptions.toml"
CORRECT = CATALOGUE / "correct"

# task -> student file, as in SPEC.md (checked against grading.toml below)
TASK_FILES = {
    "tinynet": "tinynet.py",
    "delivery": "delivery.py",
    "counting": "counting.py",
    "containers": "containers.py",
    "checkpoint": "checkpoint.py",
    "dropout": "dropout.py",
    "numpy_forward": "numpy_forward.py",
}
GIVEN = ["data.py"]

# Every misconception agreed with the grader writer: (task, keyword its feedback must contain).
REQUIRED_KEYWORDS = {
    "tinynet": [
        "super().__init__()",
        "zero_grad",
        "item()",
        "model(X)",
        "(out, in)",
        "ReLU",
        "Adam",
        "epochs",
    ],
    "delivery": [
        "register_buffer",
        "buffer",
        "squeeze(-1)",
        "eval()",
        "no_grad",
        "nn.Sequential",
        "x_mean",
        "state_dict",
        "train mode",
    ],
    "counting": [
        "buffer",
        "tied",
        "requires_grad",
        "bias",
        "ValueError",
        "recurse=False",
        "own parameters",
    ],
    "containers": ["nn.ModuleList", "nn.ModuleDict", "last layer", "late"],
    "checkpoint": ["state_dict", "weights_only", "strict", "exception", "missing"],
    "dropout": [
        "1/(1-p)",
        "eval",
        "in place",
        "mask",
        "rng",
        "keep",
        "p == 1",
        "ValueError",
    ],
    "numpy_forward": ["transpose", "float64", "x_mean", "head", "(N,)"],
}
MIN_WRONG = 45
MIN_CORRECT = 10


def _load_wrong() -> list[dict[str, Any]]:
    with MISCONCEPTIONS.open("rb") as f:
        return tomllib.load(f).get("wrong", [])


def _correct_variants() -> list[Path]:
    return sorted(p for p in CORRECT.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


WRONG = _load_wrong()
VARIANTS = _correct_variants()


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


def copy_reference(dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    for name in [*TASK_FILES.values(), *GIVEN]:
        shutil.copy(SOLUTIONS / name, dest / name)
    return dest


def build_wrong(entry: dict[str, Any], dest: Path) -> Path:
    copy_reference(dest)
    target = dest / entry["file"]
    edited = apply_edit(target.read_text(), entry["replace"], entry["id"])
    assert edited != target.read_text(), f"{entry['id']}: the edit changes nothing"
    target.write_text(edited)
    return dest


def build_variant(variant: Path, dest: Path) -> Path:
    copy_reference(dest)
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


def test_task_files_match_grading_toml():
    with (ROOT / "grading.toml").open("rb") as f:
        tasks = tomllib.load(f)["assignments"][ASSIGNMENT]["tasks"]
    assert {name: t["file"] for name, t in tasks.items()} == TASK_FILES


def test_catalogue_sizes():
    assert len(WRONG) >= MIN_WRONG, f"only {len(WRONG)} wrong submissions, want >= {MIN_WRONG}"
    assert len(VARIANTS) >= MIN_CORRECT, f"only {len(VARIANTS)} correct variants, want >= {MIN_CORRECT}"


def test_catalogue_entries_are_well_formed():
    ids = [e.get("id") for e in WRONG]
    assert len(ids) == len(set(ids)), "duplicate ids in misconceptions.toml"
    for entry in WRONG:
        assert set(entry) == {"id", "task", "file", "replace", "feedback", "why"}, entry.get("id")
        assert entry["task"] in TASK_FILES, entry["id"]
        assert entry["file"] == TASK_FILES[entry["task"]], entry["id"]
        assert entry["replace"] and all(
            isinstance(pair, list) and len(pair) == 2 and all(isinstance(s, str) for s in pair)
            for pair in entry["replace"]
        ), entry["id"]
        assert entry["feedback"] and all(isinstance(k, str) and k for k in entry["feedback"]), entry["id"]
        assert entry["why"].strip(), entry["id"]


def test_every_misconception_is_covered():
    covered = {(e["task"], k.lower()) for e in WRONG for k in e["feedback"]}
    missing = [
        (task, keyword)
        for task, keywords in REQUIRED_KEYWORDS.items()
        for keyword in keywords
        if (task, keyword.lower()) not in covered
    ]
    assert not missing, f"misconceptions without a catalogue entry: {missing}"


def test_every_task_has_correct_variants():
    replaced = {src.stem for v in VARIANTS for src in v.glob("*.py")}
    assert set(TASK_FILES) <= replaced, f"no correct variant for {set(TASK_FILES) - replaced}"


@pytest.mark.parametrize("entry", WRONG, ids=[e["id"] for e in WRONG])
def test_edit_applies_to_reference(entry):
    """Each `old` occurs exactly once in the current reference (a drifted reference is caught)."""
    text = (SOLUTIONS / entry["file"]).read_text()
    assert apply_edit(text, entry["replace"], entry["id"]) != text


# ----------------------------------------------------------------------------- grading


def test_reference_scores_full_marks(grader, tmp_path):
    result = grader.grade(copy_reference(tmp_path / "reference"), student="reference")
    assert result.score == result.max_score == 100, describe(result)
    for task in result.tasks:
        assert task.score == task.max_score, describe(result, {task.task})


def test_stubs_score_zero(grader, tmp_path):
    dest = tmp_path / "stubs"
    dest.mkdir()
    for name in TASK_FILES.values():
        shutil.copy(STUBS / name, dest / name)
    for name in GIVEN:
        shutil.copy(STUBS / name if (STUBS / name).exists() else SOLUTIONS / name, dest / name)
    result = grader.grade(dest, student="stubs")
    assert {t.task for t in result.tasks} == set(TASK_FILES)
    for task in result.tasks:
        assert task.score == 0, describe(result, {task.task})
    assert result.score == 0


@pytest.mark.parametrize("entry", WRONG, ids=[e["id"] for e in WRONG])
def test_wrong_submission_is_caught(grader, tmp_path, entry):
    submission = build_wrong(entry, tmp_path / entry["id"])
    result = grader.grade(submission, student=entry["id"])
    broken = result.task(entry["task"])
    assert broken.score < broken.max_score, f"{entry['id']} ({entry['why']}) was not caught:\n" + describe(
        result, {entry["task"]}
    )
    feedback = task_feedback(broken).lower()
    missing = [k for k in entry["feedback"] if k.lower() not in feedback]
    assert not missing, f"{entry['id']}: feedback lacks {missing}:\n" + describe(result, {entry["task"]})
    others = [t for t in result.tasks if t.task != entry["task"] and t.score != t.max_score]
    assert not others, f"{entry['id']} cost points in other tasks:\n" + describe(
        result, {t.task for t in others}
    )


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_correct_variant_scores_full_marks(grader, tmp_path, variant):
    submission = build_variant(variant, tmp_path / variant.name)
    result = grader.grade(submission, student=variant.name)
    assert result.score == result.max_score == 100, describe(result)
