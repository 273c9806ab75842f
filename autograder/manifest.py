"""checks/manifest.json of a student folder: what `autograder check` needs there without the kit."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from autograder.config import CHECK_POLICIES, LANGUAGES, Assignment, TaskConfig
from autograder.errors import ConfigError

MANIFEST_FILE = "manifest.json"
CHECKS_DIR = "checks"  # a student folder's: the manifest, public checks, probes, messages
FORMAT = 1
PACKAGE = "torch-autograder"


def kit_version() -> str:
    """The installed kit's version (what a folder was built with, what checks it)."""
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return "unknown"


@dataclass(frozen=True)
class ManifestTask:
    """One task as the student's check sees it."""

    id: str
    file: str
    points: float  # the task's points in the final grade
    public_points: float  # what its public checks are worth
    names: tuple[str, ...] = ()  # the classes and functions its stub asks for
    time_limit: float = 20.0
    hidden: tuple[str, ...] = ()  # checks in public/ that grading.toml keeps out of the self-check


@dataclass(frozen=True)
class Manifest:
    """A student folder's assignment: its tasks, given files, language and self-check policy."""

    assignment: str
    title: str
    tasks: tuple[ManifestTask, ...]
    given: tuple[str, ...] = ()
    language: str = "en"
    check: str = "public"  # an exam's policy: "none" turns the self-check off
    kit_version: str = ""
    languages: tuple[str, ...] = ("en",)  # the feedback languages its shipped catalogues hold

    def as_assignment(self, root: Path) -> Assignment:
        """An Assignment whose graders are the folder's checks (for loading them like the kit's)."""
        tasks = tuple(TaskConfig(t.id, t.file, t.points, time_limit=t.time_limit, hidden=t.hidden)
                      for t in self.tasks)
        return Assignment(self.assignment, self.title, root, self.given, tasks, languages=self.languages)

    def to_json(self) -> str:
        data = {
            "format": FORMAT,
            "assignment": self.assignment,
            "title": self.title,
            "kit_version": self.kit_version,
            "language": self.language,
            "languages": list(self.languages),
            "check": self.check,
            "given": list(self.given),
            "tasks": [
                {"id": t.id, "file": t.file, "points": t.points, "public_points": t.public_points,
                 "names": list(t.names), "time_limit": t.time_limit, "hidden": list(t.hidden)}
                for t in self.tasks
            ],
        }
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def make_manifest(assignment: str, title: str, tasks: Sequence[ManifestTask], given: Sequence[str],
                  language: str = "en", check: str = "public",
                  languages: Sequence[str] = ("en",)) -> Manifest:
    return Manifest(assignment, title, tuple(tasks), tuple(given), language, check, kit_version(),
                    tuple(languages))


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{where} must be a number")
    return float(value)


def _task(data: Any, where: str) -> ManifestTask:
    if not isinstance(data, Mapping) or not isinstance(data.get("id"), str):
        raise ConfigError(f"{where} must be an object with an id")
    file = data.get("file")
    if not isinstance(file, str) or not file.endswith(".py") or "/" in file or "\\" in file:
        raise ConfigError(f"{where}.file must be a flat .py file name")
    names, hidden = data.get("names", []), data.get("hidden", [])
    for value in (names, hidden):
        if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
            raise ConfigError(f"{where}.names and .hidden must be lists of names")
    return ManifestTask(data["id"], file, _number(data.get("points"), f"{where}.points"),
                        _number(data.get("public_points"), f"{where}.public_points"), tuple(names),
                        _number(data.get("time_limit", 20.0), f"{where}.time_limit"), tuple(hidden))


MANIFEST_FIX = "ask for a fresh copy of the assignment folder"


def read_manifest(path: Path) -> Manifest:
    """Parse checks/manifest.json; every problem names the file and what to do."""
    fix = MANIFEST_FIX
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path} not found: {fix}") from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: not readable JSON ({exc}): {fix}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ConfigError(f"{path}: not a manifest of format {FORMAT} (built by another kit version?): {fix}")
    where = str(path)
    tasks = data.get("tasks")
    if not isinstance(tasks, list) or not tasks:
        raise ConfigError(f"{where}: tasks must be a non-empty list: {fix}")
    given = data.get("given", [])
    language, check = data.get("language", "en"), data.get("check", "public")
    if not isinstance(given, list) or not all(isinstance(g, str) for g in given):
        raise ConfigError(f"{where}: given must be a list of file names: {fix}")
    if (language not in LANGUAGES or check not in CHECK_POLICIES
            or not isinstance(data.get("assignment"), str)):
        raise ConfigError(f"{where}: assignment, language or check is not valid: {fix}")
    languages = data.get("languages", ["en", language] if language != "en" else ["en"])
    if not isinstance(languages, list) or not all(code in LANGUAGES for code in languages):
        raise ConfigError(f"{where}: languages must list feedback languages ({', '.join(LANGUAGES)}): {fix}")
    return Manifest(
        data["assignment"], str(data.get("title", data["assignment"])),
        tuple(_task(t, f"{where}: tasks[{i}]") for i, t in enumerate(tasks)), tuple(given),
        language, check, str(data.get("kit_version", "")), tuple(languages),
    )


def student_folder(start: Path, checks_dir: Path) -> Path:
    """The folder whose task files are checked: the one holding `checks_dir` when `start` is inside it
    (as git finds its root: notes/ or checks/ itself), else `start` (a kit's built checks on a folder)."""
    start, root = start.resolve(), checks_dir.resolve().parent
    return root if start == root or root in start.parents else start


def find_checks(start: Path) -> Path:
    """The checks/ folder holding a manifest at or above `start` (a task folder or a notebook's)."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / CHECKS_DIR / MANIFEST_FILE).is_file():
            return folder / CHECKS_DIR
    raise ConfigError(
        f"no {CHECKS_DIR}/{MANIFEST_FILE} in {start} or above: run the check inside the assignment "
        f"folder your instructor gave you (it holds {CHECKS_DIR}/), or pass that folder"
    )
