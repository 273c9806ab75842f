"""What an author may leave out of the contract and the catalogue of mistakes, and what it then is.

The short forms (issue #46), each derived from what the files already say:
- `graders/hidden/contract.toml`: a task's `[<task>.paths]` may be left out when every property lists
  its checks (`proven_by = ["<task>.x", ...]`): one path then, `all`, in the group named after the
  task. A property's `of` is the task's only group when it has one, a `proven_by` list is on the
  group's only path, and `owner` is the first check of `proven_by`. A check missing from
  `[<task>.relies_on]` relies on no other check's property.
- `graders/misconceptions.toml`: an entry's `task` is the one task whose reference its edit applies
  to, `file` is that task's file; `fails` is the owner of the property that names the entry its
  `mutant`, else every check of the task; `must_not_fail` is every other check of the task.
  `[required]` may be left out.
The explicit forms stay valid (the course's two lessons write them out); what cannot be derived is
left as it is, for the rules to name.
"""

from __future__ import annotations

import ast
import copy
import tomllib
from pathlib import Path
from typing import Any

from autograder.config import Assignment

WHOLE_PATH = "all"  # the one path of a task whose contract names none


def _has_points(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", "")
        if name == "points":
            return True
    return False


def check_ids(graders: Path, task: str) -> set[str]:
    """The ids of a task's graded checks (`<task>.<name>`), read from its check files without running them."""
    found = set()
    for kind in ("public", "hidden"):
        path = graders / kind / f"test_{task}.py"
        if not path.is_file():
            continue
        for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test_") \
                    and _has_points(node):
                found.add(f"{task}.{node.name.removeprefix('test_')}")
    return found


def _checks(assignment: Assignment, task: str) -> set[str]:
    return check_ids(assignment.graders, task)


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except tomllib.TOMLDecodeError:
        return {}


def complete_table(table: dict[str, Any], task: str, checks: set[str]) -> dict[str, Any]:
    """One task's contract with the derivable parts filled in (a copy)."""
    table = copy.deepcopy(table)
    props = [p for p in table.get("properties", []) if isinstance(p, dict)]
    if "paths" not in table and props and all(isinstance(p.get("proven_by"), list) for p in props):
        table["paths"] = {WHOLE_PATH: [task, "every input its checks draw"]}
    paths = table.get("paths", {})
    groups: dict[str, list[str]] = {}
    for pid, value in paths.items() if isinstance(paths, dict) else ():
        if isinstance(value, list) and len(value) == 2:
            groups.setdefault(str(value[0]), []).append(pid)
    for prop in props:
        if "of" not in prop and len(groups) == 1:
            prop["of"] = next(iter(groups))
        listed, group = prop.get("proven_by"), groups.get(str(prop.get("of")), [])
        if isinstance(listed, list) and len(group) == 1:
            prop["proven_by"] = {group[0]: listed}
        proven_by = prop.get("proven_by")
        if "owner" not in prop and isinstance(proven_by, dict):
            first = [c for ids in proven_by.values() if isinstance(ids, list) for c in ids]
            if first:
                prop["owner"] = first[0]
    relies = table.setdefault("relies_on", {})
    if isinstance(relies, dict):
        for check in sorted(checks):
            relies.setdefault(check, [])
    return table


def complete_contract(assignment: Assignment, contract: dict[str, Any]) -> dict[str, Any]:
    """The assignment's contract matrix (task -> table) with every derivable part filled in."""
    return {task: complete_table(table, task, _checks(assignment, task)) if isinstance(table, dict) else table
            for task, table in contract.items()}


def load_contract(assignment: Assignment) -> dict[str, Any]:
    """`graders/hidden/contract.toml`, completed ({} without one)."""
    return complete_contract(assignment, _read(assignment.graders / "hidden" / "contract.toml"))


def edit_applies(text: str, replace: Any) -> bool:
    """`replace` ([old, new] pairs) applies to `text`: each `old` found exactly once, in order."""
    if not isinstance(replace, list) or not replace:
        return False
    for pair in replace:
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(s, str) for s in pair)):
            return False
        if text.count(pair[0]) != 1:
            return False
        text = text.replace(pair[0], pair[1])
    return True


def complete_wrong(assignment: Assignment, wrong: list[Any],
                   contract: dict[str, Any]) -> list[dict[str, Any]]:
    """The [[wrong]] entries with `task`, `file`, `fails` and `must_not_fail` derived where left out
    (`contract` completed: its owners say what a mutant fails)."""
    files = {task.id: task.file for task in assignment.tasks}
    texts = {}
    for task_id, name in files.items():
        path = assignment.solutions / name
        texts[task_id] = path.read_text(encoding="utf-8") if path.is_file() else ""
    owners = {(task, prop["mutant"]): prop.get("owner") for task, table in contract.items()
              if isinstance(table, dict) for prop in table.get("properties", [])
              if isinstance(prop, dict) and isinstance(prop.get("mutant"), str)}
    done = []
    for raw in wrong:
        if not isinstance(raw, dict):
            continue
        entry = copy.deepcopy(raw)
        if "task" not in entry:
            fits = [name for name, text in texts.items() if edit_applies(text, entry.get("replace"))]
            if len(fits) == 1:
                entry["task"] = fits[0]
        task = entry.get("task")
        if isinstance(task, str) and task in files:
            entry.setdefault("file", files[task])
            checks = sorted(_checks(assignment, task))
            owner = owners.get((task, entry.get("id")))
            entry.setdefault("fails", [owner] if isinstance(owner, str) else checks)
            if isinstance(entry["fails"], list):
                entry.setdefault("must_not_fail", [c for c in checks if c not in entry["fails"]])
        done.append(entry)
    return done


def load_wrong(assignment: Assignment) -> list[dict[str, Any]]:
    """The [[wrong]] entries of `graders/misconceptions.toml`, completed ([] without one)."""
    data = _read(assignment.graders / "misconceptions.toml")
    return complete_wrong(assignment, data.get("wrong", []), load_contract(assignment))
