"""The contract matrix of every assignment (solutions/<id>/graders/hidden/contract.toml) is complete.

For every task: each property the assignment's SPEC states is proven on every path of its group (or
the matrix says why it does not hold there), by checks that exist among the graders' checks as the
engine loads them; every check proves something; every check says which properties it relies on
(`relies_on`: of its own task, never one it proves itself); the private matrix is never shipped.
One mistake, one charge (issue #34): every property names its one owning check (`owner`, a check that
proves it) and the catalogued mistake that breaks it alone (`mutant`, an entry of the task's
graders/misconceptions.toml whose `fails` is exactly the owner; tests/test_catalogue.py grades it), a
different one per property; a property no single mistake can break without a second check says why
(`shared`, the reason), and a path where a property holds but is argued rather than checked says its
argument (`not_on` = "HOLDS, argued not checked: ..."). Those reasons in the assignment's own contract
are its decisions: every test here takes the assignment, so `pytest tests -k <id>` runs them all.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from kit_assignments import ASSIGNMENTS

from autograder.authoring import catalogue_forms
from autograder.authoring.catalogue_forms import complete_contract
from autograder.config import Kit, load_kit
from autograder.grading.course import load_graders

ROOT = Path(__file__).resolve().parents[1]
PROPERTY_KEYS = {"id", "of", "says", "proven_by", "not_on", "owner", "mutant", "shared"}
TABLE_KEYS = {"paths", "properties", "relies_on", "answers_are_data"}


def matrix_path(assignment: str) -> Path:
    return ROOT / "solutions" / assignment / "graders" / "hidden" / "contract.toml"


def load_matrix(assignment: str) -> dict[str, Any]:
    """The matrix with what its short forms leave out derived (autograder/authoring/catalogue_forms.py)."""
    with matrix_path(assignment).open("rb") as f:
        return complete_contract(KIT.assignment(assignment), tomllib.load(f))


def load_wrong(assignment: str) -> list[dict[str, Any]]:
    """The [[wrong]] entries of the assignment's graders/misconceptions.toml, completed (none without one)."""
    return catalogue_forms.load_wrong(KIT.assignment(assignment))


KIT = load_kit(ROOT)


CONTRACTS = {assignment: load_matrix(assignment) for assignment in ASSIGNMENTS}
WRONG = {assignment: load_wrong(assignment) for assignment in ASSIGNMENTS}
TASKS = [(a, task) for a in ASSIGNMENTS for task in sorted(CONTRACTS[a])]
TASK_IDS = [f"{a}:{task}" for a, task in TASKS]


@pytest.fixture(scope="module")
def checks(kit: Kit) -> dict[str, dict[str, set[str]]]:
    """assignment -> task -> ids of its checks, loaded as the engine loads them (test_* with @points)."""
    found = {}
    for assignment in ASSIGNMENTS:
        graders = load_graders(kit.assignment(assignment))
        found[assignment] = {task: {c.id for c in cs} for task, cs in graders.checks.items()}
    return found


def _properties(table: dict[str, Any]) -> list[dict[str, Any]]:
    return table.get("properties", [])


def answers_are_data(assignment: str) -> dict[str, float]:
    """Check id -> the points a replay of the reference's answers earns ([<task>.answers_are_data])."""
    return {check: float(points) for table in CONTRACTS[assignment].values()
            for check, points in table.get("answers_are_data", {}).items()}


def proven(table: dict[str, Any]) -> dict[str, set[str]]:
    """check id -> the properties of the task it proves (on some path)."""
    found: dict[str, set[str]] = {}
    for prop in _properties(table):
        for ids in prop["proven_by"].values():
            for check in ids:
                found.setdefault(check, set()).add(prop["id"])
    return found


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_assignment_has_a_matrix_of_every_task(kit: Kit, assignment: str):
    assert matrix_path(assignment).is_file(), f"{assignment} has no graders/hidden/contract.toml"
    tasks = {t.id for t in kit.assignment(assignment).tasks}
    contract = CONTRACTS[assignment]
    assert set(contract) == tasks, (
        f"{assignment}: tasks without a matrix: {tasks - set(contract)}; "
        f"unknown tasks: {set(contract) - tasks}"
    )


