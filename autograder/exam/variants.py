"""Exam variants: the instructor's secret and each student's own numbers, derived with HMAC.

A student's variant is derived, never stored: HMAC-SHA256 keyed with the instructor's secret over
the assignment id and the student id gives one independent, uniform choice per knob of the variant
space that grading.toml declares. The same id and secret always give the same variant; without the
secret nobody can tell which variant an id gets. The secret comes from the environment (or a file
outside the kit), never from the repository.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.config import Assignment, Kit
from autograder.errors import ConfigError
from autograder.submissions.students import student_key

SECRET_ENV = "AUTOGRADER_EXAM_SECRET"  # noqa: S105  the name of a variable, not a secret
SECRET_FILE_ENV = "AUTOGRADER_EXAM_SECRET_FILE"  # noqa: S105  the name of a variable, not a secret
MIN_SECRET_BYTES = 16



class ExamError(ConfigError):
    """An exam cannot be built or graded as asked (no secret, bad roster, ...)."""


# ----------------------------------------------------------------------------- the secret


def load_secret(secret_file: Path | None = None, kit_root: Path | None = None,
                environ: Mapping[str, str] | None = None) -> bytes:
    """The instructor's exam secret: --secret-file, else $AUTOGRADER_EXAM_SECRET, else the file
    named by $AUTOGRADER_EXAM_SECRET_FILE. Refused when missing, short, or kept inside the kit."""
    env = os.environ if environ is None else environ
    origin = ""
    if secret_file is None and env.get(SECRET_ENV):
        secret, origin = env[SECRET_ENV].strip().encode(), f"${SECRET_ENV}"
    else:
        path = secret_file or (Path(env[SECRET_FILE_ENV]) if env.get(SECRET_FILE_ENV) else None)
        if path is None:
            raise ExamError(
                "this assignment is an exam, and its variants need the instructor's secret: set "
                f"{SECRET_ENV} (or {SECRET_FILE_ENV} to a file outside the kit), or pass --secret-file. "
                "Make one with `python -c 'import secrets; print(secrets.token_hex(32))'`; never commit it."
            )
        path = Path(path).expanduser()
        if kit_root is not None and path.resolve().is_relative_to(Path(kit_root).resolve()):
            raise ExamError(f"{path}: the exam secret lies inside the kit's folder, where it could be "
                            "committed; move it outside the repository")
        try:
            secret, origin = path.read_bytes().strip(), str(path)
        except OSError as exc:
            raise ExamError(f"cannot read the exam secret from {path}: {exc.strerror or exc}") from None
    if len(secret) < MIN_SECRET_BYTES:
        raise ExamError(
            f"the exam secret from {origin} is shorter than {MIN_SECRET_BYTES} bytes, anyone could guess "
            "it: make one with `python -c 'import secrets; print(secrets.token_hex(32))'`"
        )
    return secret


# ----------------------------------------------------------------------------- variants


def canonical(value: Any) -> str:
    """One text per option value, whatever the container types or the order of a table's keys."""

    def plain(v: Any) -> Any:
        if isinstance(v, Mapping):
            return {str(k): plain(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [plain(x) for x in v]
        return v

    return json.dumps(plain(value), sort_keys=True)


def show(value: Any) -> str:
    """An option as a person reads it: [24, 12], 0.2, {eta = 1, delay = 3}."""
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k} = {show(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(show(v) for v in value) + "]"
    return f"{value:g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class Variant:
    """One student's numbers: the index of the chosen option of every knob, and the options."""

    indices: tuple[int, ...]
    choices: dict[str, Any] = field(hash=False, compare=False)

    @property
    def code(self) -> str:
        """A short name for reports: v<index of each knob's option>, e.g. v2-0-1."""
        return "v" + "-".join(map(str, self.indices)) if self.indices else "lesson"

    def describe(self) -> str:
        return ", ".join(f"{knob} = {show(value)}" for knob, value in self.choices.items()) or "the lesson's"


@dataclass(frozen=True)
class VariantSpace:
    """The knobs of an exam and their options, in grading.toml's order."""

    assignment: str
    knobs: tuple[tuple[str, tuple[Any, ...]], ...]

    @classmethod
    def of(cls, assignment: Assignment) -> VariantSpace:
        return cls(assignment.id, assignment.exam.variants if assignment.exam else ())

    @property
    def size(self) -> int:
        return math.prod(len(options) for _, options in self.knobs)

    def options(self, knob: str) -> tuple[Any, ...]:
        return dict(self.knobs).get(knob, ())

    def variant(self, indices: Sequence[int]) -> Variant:
        if len(indices) != len(self.knobs):
            raise ValueError(f"a variant of {self.assignment} has {len(self.knobs)} indices: {indices}")
        choices = {knob: options[i] for (knob, options), i in zip(self.knobs, indices, strict=True)}
        return Variant(tuple(indices), choices)

    def derive(self, secret: bytes, student: str) -> Variant:
        """The student's variant: HMAC-SHA256(secret, assignment id, student id), one draw per knob."""
        parts = [b"autograder-exam-v1", self.assignment.encode(), student_key(student).encode()]
        seed = hmac.new(secret, b"\x00".join(parts), hashlib.sha256).digest()
        indices = []
        for knob, options in self.knobs:
            draw = hmac.new(seed, knob.encode(), hashlib.sha256).digest()
            indices.append(int.from_bytes(draw[:8], "big") % len(options))  # bias below 2**-50
        return self.variant(indices)

    def index_of(self, knob: str, value: Any) -> int | None:
        """Which option of `knob` equals `value` (None: not an option of this exam)."""
        wanted = canonical(value)
        for i, option in enumerate(self.options(knob)):
            if canonical(option) == wanted:
                return i
        return None

    def with_choice(self, variant: Variant, changes: Mapping[str, int]) -> Variant:
        indices = [changes.get(knob, i) for (knob, _), i in zip(self.knobs, variant.indices, strict=True)]
        return self.variant(indices)

    def all_single_options(self) -> list[tuple[str, int, Any]]:
        return [(knob, i, option) for knob, options in self.knobs for i, option in enumerate(options)]


def validate_space(space: VariantSpace, params_module: Any) -> None:
    """Every option of every knob must make valid Params (checked before anything is graded)."""
    from autograder.grading.course import variant_params

    where = f"grading.toml: assignments.{space.assignment}.exam.variants"
    for knob, index, option in space.all_single_options():
        variant_params(params_module, {knob: option}, f"{where}.{knob}[{index}]")


def knob_tasks(space: VariantSpace, params_module: Any, tasks: Sequence[str],
               sources: Mapping[str, str] | None = None) -> dict[str, tuple[str, ...]]:
    """knob -> the tasks its numbers reach. An option changes some sections of the Params (their
    fields named after tasks); it reaches those tasks, and every task whose checks' source (`sources`:
    task -> the text of its check files) reads such a section (`params.delivery.layers` in another
    task's check). An option that changes a field no task is named after, Params that are not a
    dataclass, or graders with no `for_variant`, reach every task."""
    from autograder.grading.course import variant_params

    def reads(task: str, section: str) -> bool:
        return re.search(rf"\.{re.escape(section)}\b", (sources or {}).get(task, "")) is not None

    try:
        lesson = variant_params(params_module, {}, space.assignment)
        changed = {knob: _changed_fields(lesson, [variant_params(params_module, {knob: o}, space.assignment)
                                                  for o in options])
                   for knob, options in space.knobs}
    except ConfigError:
        return {knob: tuple(tasks) for knob, _ in space.knobs}
    reach = {}
    for knob, fields in changed.items():
        if fields is None or fields - set(tasks):
            reach[knob] = tuple(tasks)
        else:
            reach[knob] = tuple(t for t in tasks if t in fields or any(reads(t, f) for f in fields))
    return reach


def knob_reach(assignment: Assignment) -> dict[str, tuple[str, ...]] | None:
    """knob -> the tasks its numbers reach, from the graders' params.py (None: no knobs, or the
    params cannot be read, and every knob is tested on every task)."""
    if assignment.exam is None or not assignment.exam.variants:
        return None
    from autograder.grading.course import load_params_module

    try:
        module = load_params_module(assignment)
    except Exception:  # noqa: BLE001  a broken params.py is grading's error to report; the page still shows
        return None
    if module is None:
        return None
    tasks = [t.id for t in assignment.tasks]
    sources = {t: "\n".join(p.read_text(encoding="utf-8", errors="replace")
                            for p in sorted(assignment.graders.glob(f"*/test_{t}.py"))) for t in tasks}
    return knob_tasks(VariantSpace.of(assignment), module, tasks, sources)


def _changed_fields(lesson: Any, variants: Sequence[Any]) -> set[str] | None:
    """The fields of the Params that any of `variants` changes (None: they are not dataclasses)."""
    if not dataclasses.is_dataclass(lesson):
        return None
    found = set()
    for params in variants:
        if not dataclasses.is_dataclass(params):
            return None
        found |= {f.name for f in dataclasses.fields(params)
                  if getattr(params, f.name) != getattr(lesson, f.name, None)}
    return found


def exam_assignment(kit: Kit, assignment: str | None) -> Assignment:
    """The assignment named (it must be an exam), or the only exam grading.toml declares."""
    if assignment is not None:
        target = kit.assignment(assignment)
        if target.exam is None:
            raise ExamError(f"assignment {target.id!r} is not an exam: no [assignments.{target.id}.exam]")
        return target
    exams = [a for a in kit.assignments.values() if a.exam is not None]
    if len(exams) != 1:
        names = ", ".join(a.id for a in exams) or "none"
        raise ExamError(f"pass --assignment: grading.toml declares {len(exams)} exams ({names})")
    return exams[0]


