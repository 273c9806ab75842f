"""An assignment's graders: the checks of each task, its probes and its feedback catalogue."""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import inspect
import json
import re
import sys
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from autograder.catalogues import flatten as _flatten
from autograder.checks import POINTS_ATTR, Check
from autograder.config import Assignment
from autograder.errors import ConfigError
from autograder.grading.challenge import graders_secret, hide_seeds
from autograder.grading.hypothesis_setup import pin_seed, use_profile
from autograder.references import probe_files
from autograder.sandbox.inside import probe_source

ENGINE_MESSAGES = Path(__file__).resolve().parents[1] / "messages"
VARIANT_FILE = "variant.json"  # in a student's exam bundle: the choices their checks use
_loaded: dict[Path, Any] = {}
# A check's title may name numbers of the params: "DeliveryMLP has {p.delivery.n_params} parameters".
_TITLE_FIELD = re.compile(r"\{p\.([A-Za-z_][\w.]*)\}")
Observer = Callable[..., dict[str, Any]]


@dataclass(frozen=True)
class Graders:
    """Everything needed to judge one assignment."""

    assignment: Assignment
    folder: Path
    checks: dict[str, tuple[Check, ...]]  # task id -> checks in run order
    probes_source: str
    params: Any
    messages: dict[str, dict[str, str]]  # message key -> {observed, expected, idea}
    title_templates: dict[str, str] = field(default_factory=dict)  # check id -> title before {p.*}
    observers: dict[str, Observer] = field(default_factory=dict)  # task id -> observe_variant
    package: str = ""  # the graders folder's import name, for its optional modules
    secret: bytes = b""  # what the checks' hidden challenges are drawn from (grading/challenge.py)
    public_seeds: tuple[str, ...] = ()  # params' seeds kept as written (params.PUBLIC_SEEDS)
    lang: str = "en"  # the feedback language of `messages`

    def for_task(self, task: str) -> tuple[Check, ...]:
        return self.checks.get(task, ())

    def with_params(self, params: Any) -> Graders:
        """The same checks judging with `params` (an exam variant's), their titles restated; its
        seeds are drawn from the graders' secret (grading/challenge.py)."""
        def restated(check: Check) -> Check:
            title = render_title(self.title_templates.get(check.id, check.title), params)
            return dataclasses.replace(check, title=title)

        checks = {task: tuple(restated(c) for c in found) for task, found in self.checks.items()}
        hidden = hide_seeds(params, self.secret, self.public_seeds)
        return dataclasses.replace(self, params=hidden, checks=checks)

    def with_secret(self, secret: bytes) -> Graders:
        """The same graders drawing their hidden inputs from another secret (a test's forger's guess)."""
        return dataclasses.replace(self, secret=secret).with_params(self.params)

    def module(self, name: str) -> ModuleType | None:
        """The graders' optional module `name` (params, reference_variants), None when absent."""
        if not self.package or not (self.folder / f"{name}.py").is_file():
            return None
        return importlib.import_module(f"{self.package}.{name}")


def render_title(template: str, params: Any) -> str:
    """A check title with its {p.<path>} fields filled from `params` (a field that fails stays as is)."""

    def value(match: re.Match[str]) -> str:
        obj = params
        try:
            for part in match.group(1).split("."):
                obj = getattr(obj, part)
        except AttributeError:
            return match.group(0)
        return str(obj)

    return _TITLE_FIELD.sub(value, template)


def load_messages(folders: list[Path], lang: str) -> dict[str, dict[str, str]]:
    """Message catalogues of the engine and an assignment, in `lang`, English where missing."""
    merged: dict[str, dict[str, str]] = {}
    for folder in folders:
        for code in ("en", lang) if lang != "en" else ("en",):
            path = folder / f"{code}.toml"
            if path.is_file():
                try:
                    merged.update(_flatten(tomllib.loads(path.read_text(encoding="utf-8"))))
                except tomllib.TOMLDecodeError as exc:
                    raise ConfigError(f"{path}: {exc}") from None
    return merged


def _import_package(folder: Path) -> Any:
    """Import a graders folder as a package under a private, stable name."""
    folder = folder.resolve()
    name = "autograder_graders_" + re.sub(r"\W", "_", str(folder))
    known = _loaded.get(folder)
    # Only while it is still the one imported under its name: a package something took out of
    # sys.modules (a clean-up of a folder's modules) cannot import its checks, so it is imported again.
    if known is not None and sys.modules.get(name) is known:
        return known
    init = folder / "__init__.py"
    spec = importlib.util.spec_from_file_location(
        name, init if init.exists() else None, submodule_search_locations=[str(folder)]
    )
    if spec is None:
        raise ConfigError(f"{folder}: not a graders package (add __init__.py)")
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    if spec.loader is not None and init.exists():
        spec.loader.exec_module(package)
    _loaded[folder] = package
    return package


