"""Exams: a variant of the numbers for every student, submission times and lateness, bundles.

A student's variant is derived, never stored: HMAC-SHA256 keyed with the instructor's secret over
the assignment id and the student id gives one independent, uniform choice per knob of the variant
space that grading.toml declares. The same id and secret always give the same variant; without the
secret nobody can tell which variant an id gets. The secret comes from the environment (or a file
outside the kit), never from the repository.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import json
import math
import os
import shutil
import unicodedata
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from pathlib import Path, PurePosixPath
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .config import Assignment, ExamConfig, Kit
from .errors import ConfigError

SECRET_ENV = "AUTOGRADER_EXAM_SECRET"
SECRET_FILE_ENV = "AUTOGRADER_EXAM_SECRET_FILE"
MIN_SECRET_BYTES = 16
NBGRADER_TIMESTAMP = "timestamp.txt"
GRADESCOPE_METADATA = "submission_metadata.json"
MAX_METADATA_BYTES = 64 * 1024
ROSTER_ID_COLUMNS = ("student", "student_id", "id", "email", "username", "login", "sis_id")
BUNDLE_CONFIG = "grading.toml"
ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # fixed entry times: the same bundle always zips to the same bytes


class ExamError(ConfigError):
    """An exam cannot be built or graded as asked (no secret, bad roster, ...)."""


# ----------------------------------------------------------------------------- the secret


def load_secret(secret_file: Path | None = None, kit_root: Path | None = None,
                environ: Mapping[str, str] | None = None) -> bytes:  # fmt: skip
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
                            "committed; move it outside the repository")  # fmt: skip
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


def student_key(student: str) -> str:
    """A student id as variants and time lists match it: NFC, trimmed, case-folded."""
    return unicodedata.normalize("NFC", student).strip().casefold()


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
    from .course import variant_params

    where = f"grading.toml: assignments.{space.assignment}.exam.variants"
    for knob, index, option in space.all_single_options():
        variant_params(params_module, {knob: option}, f"{where}.{knob}[{index}]")


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


# ----------------------------------------------------------------------------- submission times


@dataclass(frozen=True)
class SubmittedAt:
    """When a submission came in, according to what (never a file's modification time)."""

    moment: datetime | None
    source: str = ""  # "timestamp.txt", "submission_metadata.json", "times list"
    problem: str = ""  # why no time could be read


def _zone(name: str) -> tzinfo | None:
    if name.upper() in ("UTC", "GMT", "Z"):
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def parse_time(text: str, tz: tzinfo) -> datetime:
    """ISO 8601 (any offset), or nbgrader's `2025-06-14 12:59:59.123456 UTC` (zone name last).
    A time without a zone is read in `tz`, the exam's time zone. ValueError if unreadable."""
    raw = text.strip().strip('"')
    if not raw:
        raise ValueError("empty time")
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        head, _, zone_name = raw.rpartition(" ")
        zone = _zone(zone_name) if head else None
        if zone is None:
            raise ValueError(f"not a date and time: {raw!r}") from None
        moment = datetime.fromisoformat(head.strip()).replace(tzinfo=zone)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=tz)


def read_times(path: Path, tz: tzinfo) -> dict[str, datetime]:
    """A CSV of student,time (a header row is optional) -> {student key: time}."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ExamError(f"cannot read the submission times {path}: {exc.strerror or exc}") from None
    times: dict[str, datetime] = {}
    for number, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not row or not any(cell.strip() for cell in row):
            continue
        if len(row) < 2:
            raise ExamError(f"{path}:{number}: expected student,time; got {row!r}")
        student, when = row[0].strip(), row[1].strip()
        try:
            moment = parse_time(when, tz)
        except ValueError:
            if number == 1:
                continue  # a header row
            raise ExamError(f"{path}:{number}: {when!r} is not a date and time (use ISO 8601)") from None
        key = student_key(student)
        if key in times:
            raise ExamError(f"{path}:{number}: {student!r} has a second time; keep one row per student")
        times[key] = moment
    return times


def _metadata_files(path: Path) -> dict[str, bytes]:
    """timestamp.txt and submission_metadata.json of a folder (down single sub-folders) or a zip."""
    found: dict[str, bytes] = {}
    wanted = (NBGRADER_TIMESTAMP, GRADESCOPE_METADATA)
    if path.is_dir() and not path.is_symlink():
        folder = path
        for _ in range(5):
            for name in wanted:
                candidate = folder / name
                if name not in found and candidate.is_file() and not candidate.is_symlink():
                    with candidate.open("rb") as handle:
                        found[name] = handle.read(MAX_METADATA_BYTES)
            subs = [p for p in folder.iterdir() if p.is_dir() and not p.name.startswith((".", "__"))]
            if len(subs) != 1 or any(p.suffix == ".py" for p in folder.iterdir()):
                break
            folder = subs[0]
    elif path.suffix.lower() == ".zip" and path.is_file():
        try:
            with zipfile.ZipFile(path) as archive:
                infos = sorted(archive.infolist(), key=lambda i: i.filename.count("/"))
                for info in infos:
                    name = PurePosixPath(info.filename).name
                    if name in wanted and name not in found and info.file_size <= MAX_METADATA_BYTES:
                        found[name] = archive.read(info)[:MAX_METADATA_BYTES]
        except (zipfile.BadZipFile, OSError, ValueError, RuntimeError):
            return found
    return found


def submission_time(path: Path, student: str, tz: tzinfo,
                    times: Mapping[str, datetime] | None = None) -> SubmittedAt:  # fmt: skip
    """The submission's time: the instructor's times list first, then Gradescope's
    submission_metadata.json (`created_at`), then nbgrader's timestamp.txt. Never mtimes."""
    if times is not None and student_key(student) in times:
        return SubmittedAt(times[student_key(student)], "times list")
    files = _metadata_files(path)
    problems = []
    if GRADESCOPE_METADATA in files:
        try:
            meta = json.loads(files[GRADESCOPE_METADATA].decode("utf-8"))
            return SubmittedAt(parse_time(str(meta["created_at"]), tz), GRADESCOPE_METADATA)
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
            problems.append(f"{GRADESCOPE_METADATA} has no readable created_at ({type(exc).__name__})")
    if NBGRADER_TIMESTAMP in files:
        try:
            text = files[NBGRADER_TIMESTAMP].decode("utf-8")
            first = text.strip().splitlines()[0] if text.strip() else ""
            return SubmittedAt(parse_time(first, tz), NBGRADER_TIMESTAMP)
        except (ValueError, UnicodeDecodeError) as exc:
            problems.append(f"{NBGRADER_TIMESTAMP} is not readable ({str(exc)[:80]})")
    nothing = f"no {NBGRADER_TIMESTAMP}, {GRADESCOPE_METADATA} or times list entry"
    return SubmittedAt(None, "", "; ".join(problems) or nothing)