@pytest.mark.parametrize(("assignment", "task"), TASKS, ids=TASK_IDS)
def test_matrix_is_well_formed(assignment, task):
    table = CONTRACTS[assignment][task]
    assert set(table) <= TABLE_KEYS, f"{task}: unknown tables {sorted(set(table) - TABLE_KEYS)}"
    paths = table.get("paths", {})
    assert paths, f"{task}: no [{task}.paths]"
    for pid, value in paths.items():
        assert isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) and v for v in value), (
            f"{task}.paths.{pid} must be [group, description]"
        )
    props = _properties(table)
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
    for check, points in table.get("answers_are_data", {}).items():
        assert check in table.get("relies_on", {}), f"{task}.answers_are_data: {check} is not a check"
        assert isinstance(points, int | float) and points > 0, f"{task}.answers_are_data.{check}: {points!r}"


def path_gaps(table: dict[str, Any], task: str) -> list[str]:
    """(property, path) pairs of one task's matrix with neither a check nor a not_on reason."""
    paths = table["paths"]
    gaps = []
    for prop in table.get("properties", []):
        where = f"{task}.{prop['id']}"
        group = [pid for pid, (g, _) in paths.items() if g == prop["of"]]
        proven_by, not_on = prop["proven_by"], prop.get("not_on", {})
        stray = sorted((set(proven_by) | set(not_on)) - set(group))
        assert not stray, f"{where}: paths {stray} are not paths of group {prop['of']!r}"
        both = sorted(set(proven_by) & set(not_on))
        assert not both, f"{where}: paths {both} are both proven and excluded"
        gaps += [f"{where} on {pid} ({paths[pid][1]})" for pid in group
                 if pid not in not_on and not proven_by.get(pid)]
    return gaps


def unknown_checks(table: dict[str, Any], task: str, known: set[str]) -> list[str]:
    """Check ids named in one task's matrix that are not checks of that task."""
    unknown = []
    for prop in table.get("properties", []):
        for pid, ids in prop["proven_by"].items():
            where = f"{task}.{prop['id']}.{pid}"
            assert isinstance(ids, list) and all(isinstance(i, str) for i in ids), where
            unknown += [f"{task}.{prop['id']} on {pid}: {i}" for i in ids if i not in known]
    unknown += [f"{task}.relies_on: {i}" for i in table.get("relies_on", {}) if i not in known]
    return unknown


def reliance_problems(table: dict[str, Any], task: str, known: set[str]) -> list[str]:
    """What is wrong with a task's [relies_on] table: a check missing from it, a property that is not
    the task's, a check that relies on a property it proves itself."""
    relies = table.get("relies_on", {})
    props = {p["id"] for p in _properties(table)}
    own = proven(table)
    problems = [f"{check}: not in [{task}.relies_on]" for check in sorted(known - set(relies))]
    for check, needs in relies.items():
        if not isinstance(needs, list) or not all(isinstance(n, str) for n in needs):
            problems.append(f"{check}: relies_on must be a list of property ids")
            continue
        problems += [f"{check}: relies on {n!r}, not a property of {task}" for n in needs if n not in props]
        problems += [f"{check}: relies on {n!r}, which it proves itself"
                     for n in needs if n in own.get(check, ())]
    return problems


@pytest.mark.parametrize(("assignment", "task"), TASKS, ids=TASK_IDS)
def test_every_property_is_proven_on_every_path(assignment, task):
    """Each path of a property's group has checks, or a reason why the property does not hold there."""
    gaps = path_gaps(CONTRACTS[assignment][task], task)
    assert not gaps, "properties with a path no check proves:\n  " + "\n  ".join(gaps)