def load_params_module(assignment: Assignment) -> ModuleType | None:
    """The graders' params.py of `assignment` alone (no checks loaded); None when it has none."""
    folder = assignment.graders.resolve()
    if not (folder / "params.py").is_file():
        return None
    return importlib.import_module(f"{_import_package(folder).__name__}.params")


def variant_params(params_module: Any, choices: Mapping[str, Any], where: str) -> Any:
    """params_module.for_variant(choices); a missing hook or a bad choice is a ConfigError."""
    make = getattr(params_module, "for_variant", None)
    if make is None:
        raise ConfigError(f"{where}: the graders' params.py has no for_variant(choices), so no variants")
    try:
        return make(dict(choices))
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _collect(module: Any, task: str, public: bool, hidden_names: tuple[str, ...]) -> list[Check]:
    checks = []
    for fname, fn in vars(module).items():
        if not fname.startswith("test_") or not callable(fn) or not hasattr(fn, POINTS_ATTR):
            continue
        name = fname.removeprefix("test_")
        doc = inspect.getdoc(fn) or name.replace("_", " ")
        pin_seed(fn)
        checks.append(
            Check(task, name, doc.splitlines()[0], getattr(fn, POINTS_ATTR),
                  public and name not in hidden_names, fn)
        )
    return checks


def read_probes(folder: Path) -> str:
    """The probes of graders `folder` as the one text a worker runs (probes.py, or probes/*.py)."""
    files = [(p.relative_to(folder).as_posix(), p.read_text(encoding="utf-8")) for p in probe_files(folder)]
    return probe_source.join(files)


def load_graders(assignment: Assignment, folder: Path | None = None, lang: str = "en") -> Graders:
    """Import the checks of every task from `folder` (default: the instructor's graders)."""
    use_profile()  # before the checks are imported: their decorators read the profile

    if lang not in assignment.languages:  # English where a text is missing would pass for Bangla
        raise ConfigError(
            f"assignment {assignment.id!r} has no {lang!r} feedback: grading.toml declares "
            f"assignments.{assignment.id}.languages = {list(assignment.languages)}; complete "
            f"graders/messages/{lang}.toml and add {lang!r} there (`autograder doctor` checks it)"
        )
    folder = (folder or assignment.graders).resolve()
    if not folder.is_dir():
        raise ConfigError(f"{folder}: graders folder not found for assignment {assignment.id!r}")
    package = _import_package(folder)
    checks: dict[str, tuple[Check, ...]] = {}
    observers: dict[str, Observer] = {}
    for task in assignment.tasks:
        found: list[Check] = []
        for kind, public in (("public", True), ("hidden", False)):
            if (folder / kind / f"test_{task.id}.py").is_file():
                module = importlib.import_module(f"{package.__name__}.{kind}.test_{task.id}")
                found += _collect(module, task.id, public, task.hidden)
                if callable(getattr(module, "observe_variant", None)):
                    observers[task.id] = module.observe_variant
        checks[task.id] = tuple(found)
    params_mod = importlib.import_module(f"{package.__name__}.params")
    probes = read_probes(folder)
    messages = load_messages([ENGINE_MESSAGES, folder / "messages"], lang)
    params = params_mod.default()
    chosen = folder / VARIANT_FILE
    if chosen.is_file():  # a student's exam bundle: their checks judge with their own numbers
        try:
            choices = json.loads(chosen.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{chosen}: not readable JSON ({exc})") from None
        if not isinstance(choices, dict):
            raise ConfigError(f"{chosen}: must hold a JSON object of variant choices")
        params = variant_params(params_mod, choices, str(chosen))
    titles = messages.get("titles", {})  # the catalogue's title, else the check's docstring
    templates = {c.id: titles.get(c.id, c.title) for found in checks.values() for c in found}
    graders = Graders(
        assignment, folder, checks, probes, params, messages,
        templates, observers, package.__name__, graders_secret(folder),
        tuple(getattr(params_mod, "PUBLIC_SEEDS", ())), lang,
    )
    return graders.with_params(params)


def validate_points(graders: Graders, complete: bool = True) -> None:
    """Each task's checks must add up to its points (only when all its checks are present)."""
    for task in graders.assignment.tasks:
        checks = graders.for_task(task.id)
        if not checks:
            raise ConfigError(f"{graders.folder}: task {task.id!r} has no checks (test_{task.id}.py)")
        total = sum(c.points for c in checks)
        if complete and abs(total - task.points) > 1e-9:
            raise ConfigError(
                f"{graders.folder}: the checks of task {task.id!r} add up to {total:g} points, "
                f"grading.toml gives it {task.points:g}: make them equal"
            )