# ----------------------------------------------------------------------------- lateness


@dataclass(frozen=True)
class Lateness:
    """How a submission time stands to the exam's window, and the penalty's percent."""

    status: str  # no_deadline | unknown | before_start | on_time | late | past_cutoff
    seconds_late: float = 0.0
    periods: int = 0
    percent: float = 0.0

    def penalty(self, raw_score: float, max_score: float, basis: str) -> float:
        """Points taken off a raw score (never more than the score itself)."""
        if self.status == "past_cutoff":
            return raw_score
        if not self.percent:
            return 0.0
        base = raw_score if basis == "score" else max_score
        return round(min(raw_score, base * self.percent / 100), 6)


def lateness(exam: ExamConfig, submitted: datetime | None) -> Lateness:
    """On time up to and including the deadline; every started period after it costs the penalty;
    after the cutoff nothing is accepted."""
    if exam.deadline is None:
        return Lateness("no_deadline")
    if submitted is None:
        return Lateness("unknown")
    late = (submitted - exam.deadline).total_seconds()
    if late <= 0:
        early = exam.start is not None and submitted < exam.start
        return Lateness("before_start" if early else "on_time")
    if exam.cutoff is not None and submitted > exam.cutoff:
        return Lateness("past_cutoff", late, math.ceil(late / exam.period_seconds), 100.0)
    periods = math.ceil(late / exam.period_seconds)
    return Lateness("late", late, periods, min(100.0, periods * exam.late_penalty))


def fmt_time(moment: datetime | None, tz: tzinfo | None = None) -> str:
    if moment is None:
        return "unknown"
    shown = moment.astimezone(tz) if tz is not None else moment
    return shown.isoformat(sep=" ", timespec="seconds")


def _duration(seconds: float) -> str:
    seconds = int(math.ceil(seconds))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{days} d"] * bool(days) + [f"{hours} h"] * bool(hours) + [f"{minutes} min"] * bool(minutes)
    return " ".join(parts + [f"{secs} s"] * bool(secs or not parts))


def late_note(exam: ExamConfig, when: SubmittedAt, late: Lateness, penalty: float, raw: float) -> str:
    """What the student reads about their submission time ("" when there is nothing to say)."""
    tz = exam.tz
    at = f"Submitted {fmt_time(when.moment, tz)} ({when.source})"
    deadline = fmt_time(exam.deadline, tz)
    if late.status == "unknown":
        return (f"No submission time was found ({when.problem}); graded as on time. The instructor "
                "sees this in the class report.")  # fmt: skip
    if late.status == "before_start":
        return f"{at}, before the exam opened at {fmt_time(exam.start, tz)}; graded as on time."
    if late.status == "past_cutoff":
        return (f"{at}, {_duration(late.seconds_late)} after the deadline {deadline} and after the cutoff "
                f"{fmt_time(exam.cutoff, tz)}: work is not accepted after the cutoff, so the score is 0 "
                f"(the checks gave {raw:g}).")  # fmt: skip
    if late.status == "late":
        period = exam.late_period + ("s" if late.periods != 1 else "")
        of = "of your score" if exam.late_penalty_of == "score" else "of the maximum"
        return (f"{at}, {_duration(late.seconds_late)} after the deadline {deadline}: {late.periods} started "
                f"{period} late, a late penalty of {late.percent:g}% {of}: -{penalty:g} points "
                f"({raw:g} -> {max(0.0, raw - penalty):g}).")  # fmt: skip
    return ""