def test_the_completeness_rules_catch_gaps():
    """The rules themselves: a path left out, an empty list, a misspelt check id and a bad reliance
    are reported."""
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
    assert reliance_problems(table, "t", {"t.one"}) == ["t.one: not in [t.relies_on]"]
    table["relies_on"] = {"t.one": ["p", "q"]}
    assert reliance_problems(table, "t", {"t.one"}) == [
        "t.one: relies on 'q', not a property of t", "t.one: relies on 'p', which it proves itself"]
    table["relies_on"] = {"t.one": []}
    assert reliance_problems(table, "t", {"t.one"}) == []


@pytest.mark.parametrize(("assignment", "task"), TASKS, ids=TASK_IDS)
def test_named_checks_exist(assignment, task, checks):
    """Every check id of the matrix is a check the engine loads for that very task."""
    unknown = unknown_checks(CONTRACTS[assignment][task], task, checks[assignment].get(task, set()))
    assert not unknown, (
        "check ids that are not checks of the task (a test_* function with @points in "
        f"public/ or hidden/test_{task}.py):\n  " + "\n  ".join(unknown)
    )


@pytest.mark.parametrize(("assignment", "task"), TASKS, ids=TASK_IDS)
def test_every_check_proves_something(assignment, task, checks):
    named = set(proven(CONTRACTS[assignment][task]))
    idle = sorted(checks[assignment][task] - named)
    assert not idle, f"checks of {task} that prove no property of the matrix: {idle}"


@pytest.mark.parametrize(("assignment", "task"), TASKS, ids=TASK_IDS)
def test_every_check_says_what_it_relies_on(assignment, task, checks):
    problems = reliance_problems(CONTRACTS[assignment][task], task, checks[assignment][task])
    assert not problems, "\n  ".join(["[relies_on] problems:", *problems])


def ownership_problems(table: dict[str, Any], task: str, wrong: list[dict[str, Any]]) -> list[str]:
    """What keeps one task's properties from having one owner each, proved by a mistake of their own:
    an owner missing or not a check that proves the property; neither a mutant nor a `shared` reason
    (or both); a mutant that is not an entry of the task, or whose `fails` is not exactly the owner;
    one mutant named for two properties."""
    entries = {e.get("id"): e for e in wrong if e.get("task") == task}
    problems, seen = [], {}
    for prop in _properties(table):
        where = f"{task}.{prop['id']}"
        owner, mutant, shared = prop.get("owner"), prop.get("mutant"), prop.get("shared")
        proving = {check for ids in prop["proven_by"].values() for check in ids}
        if not isinstance(owner, str) or owner not in proving:
            problems.append(f"{where}: owner {owner!r} is not one of the checks proving it {sorted(proving)}")
        if (mutant is None) == (shared is None):
            problems.append(
                f"{where}: needs exactly one of mutant (a catalogued mistake) and shared (why none)")
            continue
        if shared is not None:
            if not isinstance(shared, str) or not shared.strip():
                problems.append(f"{where}: shared must say why no single mistake breaks it alone")
            continue
        entry = entries.get(mutant)
        if entry is None:
            problems.append(f"{where}: mutant {mutant!r} is not a [[wrong]] entry of task {task}")
        elif entry.get("fails") != [owner]:
            problems.append(f"{where}: mutant {mutant!r} fails {entry.get('fails')}, not exactly [{owner!r}]")
        if mutant in seen:
            problems.append(f"{where}: mutant {mutant!r} is already {seen[mutant]}'s: "
                            "one mutant per property")
        seen[mutant] = where
    return problems


@pytest.mark.parametrize(("assignment", "task"), TASKS, ids=TASK_IDS)
def test_every_property_has_one_owner_proved_by_a_mutant(assignment, task, checks):
    """Each property: its one owning check (a check the engine loads), and a catalogued mistake that
    breaks it alone and fails exactly that check (tests/test_catalogue.py grades every entry and holds
    it to its `fails`)."""
    table = CONTRACTS[assignment][task]
    loaded = checks[assignment].get(task, set())
    problems = [f"{task}.{prop['id']}: owner {prop.get('owner')!r} is not a check the engine loads"
                for prop in _properties(table) if prop.get("owner") not in loaded]
    problems += ownership_problems(table, task, WRONG[assignment])
    assert not problems, "properties without an owner proved by a mutant:\n  " + "\n  ".join(problems)


