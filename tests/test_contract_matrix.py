"""The contract matrix of nn_module (solutions/nn_module/graders/hidden/contract.toml) is complete.

For every task: each property SPEC.md states is proven on every path of its group (or the matrix
says why it does not hold there), by checks that exist among the graders' checks as the engine loads
them; every check proves something; the private matrix is never shipped to students.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from autograder.config import Kit
from autograder.grading.course import load_graders

ROOT = Path(__file__).resolve().parents[1]
MATRIX = ROOT / "solutions" / "nn_module" / "graders" / "hidden" / "contract.toml"
SHIPPED = ROOT / "assignments" / "nn_module" / "checks"
PROPERTY_KEYS = {"id", "of", "says", "proven_by", "not_on"}


def _load() -> dict[str, Any]:
    with MATRIX.open("rb") as f:
        return tomllib.load(f)


CONTRACT = _load()
TASKS = sorted(CONTRACT)


@pytest.fixture(scope="module")
def checks(kit: Kit) -> dict[str, set[str]]:
    """task -> ids of its checks, loaded as the engine loads them (test_* with @points only)."""
    graders = load_graders(kit.assignment())
    return {task: {c.id for c in found} for task, found in graders.checks.items()}


def _properties(task: str) -> list[dict[str, Any]]:
    return CONTRACT[task].get("properties", [])


def test_every_task_has_a_matrix(kit: Kit):
    tasks = {t.id for t in kit.assignment().tasks}
    assert set(CONTRACT) == tasks, (
        f"tasks without a matrix: {tasks - set(CONTRACT)}; unknown tasks: {set(CONTRACT) - tasks}"
    )


@pytest.mark.parametrize("task", TASKS)
def test_matrix_is_well_formed(task):
    paths = CONTRACT[task].get("paths", {})
    assert paths, f"{task}: no [{task}.paths]"
    for pid, value in paths.items():
        assert isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) and v for v in value), (
            f"{task}.paths.{pid} must be [group, description]"
        )
    props = _properties(task)
    assert props, f"{task}: no [[{task}.properties]]"
    ids = [p.get("id") for p in props]
    assert len(ids) == len(set(ids)), f"{task}: duplicate property ids {ids}"
    groups = {group for group, _ in paths.values()}
    for prop in props:
        where = f"{task}.{prop.get('id')}"
        assert set(prop) <= PROPERTY_KEYS and {"id", "of", "says", "proven_by"} <= set(prop), (
            f"{where}: keys {sorted(prop)}"
        )
        assert prop["of"] in groups, f"{where}: of = {prop['of']!r} is not a group of {task}.paths ({groups})"
        assert isinstance(prop["says"], str) and prop["says"].strip(), where
        for pid, reason in prop.get("not_on", {}).items():
            assert isinstance(reason, str) and reason.strip(), f"{where}: not_on.{pid} needs a reason"


def path_gaps(table: dict[str, Any], task: str) -> list[str]:
    """(property, path) pairs of one task's matrix with neither a check nor a not_on reason."""
    paths = table["paths"]
    gaps = []
    for prop in table.get("properties", []):
        where = f"{task}.{prop['id']}"
        group = [pid for pid, (g, _) in paths.items() if g == prop["of"]]
        proven, not_on = prop["proven_by"], prop.get("not_on", {})
        stray = sorted((set(proven) | set(not_on)) - set(group))
        assert not stray, f"{where}: paths {stray} are not paths of group {prop['of']!r}"
        both = sorted(set(proven) & set(not_on))
        assert not both, f"{where}: paths {both} are both proven and excluded"
        gaps += [f"{where} on {pid} ({paths[pid][1]})" for pid in group
                 if pid not in not_on and not proven.get(pid)]
    return gaps


def unknown_checks(table: dict[str, Any], task: str, known: set[str]) -> list[str]:
    """Check ids named in one task's matrix that are not checks of that task."""
    unknown = []
    for prop in table.get("properties", []):
        for pid, ids in prop["proven_by"].items():
            where = f"{task}.{prop['id']}.{pid}"
            assert isinstance(ids, list) and all(isinstance(i, str) for i in ids), where
            unknown += [f"{task}.{prop['id']} on {pid}: {i}" for i in ids if i not in known]
    return unknown


@pytest.mark.parametrize("task", TASKS)
def test_every_property_is_proven_on_every_path(task):
    """Each path of a property's group has checks, or a reason why the property does not hold there."""
    gaps = path_gaps(CONTRACT[task], task)
    assert not gaps, "properties with a path no check proves:\n  " + "\n  ".join(gaps)


def test_the_completeness_rules_catch_gaps():
    """The rules themselves: a path left out, an empty list and a misspelt check id are reported."""
    table = {
        "paths": {"a": ["f", "path a"], "b": ["f", "path b"], "c": ["f", "path c"], "z": ["g", "other"]},
        "properties": [{"id": "p", "of": "f", "says": "...", "proven_by": {"a": ["t.one"], "b": []},
                        "not_on": {}}],
    }
    assert path_gaps(table, "t") == ["t.p on b (path b)", "t.p on c (path c)"]
    assert unknown_checks(table, "t", {"t.one"}) == []
    assert unknown_checks(table, "t", {"t.on"}) == ["t.p on a: t.one"]
    del table["properties"][0]["proven_by"]["b"]
    table["properties"][0]["not_on"] = {"b": "does not hold", "c": "does not hold"}
    assert path_gaps(table, "t") == []


@pytest.mark.parametrize("task", TASKS)
def test_named_checks_exist(task, checks):
    """Every check id of the matrix is a check the engine loads for that very task."""
    unknown = unknown_checks(CONTRACT[task], task, checks.get(task, set()))
    assert not unknown, (
        "check ids that are not checks of the task (a test_* function with @points in "
        f"public/ or hidden/test_{task}.py):\n  " + "\n  ".join(unknown)
    )


@pytest.mark.parametrize("task", TASKS)
def test_every_check_proves_something(task, checks):
    named = {i for prop in _properties(task) for ids in prop["proven_by"].values() for i in ids}
    idle = sorted(checks[task] - named)
    assert not idle, f"checks of {task} that prove no property of the matrix: {idle}"


# Pairs where the property holds but the matrix argues it from other checks instead of checking it on
# that path (`not_on` reason "HOLDS, argued not checked: ..."): known gaps, listed here on purpose so
# that a new one is a decision, not an accident.
ARGUED = {
    ("dropout", "statistics", "train_again"),  # 128 values of the modes check: too few for statistics
    ("dropout", "rng_only", "train_again"),  # the same layer and rng as train_mid after train()
}


def test_argued_pairs_are_the_known_ones():
    argued = {
        (task, prop["id"], pid)
        for task in TASKS
        for prop in _properties(task)
        for pid, reason in prop.get("not_on", {}).items()
        if reason.startswith("HOLDS")
    }
    assert argued == ARGUED, (
        f"new argued pairs: {sorted(argued - ARGUED)}; now checked: {sorted(ARGUED - argued)}"
    )


def test_matrix_is_not_shipped():
    """The matrix names hidden checks: `autograder build` must not copy it to the students' checks."""
    assert not list(SHIPPED.rglob("contract*")), "the contract matrix was shipped to students"
    assert MATRIX.parent.name == "hidden"