def window_text(exam: ExamConfig) -> str:
    """The exam's window and late policy, for the README."""
    tz = exam.tz
    parts = []
    if exam.start is not None:
        parts.append(f"The exam opens {fmt_time(exam.start, tz)}.")
    if exam.deadline is not None:
        parts.append(f"Submit by {fmt_time(exam.deadline, tz)}.")
        if exam.late_penalty:
            of = "of your score" if exam.late_penalty_of == "score" else "of the maximum"
            parts.append(f"Late work loses {exam.late_penalty:g}% {of} for every started {exam.late_period} "
                         "after the deadline.")  # fmt: skip
        if exam.cutoff is not None and exam.cutoff == exam.deadline:
            parts.append("Nothing is accepted after the deadline.")
        elif exam.cutoff is not None:
            parts.append(f"Nothing is accepted after {fmt_time(exam.cutoff, tz)}.")
    parts.append("The time that counts is the one the submission system records, not your files' times.")
    return " ".join(parts)


# ----------------------------------------------------------------------------- bundles


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


def _toml_str(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def bundle_config(kit: Kit, assignment: Assignment) -> str:
    """The grading.toml of a student's exam folder: what `autograder check` needs there, no more."""
    exam = assignment.exam
    assert exam is not None
    lines = [
        "# Written by `autograder exam build`: lets `autograder check` run in this folder.",
        "[kit]",
        f"default_assignment = {_toml_str(assignment.id)}",
        f"language = {_toml_str(kit.language)}",
        "",
        f"[assignments.{assignment.id}]",
        f"title = {_toml_str(assignment.title)}",
        f"given = [{', '.join(_toml_str(g) for g in assignment.given)}]",
        "",
        f"[assignments.{assignment.id}.exam]",
        f"check = {_toml_str(exam.check)}",
    ]
    for task in assignment.tasks:
        lines += [
            "",
            f"[assignments.{assignment.id}.tasks.{task.id}]",
            f"file = {_toml_str(task.file)}",
            f"points = {task.points:g}",
            f"time_limit = {task.time_limit:g}",
            f"cpu_limit = {task.cpu_limit:g}",
            f"memory_mb = {task.memory_mb}",
            f"output_kb = {task.output_kb}",
        ]
        if task.hidden:
            lines.append(f"hidden = [{', '.join(_toml_str(h) for h in task.hidden)}]")
    return "\n".join(lines) + "\n"


def bundle_files(
    kit: Kit, assignment: Assignment, student: str, variant: Variant, graders: Any
) -> dict[str, bytes]:
    """Everything one student's exam folder holds: their stubs, the given files, the README, and
    (when the exam allows self-checks) the public checks with their own numbers."""
    from . import build
    from .course import VARIANT_FILE, variant_params

    exam = assignment.exam
    assert exam is not None
    where = f"assignments.{assignment.id}.exam.variants"
    params_module = graders.module("params")
    params = variant_params(params_module, variant.choices, where)
    rewriter = graders.module("reference_variants")
    sources: dict[str, str] = {}
    for path in sorted(assignment.solutions.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        if rewriter is not None and build.has_markers(text):
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
        "check": exam.check,
    }
    tasks = [build.TaskSpec(t.id, t.file, t.points) for t in assignment.tasks]
    files = build.render_student_folder(
        assignment.solutions, assignment.id, assignment.title, tasks, assignment.given,
        sources=sources, checks=checks, exam=context,
    )  # fmt: skip
    files[BUNDLE_CONFIG] = bundle_config(kit, assignment).encode("utf-8")
    build.refuse_leaks(files, sources, f"the exam folder of {student!r}")
    return dict(sorted(files.items()))


def _write_zip(target: Path, folder_name: str, files: Mapping[str, bytes]) -> None:
    tmp = target.with_suffix(".zip.part")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as archive:
        for rel, data in sorted(files.items()):
            info = zipfile.ZipInfo(f"{folder_name}/{rel}", ZIP_TIME)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    tmp.replace(target)


def build_bundles(kit: Kit, assignment: Assignment, roster: Sequence[RosterEntry], out: Path,
                  secret: bytes) -> list[Bundle]:  # fmt: skip
    """One folder and one zip per student in `out`, plus out/manifest.csv (student -> variant)."""
    from . import build
    from .course import load_graders
    from .reports import safe_name

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
                            f"the folder {folder!r}; make their ids differ")  # fmt: skip
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
        _write_zip(out / f"{folder}.zip", folder, files)
        bundles.append(Bundle(entry.student, variant, target, out / f"{folder}.zip"))
    with (out / "manifest.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "name", "folder", "zip", "variant"])
        for folder, (entry, variant, _) in planned.items():
            writer.writerow([entry.student, entry.name, folder, f"{folder}.zip", variant.code])
    return bundles
