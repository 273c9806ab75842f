"""grading.toml, read with tomllib into typed, validated settings."""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from datetime import date, datetime, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from autograder.errors import ConfigError

LANGUAGES = ("en", "bn")
CHECK_POLICIES = ("public", "none")  # what `autograder check` may run during an exam
LATE_PERIODS = {"minute": 60, "hour": 3600, "day": 86400}
PENALTY_BASES = ("score", "max")  # a late penalty's percent is of the student's score, or of the maximum
COUNTS = ("latest", "best")  # which of a student's submissions to the service is their grade


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
    title: str = ""  # the task's heading in the student README ("" : its id)

    @property
    def module(self) -> str:
        return self.file.removesuffix(".py")


@dataclass(frozen=True)
class ExamConfig:
    """An exam: who may self-check what, the window, the late policy and the variant space."""

    check: str = "public"  # public | none: what `autograder check` runs while the exam is open
    start: datetime | None = None
    deadline: datetime | None = None
    cutoff: datetime | None = None  # the last moment work is accepted; None: late work always is
    late_penalty: float = 0.0  # percent per started late_period
    late_period: str = "hour"
    late_penalty_of: str = "score"
    timezone: str = ""  # for times without a UTC offset (submission metadata, --times)
    variants: tuple[tuple[str, tuple[Any, ...]], ...] = ()  # knob -> its options, in order

    @property
    def tz(self) -> tzinfo:
        if self.timezone:
            return ZoneInfo(self.timezone)
        for moment in (self.deadline, self.start, self.cutoff):
            if moment is not None and moment.tzinfo is not None:
                return moment.tzinfo
        return ZoneInfo("UTC")

    @property
    def period_seconds(self) -> int:
        return LATE_PERIODS[self.late_period]


@dataclass(frozen=True)
class Assignment:
    """One assignment: where its content lives, and its tasks in order."""

    id: str
    title: str
    root: Path
    given: tuple[str, ...]
    tasks: tuple[TaskConfig, ...]
    content: str = ""  # solutions/<content>/ (default: the id); an exam can reuse an exercise's
    exam: ExamConfig | None = None
    languages: tuple[str, ...] = ("en",)  # feedback languages its catalogue is complete in
    counts: str = "latest"  # latest | best: which submission of a student counts (the service)

    @property
    def solutions(self) -> Path:
        return self.root / "solutions" / (self.content or self.id)

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
    # What a student's README tells them to `pip install` to get the checker: "" for the kit's wheel,
    # which the built folder carries (authoring/kit_wheel.py); else a URL or an index the
    # instructor publishes the kit to (e.g. "--index-url https://... torch-autograder==0.1.0").
    student_install: str = ""

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


def _number(
    data: dict[str, Any], key: str, where: str, default: float | None, positive: bool = True
) -> float:
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
        data, {"file", "points", "title", "time_limit", "cpu_limit", "memory_mb", "output_kb", "hidden"},
        where)
    file = data.get("file", f"{task_id}.py")
    if not isinstance(file, str) or not file.endswith(".py") or "/" in file:
        raise ConfigError(f"grading.toml: {where}.file must be a flat .py file name, got {file!r}")
    hidden = data.get("hidden", [])
    if not isinstance(hidden, list) or not all(isinstance(h, str) for h in hidden):
        raise ConfigError(f"grading.toml: {where}.hidden must be a list of check names")
    title = data.get("title", "")
    if not isinstance(title, str):
        raise ConfigError(f"grading.toml: {where}.title must be text (the task's heading), got {title!r}")
    return TaskConfig(
        id=task_id,
        file=file,
        points=_number(data, "points", where, None, positive=False),
        time_limit=_number(data, "time_limit", where, 20.0),
        cpu_limit=_number(data, "cpu_limit", where, 20.0),
        memory_mb=int(_number(data, "memory_mb", where, 1024)),
        output_kb=int(_number(data, "output_kb", where, 64)),
        hidden=tuple(hidden),
        title=title,
    )