def test_the_ownership_rules_catch_gaps():
    """The rules themselves: no owner, an owner that does not prove it, no mutant, a mutant that fails
    another check too or is not the task's, one mutant for two properties."""
    def prop(pid, **more):
        return {"id": pid, "of": "f", "says": "...", "proven_by": {"a": ["t.one"], "b": ["t.two"]}, **more}

    wrong = [{"id": "m1", "task": "t", "fails": ["t.one"]},
             {"id": "m2", "task": "t", "fails": ["t.one", "t.two"]},
             {"id": "m3", "task": "u", "fails": ["t.two"]}]
    table = {"properties": [prop("p", owner="t.one", mutant="m1")]}
    assert ownership_problems(table, "t", wrong) == []
    table = {"properties": [prop("p", mutant="m1"), prop("q", owner="t.three", mutant="m1")]}
    assert ownership_problems(table, "t", wrong) == [
        "t.p: owner None is not one of the checks proving it ['t.one', 't.two']",
        "t.p: mutant 'm1' fails ['t.one'], not exactly [None]",
        "t.q: owner 't.three' is not one of the checks proving it ['t.one', 't.two']",
        "t.q: mutant 'm1' fails ['t.one'], not exactly ['t.three']",
        "t.q: mutant 'm1' is already t.p's: one mutant per property"]
    table = {"properties": [prop("p", owner="t.one"), prop("q", owner="t.one", mutant="m2"),
                            prop("r", owner="t.two", mutant="m3"), prop("s", owner="t.two", shared="why")]}
    assert ownership_problems(table, "t", wrong) == [
        "t.p: needs exactly one of mutant (a catalogued mistake) and shared (why none)",
        "t.q: mutant 'm2' fails ['t.one', 't.two'], not exactly ['t.one']",
        "t.r: mutant 'm3' is not a [[wrong]] entry of task t"]


ARGUED = "HOLDS, argued not checked: "


def argued_problems(table: dict[str, Any], task: str) -> list[str]:
    """A `not_on` reason starting with HOLDS (the property holds there, argued from other checks instead
    of checked) must be ARGUED and then say why: that reason, in the assignment's own contract, is the
    decision (like a `shared` reason), never a list in the kit's tests."""
    return [f"{task}.{prop['id']} on {pid}: a HOLDS reason reads {ARGUED!r} and then the argument"
            for prop in _properties(table) for pid, reason in prop.get("not_on", {}).items()
            if reason.startswith("HOLDS") and not _argues(reason)]


def _argues(reason: str) -> bool:
    return reason.startswith(ARGUED) and bool(reason.removeprefix(ARGUED).strip())


@pytest.mark.parametrize(("assignment", "task"), TASKS, ids=TASK_IDS)
def test_every_argued_path_says_its_argument(assignment, task):
    problems = argued_problems(CONTRACTS[assignment][task], task)
    assert not problems, "\n  ".join(["argued, not checked, without an argument:", *problems])


def test_the_argued_rule_catches_a_bare_holds():
    table = {"properties": [{"id": "p", "not_on": {"a": "HOLDS", "b": ARGUED + " ", "c": ARGUED + "why",
                                                   "d": "does not hold here"}}]}
    assert argued_problems(table, "t") == [
        f"t.p on {pid}: a HOLDS reason reads {ARGUED!r} and then the argument" for pid in ("a", "b")]


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_matrix_is_not_shipped(assignment):
    """The matrix names hidden checks: `autograder build` must not copy it to the students' checks."""
    shipped = ROOT / "assignments" / assignment / "checks"
    assert not list(shipped.rglob("contract*")), f"{assignment}'s contract matrix was shipped to students"
    assert matrix_path(assignment).parent.name == "hidden"
