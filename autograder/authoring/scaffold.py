"""`autograder new`: scaffold an assignment that builds and grades before its author writes a line."""

from __future__ import annotations

import keyword
import re
import secrets
import tomllib
from dataclasses import dataclass
from pathlib import Path

import jinja2

from autograder.checks import CHALLENGE_KEY
from autograder.errors import ConfigError
from autograder.submissions.files import shadowed_names

TEMPLATES = Path(__file__).resolve().parents[1] / "templates" / "scaffold"
# Lower-case Python names: ids become folder and section names, tasks become file and probe names.
NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")
# Names a task cannot take: files the kit itself puts beside the student's, and probe helpers.
RESERVED_TASKS = frozenset({"data", "conftest", "support", "params", "probes", "compare", "checks"})

# Template -> path under solutions/<id>/ ("{task}" repeats it per task).
PER_ASSIGNMENT = {
    "graders__init__.py.j2": "graders/__init__.py",
    "conftest.py.j2": "graders/conftest.py",
    "params.py.j2": "graders/params.py",
    "package_init.py.j2": "graders/public/__init__.py",
    "ref.py.j2": "graders/hidden/_ref.py",
    "contract.toml.j2": "graders/hidden/contract.toml",
    "en.toml.j2": "graders/messages/en.toml",
    "bn.toml.j2": "graders/messages/bn.toml",
    "notebook_conftest.py.j2": "graders/notebook/conftest.py",
    "misconceptions.toml.j2": "graders/misconceptions.toml",
    "correct_readme.md.j2": "graders/correct/README.md",
}
PER_TASK = {
    "task.py.j2": "{task}.py",
    "probes.py.j2": "graders/probes/{task}.py",
    "public_test.py.j2": "graders/public/test_{task}.py",
    "hidden_test.py.j2": "graders/hidden/test_{task}.py",
    "notebook_test.py.j2": "graders/notebook/test_{task}.py",
    "correct_task.py.j2": "graders/correct/{task}_added/{task}.py",
}


@dataclass(frozen=True)
class Scaffold:
    """What `autograder new` wrote: the assignment's files and the grading.toml it extended."""

    assignment: str
    files: tuple[Path, ...]
    grading_toml: Path


def _check_name(name: str, what: str) -> None:
    if not NAME.fullmatch(name) or keyword.iskeyword(name):
        raise ConfigError(
            f"{what} {name!r} is not a valid name: use lower-case letters, digits and _ (a Python "
            "identifier starting with a letter, at most 40 characters), e.g. 'tensor_basics'"
        )


def check_names(assignment_id: str, tasks: list[str]) -> None:
    """ConfigError naming the bad id or task (and the fix) unless all of them can be used."""
    _check_name(assignment_id, "assignment id")
    if not tasks:
        raise ConfigError("no tasks: pass them like --tasks tensors,autograd")
    for task in tasks:
        _check_name(task, "task name")
        if task in RESERVED_TASKS or task in shadowed_names() or task == assignment_id:
            raise ConfigError(
                f"task name {task!r} is taken: a student file {task}.py would "
                + ("shadow an installed module" if task in shadowed_names() else "clash with the kit's files")
                + "; pick another name"
            )
    twice = sorted({t for t in tasks if tasks.count(t) > 1})
    if twice:
        raise ConfigError(f"task {twice[0]!r} is named twice in --tasks")


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES), undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True, autoescape=False,
    )


def render(assignment_id: str, tasks: list[str], title: str = "") -> dict[str, str]:
    """The scaffold's files (path under solutions/<id>/ -> text) and "grading.toml" (its section)."""
    check_names(assignment_id, tasks)
    env = _environment()
    context = {"id": assignment_id, "tasks": tasks, "title": title or assignment_id.replace("_", " ")}
    files = {path: env.get_template(name).render(**context) for name, path in PER_ASSIGNMENT.items()}
    files["graders/hidden/__init__.py"] = ""
    for task in tasks:
        for name, pattern in PER_TASK.items():
            files[pattern.format(task=task)] = env.get_template(name).render(**context, task=task)
    files["grading.toml"] = env.get_template("grading.toml.j2").render(**context)
    return files


def placeholder_catalogue(assignment_id: str, tasks: list[str]) -> list[dict[str, object]]:
    """The [[wrong]] entries `autograder new` writes for these tasks (doctor tells them apart)."""
    text = _environment().get_template("misconceptions.toml.j2").render(
        id=assignment_id, tasks=tasks, title=assignment_id)
    return list(tomllib.loads(text).get("wrong", []))


def scaffold_assignment(kit_root: Path, assignment_id: str, tasks: list[str], title: str = "") -> Scaffold:
    """Write solutions/<id>/ and append its section to grading.toml; refuse an id already in use."""
    kit_root = Path(kit_root)
    toml_path = kit_root / "grading.toml"
    try:
        declared = tomllib.loads(toml_path.read_text(encoding="utf-8")).get("assignments", {})
    except FileNotFoundError:
        raise ConfigError(f"{toml_path} not found: run `autograder new` in the kit's folder") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{toml_path}: {exc}") from None
    files = render(assignment_id, tasks, title)
    folder = kit_root / "solutions" / assignment_id
    if assignment_id in declared:
        raise ConfigError(f"{toml_path} already declares [assignments.{assignment_id}]: pick a new id")
    if folder.exists() or (kit_root / "assignments" / assignment_id).exists():
        raise ConfigError(f"{folder} (or assignments/{assignment_id}) already exists: pick a new id "
                          "or move the folder away")
    section = files.pop("grading.toml")
    files[f"graders/{CHALLENGE_KEY}"] = secrets.token_hex(32) + "\n"  # its own, never a template's
    text = toml_path.read_text(encoding="utf-8")
    merged = text + ("" if text.endswith("\n") else "\n") + section
    tomllib.loads(merged)  # the appended section must leave grading.toml valid before anything is written
    written = []
    for rel, body in sorted(files.items()):
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
        written.append(path)
    toml_path.write_text(merged, encoding="utf-8")
    return Scaffold(assignment_id, tuple(written), toml_path)