def _moment(data: dict[str, Any], key: str, where: str, zone: str) -> datetime | None:
    """A TOML datetime (or ISO text) with a UTC offset, or local with exam.timezone set."""
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise ConfigError(f"grading.toml: {where}.{key} is not a date and time: {value!r}") from None
    if not isinstance(value, datetime):
        kind = "a date without a time" if isinstance(value, date) else repr(value)
        raise ConfigError(f"grading.toml: {where}.{key} must be a date and time like "
                          f"2025-06-14T13:00:00+06:00, got {kind}")
    if value.tzinfo is None:
        if not zone:
            raise ConfigError(
                f"grading.toml: {where}.{key} has no UTC offset: write it like 2025-06-14T13:00:00+06:00 "
                f"or set {where}.timezone (e.g. \"Asia/Dhaka\")"
            )
        value = value.replace(tzinfo=ZoneInfo(zone))
    return value


def _variants(data: Any, where: str) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    space = []
    for knob, options in _table(data, where).items():
        if not isinstance(options, list) or not options:
            raise ConfigError(f"grading.toml: {where}.{knob} must be a non-empty list of options")
        seen = [json.dumps(o, sort_keys=True, default=str) for o in options]
        if len(set(seen)) != len(seen):
            raise ConfigError(f"grading.toml: {where}.{knob} lists an option twice "
                              "(it would be drawn twice as often)")
        space.append((knob, tuple(options)))
    return tuple(space)


def _exam(data: dict[str, Any], where: str) -> ExamConfig:
    keys = {"check", "start", "deadline", "cutoff", "late_penalty", "late_period", "late_penalty_of",
            "timezone", "variants"}
    _check_keys(data, keys, where)
    check = data.get("check", "public")
    if check not in CHECK_POLICIES:
        raise ConfigError(f"grading.toml: {where}.check must be one of {CHECK_POLICIES}, got {check!r}")
    zone = data.get("timezone", "")
    if not isinstance(zone, str):
        raise ConfigError(f"grading.toml: {where}.timezone must be a name like \"Asia/Dhaka\"")
    if zone:
        try:
            ZoneInfo(zone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ConfigError(f"grading.toml: {where}.timezone {zone!r} is not a known time zone") from None
    start, deadline = _moment(data, "start", where, zone), _moment(data, "deadline", where, zone)
    cutoff = _moment(data, "cutoff", where, zone)
    penalty = _number(data, "late_penalty", where, 0.0, positive=False)
    if not 0 <= penalty <= 100:
        raise ConfigError(f"grading.toml: {where}.late_penalty is a percent per period, 0 to 100: "
                          f"got {penalty:g}")
    period = data.get("late_period", "hour")
    if period not in LATE_PERIODS:
        raise ConfigError(f"grading.toml: {where}.late_period must be one of {tuple(LATE_PERIODS)}, "
                          f"got {period!r}")
    basis = data.get("late_penalty_of", "score")
    if basis not in PENALTY_BASES:
        raise ConfigError(f"grading.toml: {where}.late_penalty_of must be one of {PENALTY_BASES}, "
                          f"got {basis!r}")
    if deadline is None and (penalty or cutoff is not None):
        raise ConfigError(f"grading.toml: {where}.deadline is required with a late policy or a cutoff")
    if start is not None and deadline is not None and not start < deadline:
        raise ConfigError(f"grading.toml: {where}.start must be before {where}.deadline")
    if cutoff is not None and deadline is not None and cutoff < deadline:
        raise ConfigError(f"grading.toml: {where}.cutoff must not be before {where}.deadline")
    if cutoff is None and deadline is not None and not penalty:
        cutoff = deadline  # no late policy: the deadline is the cutoff
    variants = _variants(data.get("variants", {}), f"{where}.variants")
    return ExamConfig(check, start, deadline, cutoff, penalty, period, basis, zone, variants)


def _assignment(root: Path, aid: str, data: dict[str, Any], declared: dict[str, Any]) -> Assignment:
    where = f"assignments.{aid}"
    _check_keys(data, {"title", "given", "tasks", "extends", "exam", "languages", "counts"}, where)
    base: Assignment | None = None
    if "extends" in data:
        parent = data["extends"]
        if not isinstance(parent, str) or parent == aid or parent not in declared:
            raise ConfigError(f"grading.toml: {where}.extends must name another declared assignment, "
                              f"got {parent!r}")
        parent_data = _table(declared[parent], f"assignments.{parent}")
        if "extends" in parent_data:
            raise ConfigError(f"grading.toml: {where}.extends names {parent!r}, which extends another one")
        base = _assignment(root, parent, {k: v for k, v in parent_data.items() if k != "exam"}, declared)
    if "tasks" in data or base is None:
        tasks_data = _table(data.get("tasks", {}), f"{where}.tasks")
        if not tasks_data:
            raise ConfigError(f"grading.toml: {where}.tasks is empty: declare at least one task")
        tasks = tuple(
            _task(tid, _table(t, f"{where}.tasks.{tid}"), f"{where}.tasks.{tid}")
            for tid, t in tasks_data.items()
        )
    else:
        tasks = base.tasks
    given = data.get("given", list(base.given) if base else [])
    if not isinstance(given, list) or not all(isinstance(g, str) for g in given):
        raise ConfigError(f"grading.toml: {where}.given must be a list of file names")
    exam = _exam(_table(data["exam"], f"{where}.exam"), f"{where}.exam") if "exam" in data else None
    languages = _languages(data.get("languages", list(base.languages) if base else ["en"]), where)
    counts = data.get("counts", base.counts if base else "latest")
    if counts not in COUNTS:
        raise ConfigError(f"grading.toml: {where}.counts must be one of {COUNTS} (which of a student's "
                          f"submissions is their grade), got {counts!r}")
    return Assignment(
        id=aid, title=str(data.get("title", base.title if base else aid)), root=root, given=tuple(given),
        tasks=tasks, content=(base.content or base.id) if base else "", exam=exam, languages=languages,
        counts=counts,
    )


def _languages(value: Any, where: str) -> tuple[str, ...]:
    """The feedback languages an assignment declares: English first, each a known one, once."""
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"grading.toml: {where}.languages must be a list like [\"en\", \"bn\"]")
    unknown = sorted(set(value) - set(LANGUAGES))
    if unknown:
        raise ConfigError(f"grading.toml: {where}.languages: unknown language {unknown[0]!r} "
                          f"(known: {', '.join(LANGUAGES)})")
    if value[0] != "en" or len(set(value)) != len(value):
        raise ConfigError(f"grading.toml: {where}.languages must start with \"en\" (the fallback of "
                          f"every message) and name each language once, got {value!r}")
    return tuple(value)


