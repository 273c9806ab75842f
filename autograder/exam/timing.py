"""Exam times: when a submission came in (never a file's modification time), and how late it was."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from pathlib import Path, PurePosixPath
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from autograder.config import ExamConfig
from autograder.exam.variants import ExamError
from autograder.submissions.students import student_key

NBGRADER_TIMESTAMP = "timestamp.txt"
GRADESCOPE_METADATA = "submission_metadata.json"
MAX_METADATA_BYTES = 64 * 1024


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
                    times: Mapping[str, datetime] | None = None) -> SubmittedAt:
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


# ----------------------------------------------------------------------------- extensions


@dataclass(frozen=True)
class Extension:
    """One student's extension (the ledger records it, issue #28): their own deadline (the cutoff
    moves with it), or exemption from the late policy (late work accepted without a penalty)."""

    deadline: datetime | None = None
    exempt: bool = False

    def context(self) -> str:
        """What the grade's key holds of it: another extension is another grade."""
        return f"ext:{self.deadline.isoformat() if self.deadline else ''}:{int(self.exempt)}"


def extended(exam: ExamConfig, extension: Extension | None) -> ExamConfig:
    """The exam as it stands for a student with `extension` (as it is without one)."""
    if extension is None:
        return exam
    deadline, cutoff = exam.deadline, exam.cutoff
    if extension.deadline is not None and exam.deadline is not None:
        shift = extension.deadline - exam.deadline
        deadline = extension.deadline
        cutoff = exam.cutoff + shift if exam.cutoff is not None else None
    if extension.exempt:  # neither a penalty nor a cutoff: late work counts in full
        return dataclasses.replace(exam, deadline=deadline, cutoff=None, late_penalty=0.0)
    return dataclasses.replace(exam, deadline=deadline, cutoff=cutoff)


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
    seconds = math.ceil(seconds)
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
                "sees this in the class report.")
    if late.status == "before_start":
        return f"{at}, before the exam opened at {fmt_time(exam.start, tz)}; graded as on time."
    if late.status == "past_cutoff":
        return (f"{at}, {_duration(late.seconds_late)} after the deadline {deadline} and after the cutoff "
                f"{fmt_time(exam.cutoff, tz)}: work is not accepted after the cutoff, so the score is 0 "
                f"(the checks gave {raw:g}).")
    if late.status == "late":
        period = exam.late_period + ("s" if late.periods != 1 else "")
        of = "of your score" if exam.late_penalty_of == "score" else "of the maximum"
        return (f"{at}, {_duration(late.seconds_late)} after the deadline {deadline}: {late.periods} started "
                f"{period} late, a late penalty of {late.percent:g}% {of}: -{penalty:g} points "
                f"({raw:g} -> {max(0.0, raw - penalty):g}).")
    return ""


def window_text(exam: ExamConfig, lang: str = "en") -> str:
    """The exam's window and late policy, for the README (README.bn.md: lang "bn"), from the engine
    catalogue's [ui] exam_* texts."""
    from autograder.grading.student_environment import engine_labels

    ui = engine_labels(lang)
    tz = exam.tz
    parts = []
    if exam.start is not None:
        parts.append(ui["exam_opens"].format(time=fmt_time(exam.start, tz)))
    if exam.deadline is not None:
        parts.append(ui["exam_submit_by"].format(time=fmt_time(exam.deadline, tz)))
        if exam.late_penalty:
            key = "exam_late_of_score" if exam.late_penalty_of == "score" else "exam_late_of_max"
            period = ui.get(f"exam_period_{exam.late_period}", exam.late_period)
            parts.append(ui[key].format(percent=f"{exam.late_penalty:g}", period=period))
        if exam.cutoff is not None and exam.cutoff == exam.deadline:
            parts.append(ui["exam_no_late_work"])
        elif exam.cutoff is not None:
            parts.append(ui["exam_cutoff"].format(time=fmt_time(exam.cutoff, tz)))
    parts.append(ui["exam_time_counts"])
    return " ".join(parts)
