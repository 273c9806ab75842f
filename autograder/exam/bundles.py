"""Exam bundles: one folder and zip per student, with their own stubs, README and public checks."""

from __future__ import annotations

import csv
import io
import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.archive import write_zip
from autograder.authoring import build
from autograder.authoring.kit_wheel import install_command
from autograder.authoring.markers import has_markers
from autograder.config import Assignment, Kit
from autograder.exam.timing import window_text
from autograder.exam.variants import ExamError, Variant, VariantSpace, validate_space
from autograder.grading.course import VARIANT_FILE, load_graders, variant_params
from autograder.submissions.students import safe_name, student_key

ROSTER_ID_COLUMNS = ("student", "student_id", "id", "email", "username", "login", "sis_id")


@dataclass(frozen=True)
class RosterEntry:
    student: str
    name: str = ""


def read_roster(path: Path) -> list[RosterEntry]:
    """A CSV with a header naming the id column (student, id, email, username, ...); optional `name`."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ExamError(f"cannot read the roster {path}: {exc.strerror or exc}") from None
    rows = [r for r in csv.reader(io.StringIO(text)) if r and any(c.strip() for c in r)]
    if not rows:
        raise ExamError(f"{path}: the roster is empty")
    header = [c.strip().lower() for c in rows[0]]
    id_col = next((header.index(c) for c in ROSTER_ID_COLUMNS if c in header), None)
    if id_col is None:
        columns = ", ".join(ROSTER_ID_COLUMNS)
        raise ExamError(f"{path}: the first row must name the id column, one of: {columns}")
    name_col = header.index("name") if "name" in header else None
    entries: list[RosterEntry] = []
    seen: dict[str, int] = {}
    for number, row in enumerate(rows[1:], start=2):
        student = row[id_col].strip() if id_col < len(row) else ""
        if not student:
            raise ExamError(f"{path}:{number}: no student id in column {header[id_col]!r}")
        key = student_key(student)
        if key in seen:
            raise ExamError(f"{path}:{number}: {student!r} is already on line {seen[key]}")
        seen[key] = number
        name = row[name_col].strip() if name_col is not None and name_col < len(row) else ""
        entries.append(RosterEntry(student, name))
    if not entries:
        raise ExamError(f"{path}: the roster lists no students")
    return entries


@dataclass(frozen=True)
class Bundle:
    student: str
    variant: Variant
    folder: Path
    zip: Path


def bundle_files(
    kit: Kit, assignment: Assignment, student: str, variant: Variant, graders: Any
) -> dict[str, bytes]:
    """Everything one student's exam folder holds: their stubs, the given files, the README, and
    (when the exam allows self-checks) the public checks with their own numbers."""

    exam = assignment.exam
    assert exam is not None
    where = f"assignments.{assignment.id}.exam.variants"
    params_module = graders.module("params")
    params = variant_params(params_module, variant.choices, where)
    rewriter = graders.module("reference_variants")
    sources: dict[str, str] = {}
    for path in sorted(assignment.solutions.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        if rewriter is not None and has_markers(text):
            try:
                text = rewriter.variant_source(path.name, text, params)
            except ValueError as exc:
                raise ExamError(f"{assignment.solutions / path.name}: {exc}") from None
        sources[path.name] = text
    checks: dict[str, bytes] = {}
    if exam.check == "public":
        checks = build.public_checks(assignment.graders)
        checks[VARIANT_FILE] = (json.dumps(variant.choices, indent=2, ensure_ascii=False) + "\n").encode()
    describe = getattr(params_module, "describe", None)
    context = {
        "student": student,
        "variant": variant.code,
        "numbers": list(describe(params)) if describe else [variant.describe()],
        "window": window_text(exam),
        "window_bn": window_text(exam, "bn"),  # README.bn.md's
        "check": exam.check,
    }
    tasks = [build.TaskSpec(t.id, t.file, t.points, hidden=t.hidden, time_limit=t.time_limit)
             for t in assignment.tasks]
    files = build.render_student_folder(
        assignment.solutions, assignment.id, assignment.title, tasks, assignment.given,
        sources=sources, checks=checks, exam=context, language=kit.language,
        install=install_command(kit.student_install),
    )
    build.refuse_leaks(files, sources, f"the exam folder of {student!r}")
    return build.with_kit_wheel(files, kit.student_install)


def build_bundles(kit: Kit, assignment: Assignment, roster: Sequence[RosterEntry], out: Path,
                  secret: bytes) -> list[Bundle]:
    """One folder and one zip per student in `out`, plus out/manifest.csv (student -> variant)."""

    if assignment.exam is None:
        raise ExamError(f"assignment {assignment.id!r} is not an exam")
    build._refuse_unsafe_target(out, kit.root, assignment.solutions)
    graders = load_graders(assignment)
    space = VariantSpace.of(assignment)
    validate_space(space, graders.module("params"))
    planned: dict[str, tuple[RosterEntry, Variant, dict[str, bytes]]] = {}
    for entry in roster:
        folder = safe_name(entry.student)
        if folder in planned:
            raise ExamError(f"students {planned[folder][0].student!r} and {entry.student!r} would share "
                            f"the folder {folder!r}; make their ids differ")
        variant = space.derive(secret, entry.student)
        planned[folder] = (entry, variant, bundle_files(kit, assignment, entry.student, variant, graders))
    out.mkdir(parents=True, exist_ok=True)  # everything was generated and checked before writing
    bundles = []
    for folder, (entry, variant, files) in planned.items():
        target = out / folder
        if target.exists():
            shutil.rmtree(target)
        for rel, data in files.items():
            path = target / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        write_zip(out / f"{folder}.zip", {f"{folder}/{rel}": data for rel, data in sorted(files.items())})
        bundles.append(Bundle(entry.student, variant, target, out / f"{folder}.zip"))
    with (out / "manifest.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "name", "folder", "zip", "variant"])
        for folder, (entry, variant, _) in planned.items():
            writer.writerow([entry.student, entry.name, folder, f"{folder}.zip", variant.code])
    return bundles