def parse_kit(root: Path, data: dict[str, Any]) -> Kit:
    """Validate parsed grading.toml data; every error names the offending key."""
    _check_keys(data, {"kit", "sandbox", "assignments"}, "grading")
    kit = _table(data.get("kit", {}), "kit")
    _check_keys(kit, {"default_assignment", "language", "student_install"}, "kit")
    student_install = kit.get("student_install", "")
    if not isinstance(student_install, str):
        raise ConfigError("grading.toml: kit.student_install must be the text after `pip install`")
    sandbox = _table(data.get("sandbox", {}), "sandbox")
    _check_keys(sandbox, {"uid_base"}, "sandbox")
    language = kit.get("language", "en")
    if language not in LANGUAGES:
        raise ConfigError(f"grading.toml: kit.language must be one of {LANGUAGES}, got {language!r}")
    declared = _table(data.get("assignments", {}), "assignments")
    assignments = {aid: _assignment(root, aid, _table(a, f"assignments.{aid}"), declared)
                   for aid, a in declared.items()}
    if not assignments:
        raise ConfigError("grading.toml: no [assignments.<id>] table: declare one")
    default = kit.get("default_assignment") or next(iter(assignments))
    if default not in assignments:
        raise ConfigError(f"grading.toml: kit.default_assignment {default!r} is not declared")
    uid_base = int(_number(sandbox, "uid_base", "sandbox", 61000))
    return Kit(root, default, language, SandboxConfig(uid_base), assignments, student_install.strip())


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
