"""Hidden challenges: the secret, the seeds it hides, the `challenge` generator, the built folders."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import numpy as np
from conftest import ROOT

from autograder.checks import CHALLENGE_KEY
from autograder.config import load_kit
from autograder.grading.challenge import Challenge, graders_secret, hide_seeds
from autograder.grading.course import load_graders


@dataclasses.dataclass(frozen=True)
class Inner:
    seed: int = 1
    toy_seed: int = 0
    width: int = 8


@dataclasses.dataclass(frozen=True)
class Outer:
    inner: Inner = Inner()
    input_seeds: tuple[int, ...] = (3, 4)
    sizes: tuple[int, ...] = (3, 4)


def test_the_key_is_the_secret_and_editing_the_graders_keeps_it(tmp_path: Path) -> None:
    folder = tmp_path / "graders"
    shutil.copytree(ROOT / "solutions" / "nn_module" / "graders", folder)
    with_key = graders_secret(folder)
    (folder / "messages" / "en.toml").write_text("# reworded\n", encoding="utf-8")
    assert graders_secret(folder) == with_key  # a message edited: the same hidden inputs
    (folder / CHALLENGE_KEY).write_text("another key\n", encoding="utf-8")
    assert graders_secret(folder) != with_key
    (folder / CHALLENGE_KEY).unlink()
    without = graders_secret(folder)  # no key: every file of the folder, so an edit changes it
    (folder / "params.py").write_text("# changed\n", encoding="utf-8")
    assert graders_secret(folder) != without
    edited = graders_secret(folder)
    (folder / "__pycache__").mkdir(exist_ok=True)
    (folder / "__pycache__" / "x.pyc").write_bytes(b"cache")
    (folder / ".hypothesis").mkdir(exist_ok=True)
    (folder / ".hypothesis" / "db").write_bytes(b"local")
    assert graders_secret(folder) == edited  # caches and dotfiles are not the graders


def test_students_never_get_the_key_and_their_checks_draw_other_inputs() -> None:
    kit = load_kit(ROOT)
    for assignment in kit.assignments.values():
        if not (ROOT / "assignments" / assignment.id / "checks").is_dir():
            continue  # an exam: it has bundles, built per student
        assert (assignment.graders / CHALLENGE_KEY).is_file(), assignment.id
        shipped = ROOT / "assignments" / assignment.id / "checks"
        assert not list(shipped.rglob("challenge.key"))
        assert graders_secret(shipped) != graders_secret(assignment.graders)


def test_seeds_are_hidden_and_the_rest_kept() -> None:
    params = Outer()
    hidden = hide_seeds(params, b"secret", ("inner.toy_seed",))
    assert hidden.inner.width == 8 and hidden.sizes == (3, 4) and hidden.inner.toy_seed == 0
    assert hidden.inner.seed != 1 and len(set(hidden.input_seeds)) == 2 and hidden.input_seeds != (3, 4)
    assert hide_seeds(hidden, b"secret", ("inner.toy_seed",)) == hidden  # hiding twice is hiding once
    other = hide_seeds(params, b"another", ("inner.toy_seed",))
    assert other.inner.seed != hidden.inner.seed and other.input_seeds != hidden.input_seeds


def test_a_challenge_draws_by_secret_check_and_labels() -> None:
    a = Challenge(b"secret", "tinynet.registration")
    same = Challenge(b"secret", "tinynet.registration").rng(3, 8, 2).normal(size=4)
    assert np.array_equal(a.rng(3, 8, 2).normal(size=4), same)  # a fresh generator every time
    assert not np.array_equal(a.rng(3, 8, 3).normal(size=4), same)
    assert not np.array_equal(Challenge(b"secret", "tinynet.weight_shapes").rng(3, 8, 2).normal(size=4), same)
    assert not np.array_equal(Challenge(b"other", "tinynet.registration").rng(3, 8, 2).normal(size=4), same)
    assert repr(a) == "challenge" and "secret" not in repr(a)


def test_the_graders_judge_with_hidden_seeds_and_another_secret_moves_them() -> None:
    graders = load_graders(load_kit(ROOT).assignment("nn_module"))
    lesson = graders.module("params").default()
    assert graders.params.tinynet.toy_seed == lesson.tinynet.toy_seed  # PUBLIC_SEEDS: the lesson's data
    assert graders.params.tinynet.init_seed != lesson.tinynet.init_seed
    assert graders.params.tinynet.hidden == lesson.tinynet.hidden
    moved = graders.with_secret(b"guess")
    assert moved.params.tinynet.init_seed != graders.params.tinynet.init_seed
    assert moved.with_secret(graders.secret).params == graders.params
