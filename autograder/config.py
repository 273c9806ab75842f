"""grading.toml, read with tomllib into typed, validated settings."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ConfigError

LANGUAGES = ("en", "bn")


@dataclass(frozen=True)
class TaskConfig:
    """One task: its file, its points and the limits of its worker."""

    id: str
    file: str
    points: float
    time_limit: float = 20.0
    cpu_limit: float = 20.0
    memory_mb: int = 1024
    output_kb: int = 64
    hidden: tuple[str, ...] = ()

    @property
    def module(self) -> str:
        return self.file.removesuffix(".py")


@dataclass(frozen=True)
class Assignment:
    """One assignment: where its content lives, and its tasks in order."""

    id: str
    title: str
    root: Path
    given: tuple[str, ...]
    tasks: tuple[TaskConfig, ...]

    @property
    def solutions(self) -> Path:
        return self.root / "solutions" / self.id

    @property
    def graders(self) -> Path:
        return self.solutions / "graders"

    @property
    def max_score(self) -> float:
        return sum(t.points for t in self.tasks)

    def task(self, task_id: str) -> TaskConfig:
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise ConfigError(f"assignment {self.id!r} has no task {task_id!r}")


@dataclass(frozen=True)
class SandboxConfig:
    uid_base: int = 61000


@dataclass(frozen=True)
class Kit:
    """Everything grading.toml says, plus where the kit lives."""

    root: Path
    default_assignment: str
    language: str
    sandbox: SandboxConfig
    assignments: dict[str, Assignment] = field(default_factory=dict)

    def assignment(self, assignment_id: str | None = None) -> Assignment:
        key = assignment_id or self.default_assignment
        if key not in self.assignments:
            known = ", ".join(sorted(self.assignments)) or "none"
            raise ConfigError(f"unknown assignment {key!r} (grading.toml has: {known})")
        return self.assignments[key]


def _table(data: Any, where: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ConfigError(f"grading.toml: [{where}] must be a table")
    return data


def _check_keys(data: dict[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ConfigError(
            f"grading.toml: unknown key {where}.{unknown[0]} (allowed: {', '.join(sorted(allowed))})"
        )


def _number(data: dict[str, Any], key: str, where: str, default: float | None, positive: bool = True) -> float:
    value = data.get(key, default)
    if value is None:
        raise ConfigError(f"grading.toml: {where}.{key} is required")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"grading.toml: {where}.{key} must be a number, got {value!r}")
    if positive and value <= 0:
        raise ConfigError(f"grading.toml: {where}.{key} must be > 0, got {value!r}")
    return float(value)


def _task(task_id: str, data: dict[str, Any], where: str) -> TaskConfig:
    _check_keys(
        data, {"file", "points", "time_limit", "cpu_limit", "memory_mb", "output_kb", "hidden"}, where
    )
    file = data.get("file", f"{task_id}.py")
    if not isinstance(file, str) or not file.endswith(".py") or "/" in file:
        raise ConfigError(f"grading.toml: {where}.file must be a flat .py file name, got {file!r}")
    hidden = data.get("hidden", [])
    if not isinstance(hidden, list) or not all(isinstance(h, str) for h in hidden):
        raise ConfigError(f"grading.toml: {where}.hidden must be a list of check names")
    return TaskConfig(
        id=task_id,
        file=file,
        points=_number(data, "points", where, None, positive=False),
        time_limit=_number(data, "time_limit", where, 20.0),
        cpu_limit=_number(data, "cpu_limit", where, 20.0),
        memory_mb=int(_number(data, "memory_mb", where, 1024)),
        output_kb=int(_number(data, "output_kb", where, 64)),
        hidden=tuple(hidden),
    )


def _assignment(root: Path, aid: str, data: dict[str, Any]) -> Assignment:
    where = f"assignments.{aid}"
    _check_keys(data, {"title", "given", "tasks"}, where)
    tasks_data = _table(data.get("tasks", {}), f"{where}.tasks")
    if not tasks_data:
        raise ConfigError(f"grading.toml: {where}.tasks is empty: declare at least one task")
    tasks = tuple(
        _task(tid, _table(t, f"{where}.tasks.{tid}"), f"{where}.tasks.{tid}")
        for tid, t in tasks_data.items()
    )
    given = data.get("given", [])
    if not isinstance(given, list) or not all(isinstance(g, str) for g in given):
        raise ConfigError(f"grading.toml: {where}.given must be a list of file names")
    return Assignment(
        id=aid, title=str(data.get("title", aid)), root=root, given=tuple(given), tasks=tasks
    )


def parse_kit(root: Path, data: dict[str, Any]) -> Kit:
    """Validate parsed grading.toml data; every error names the offending key."""
    _check_keys(data, {"kit", "sandbox", "assignments"}, "grading")
    kit = _table(data.get("kit", {}), "kit")
    _check_keys(kit, {"default_assignment", "language"}, "kit")
    sandbox = _table(data.get("sandbox", {}), "sandbox")
    _check_keys(sandbox, {"uid_base"}, "sandbox")
    language = kit.get("language", "en")
    if language not in LANGUAGES:
        raise ConfigError(f"grading.toml: kit.language must be one of {LANGUAGES}, got {language!r}")
    assignments = {
        aid: _assignment(root, aid, _table(a, f"assignments.{aid}"))
        for aid, a in _table(data.get("assignments", {}), "assignments").items()
    }
    if not assignments:
        raise ConfigError("grading.toml: no [assignments.<id>] table: declare one")
    default = kit.get("default_assignment") or next(iter(assignments))
    if default not in assignments:
        raise ConfigError(f"grading.toml: kit.default_assignment {default!r} is not declared")
    uid_base = int(_number(sandbox, "uid_base", "sandbox", 61000))
    return Kit(root, default, language, SandboxConfig(uid_base), assignments)


def load_kit(root: Path) -> Kit:
    """Read `root/grading.toml`."""
    path = root / "grading.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path} not found: run from the kit's folder or pass --kit") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    return parse_kit(root.resolve(), data)


def find_kit_root(start: Path | None = None) -> Path:
    """The nearest folder at or above `start` (default: this package's repo) with grading.toml."""
    candidates = [start or Path.cwd(), Path(__file__).resolve().parent.parent]
    for origin in candidates:
        for folder in [origin.resolve(), *origin.resolve().parents]:
            if (folder / "grading.toml").is_file():
                return folder
    raise ConfigError("no grading.toml found here or above: run inside the kit or pass --kit")
