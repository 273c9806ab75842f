"""Exam mode: a variant per student (HMAC of a secret), bundles, grading per variant, lateness.

Proves: variants are stable for an id and a secret and differ across students; every variant's
reference scores 100 and its stubs 0; a swapped variant loses its points and is flagged; late
penalties follow the policy at the boundaries; bundles hold no hidden check and no solution code.
The tests use a small variant space (three options per knob) and grade without a sandbox.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
import shutil
import tomllib
import zipfile
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import ROOT, SOLUTIONS

from autograder.authoring.build import build_assignment
from autograder.authoring.markers import has_markers, solution_lines
from autograder.batch import grade_batch
from autograder.cli import main
from autograder.config import Kit, load_kit, parse_kit
from autograder.errors import ConfigError
from autograder.exam import timing
from autograder.exam import variants as exams
from autograder.exam.bundles import build_bundles, bundle_files, read_roster
from autograder.exam.plan import ExamPlan, plan_for
from autograder.grading.challenge import hide_seeds
from autograder.grading.course import load_graders
from autograder.grading.grader import Grader
from autograder.grading.options import GradeOptions
from autograder.grading.results import SubmissionResult
from autograder.output import reports
from autograder.output.class_report import render_html, summarize

EXAM = "nn_module_exam"
SECRET = b"test-exam-secret-0123456789abcdef"
DHAKA = timezone(timedelta(hours=6))
START = datetime(2025, 6, 14, 10, 0, tzinfo=DHAKA)
DEADLINE = datetime(2025, 6, 14, 13, 0, tzinfo=DHAKA)
CUTOFF = datetime(2025, 6, 14, 15, 0, tzinfo=DHAKA)
SMALL_SPACE: dict[str, list[Any]] = {
    "tinynet_hidden": [8, 12, 16],
    "delivery_hidden": [[16, 8], [24, 12], [12, 6]],
    "delivery_p_drop": [0.1, 0.2, 0.25],
    "twohead_heads": [{"time": 1, "late": 2}, {"eta": 1, "delay": 3}, {"cost": 1, "tier": 4}],
    "counting_stack": [[784, 256, 128, 10], [512, 128, 10], [300, 100, 50, 5]],
}
TASK_FILES = [task.file for task in load_kit(ROOT).assignment(EXAM).tasks]  # nn_module's, by `extends`
STUDENTS = ["ada", "bob", "carol", "dan", "eve", "farid", "gita", "hasan", "ira", "jamal", "karim", "lina"]


def exam_kit(**exam: Any) -> Kit:
    """The bundled kit, with the exam's table replaced by a small test exam (overrides in `exam`)."""
    data = tomllib.loads((ROOT / "grading.toml").read_text(encoding="utf-8"))
    table = {"check": "public", "start": START, "deadline": DEADLINE, "cutoff": CUTOFF, "late_penalty": 10,
             "late_period": "hour", "variants": SMALL_SPACE}
    table.update(exam)
    data["assignments"][EXAM]["exam"] = {k: v for k, v in table.items() if v is not None}
    return parse_kit(ROOT, data)


@pytest.fixture(scope="module")
def ekit() -> Kit:
    return exam_kit()


BARE = GradeOptions(sandbox=False)


class ExamGrader:
    """A Grader with the exam's plan, and the plan's view of variants, as these tests use them."""

    def __init__(self, kit: Kit, secret: bytes | None = SECRET):
        plan = plan_for(kit, EXAM, secret)
        assert isinstance(plan, ExamPlan)
        self.plan = plan
        self.grader = Grader(kit, EXAM, BARE, plan=plan)
        self.graders = self.grader.graders
        self.space = plan.space

    def graders_for(self, variant: exams.Variant) -> Any:
        return self.plan.graders_for(self.grader, variant)

    def grade(self, path: Path, student: str | None = None,
              variant: exams.Variant | None = None) -> SubmissionResult:
        """Against `variant` when given, else the one the student's id derives."""
        plan = dataclasses.replace(self.plan, fixed=variant) if variant is not None else None
        return self.grader.grade(path, student, plan)

    def close(self) -> None:
        self.grader.close()


@pytest.fixture(scope="module")
def egrader(ekit: Kit) -> Iterator[ExamGrader]:
    """One warm exam grader for the module (bare worker: only the kit's own references run)."""
    grader = ExamGrader(ekit)
    try:
        yield grader
    finally:
        grader.close()


def diagonal(grader: ExamGrader, i: int) -> exams.Variant:
    """Variant i: option i of every knob (three of them cover every option of the small space)."""
    return grader.space.variant([i % len(options) for _, options in grader.space.knobs])


def write_reference(grader: ExamGrader | _Rewriter, variant: exams.Variant, folder: Path) -> Path:
    """The reference solutions as `variant` has them, as a student's submission folder."""
    params = grader.graders_for(variant).params
    rewrite = grader.graders.module("reference_variants").variant_source
    folder.mkdir(parents=True, exist_ok=True)
    for name in TASK_FILES:
        (folder / name).write_text(rewrite(name, (SOLUTIONS / name).read_text(encoding="utf-8"), params))
    return folder


def write_files(files: dict[str, bytes], folder: Path) -> Path:
    for rel, data in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    return folder


# ----------------------------------------------------------------------------- variants


def test_variants_are_stable_for_an_id_and_differ_across_students(ekit):
    space = exams.VariantSpace.of(ekit.assignment(EXAM))
    assert space.size == 3**5
    first = space.derive(SECRET, "ada")
    assert space.derive(SECRET, "ada") == first and space.derive(SECRET, "  ADA ") == first  # ids as typed
    assert first.choices == {k: SMALL_SPACE[k][i] for k, i in zip(SMALL_SPACE, first.indices, strict=True)}
    codes = {space.derive(SECRET, f"student{n:03d}").code for n in range(60)}
    assert len(codes) >= 45  # 60 students, 243 variants: almost all different
    seen = {knob: {space.derive(SECRET, f"s{n}").indices[k] for n in range(200)}
            for k, knob in enumerate(SMALL_SPACE)}
    assert all(indices == {0, 1, 2} for indices in seen.values())  # every option is drawn
    # The secret and the assignment both matter: without the secret nobody can tell a variant.
    other_secret = [space.derive(SECRET + b"!", f"student{n:03d}").code for n in range(20)]
    other_exam = exams.VariantSpace("another_exam", space.knobs)
    assert other_secret != [space.derive(SECRET, f"student{n:03d}").code for n in range(20)]
    assert [other_exam.derive(SECRET, f"s{n}").code for n in range(20)] != [
        space.derive(SECRET, f"s{n}").code for n in range(20)
    ]


def test_default_variant_is_the_lesson(kit):
    graders = load_graders(kit.assignment("nn_module"))
    params = graders.module("params")
    assert params.for_variant({}) == params.default()
    # What the checks judge with: the lesson's numbers, the seeds drawn from the graders' secret.
    assert graders.params == hide_seeds(params.default(), graders.secret, graders.public_seeds)
    assert params.for_variant(params.lesson_choices()).delivery.n_params == 209
    lesson = kit.assignment(EXAM).exam.variants
    assert all(canonical_in(params.lesson_choices()[knob], options) for knob, options in lesson)
    # The exam reuses nn_module's tasks, points, references and graders.
    assert kit.assignment(EXAM).tasks == kit.assignment("nn_module").tasks
    assert kit.assignment(EXAM).solutions == kit.assignment("nn_module").solutions


def canonical_in(value: Any, options: tuple[Any, ...]) -> bool:
    return exams.canonical(value) in {exams.canonical(o) for o in options}


def test_bundled_exam_options_are_all_sound(kit):
    """Every option of the bundled exam builds Params whose reference has the numbers it claims."""
    import torch

    assignment = kit.assignment(EXAM)
    graders = load_graders(assignment)
    exams.validate_space(exams.VariantSpace.of(assignment), graders.module("params"))
    ref = __import__(f"{graders.package}.hidden._ref", fromlist=["module"])
    for knob, options in assignment.exam.variants:
        for option in options:
            p = graders.module("params").for_variant({knob: option})
            delivery = ref.module("delivery", p).DeliveryMLP(torch.zeros(3), torch.ones(3))
            assert sum(x.numel() for x in delivery.parameters()) == p.delivery.n_params
            assert [m.p for m in delivery.modules() if isinstance(m, torch.nn.Dropout)] == [p.delivery.p_drop]
            heads = ref.module("containers", p).TwoHead()(torch.zeros(2, 3))
            assert {k: v.shape[1] for k, v in heads.items()} == dict(p.containers.heads)
            assert sum(x.numel() for x in ref.module("containers", p).TwoHead().parameters()) == (
                p.containers.twohead_params
            )


# ----------------------------------------------------------------------------- the secret and config


def test_exam_grading_refuses_without_a_secret(ekit, monkeypatch, tmp_path):
    monkeypatch.delenv(exams.SECRET_ENV, raising=False)
    monkeypatch.delenv(exams.SECRET_FILE_ENV, raising=False)
    with pytest.raises(exams.ExamError, match="AUTOGRADER_EXAM_SECRET"):
        ExamGrader(ekit, secret=None)
    with pytest.raises(exams.ExamError, match="AUTOGRADER_EXAM_SECRET"):
        grade_batch(ekit, tmp_path, tmp_path / "out", assignment=EXAM, options=BARE)
    assert not (tmp_path / "out").exists()  # refused before anything was written
    result = CliRunner().invoke(main, ["exam", "build", "--roster", str(_roster(tmp_path, ["ada"])),
                                       "--out", str(tmp_path / "b"), "--kit", str(ROOT)])
    assert result.exit_code == 2 and "AUTOGRADER_EXAM_SECRET" in result.output
    # a short secret, and a secret file inside the kit, are refused; one outside works
    monkeypatch.setenv(exams.SECRET_ENV, "short")
    with pytest.raises(exams.ExamError, match="shorter"):
        exams.load_secret(kit_root=ROOT)
    monkeypatch.delenv(exams.SECRET_ENV)
    with pytest.raises(exams.ExamError, match="inside the kit"):
        exams.load_secret(ROOT / "grading.toml", kit_root=ROOT)
    (tmp_path / "secret").write_bytes(SECRET + b"\n")
    monkeypatch.setenv(exams.SECRET_FILE_ENV, str(tmp_path / "secret"))
    assert exams.load_secret(kit_root=ROOT) == SECRET
    # a self-check never needs the secret
    Grader(ekit, EXAM, GradeOptions(sandbox=False, public_only=True)).close()


@pytest.mark.parametrize(
    ("exam", "words"),
    [
        ({"check": "hidden"}, "exam.check"),
        ({"deadline": datetime(2025, 6, 14, 13, 0), "start": None, "cutoff": None},
         "exam.deadline has no UTC offset"),
        ({"cutoff": datetime(2025, 6, 14, 12, 0, tzinfo=DHAKA)}, "exam.cutoff must not be before"),
        ({"start": datetime(2025, 6, 14, 14, 0, tzinfo=DHAKA)}, "exam.start must be before"),
        ({"late_period": "week"}, "exam.late_period"),
        ({"late_penalty": 150}, "exam.late_penalty"),
        ({"variants": {"tinynet_hidden": [8, 8]}}, "exam.variants.tinynet_hidden lists an option twice"),
        ({"variants": {"tinynet_hidden": []}}, "exam.variants.tinynet_hidden must be a non-empty list"),
        ({"colour": "red"}, "exam.colour"),
    ],
)
def test_exam_config_errors_name_the_key(exam, words):
    with pytest.raises(ConfigError) as info:
        exam_kit(**exam)
    assert words in str(info.value)


@pytest.mark.parametrize(
    ("variants", "words"),
    [
        ({"tinyet_hidden": [8, 12]}, "variants.tinyet_hidden[0]: unknown knob"),
        ({"delivery_hidden": [[16, 8], [24]]}, "variants.delivery_hidden[1]"),
        ({"twohead_heads": [{"time": 1, "late": 2}, {"time": 1}]}, "variants.twohead_heads[1]"),
    ],
)
def test_unknown_or_bad_options_are_refused_before_grading(variants, words):
    with pytest.raises(ConfigError) as info:
        ExamGrader(exam_kit(variants=variants)).close()
    assert words in str(info.value)


def test_naive_times_use_the_exam_time_zone():
    kit = exam_kit(timezone="Asia/Dhaka", deadline=datetime(2025, 6, 14, 13, 0), start=None, cutoff=None)
    exam = kit.assignment(EXAM).exam
    assert exam.deadline == DEADLINE and exam.cutoff is None  # a late penalty and no cutoff: never closes
    plain = exam_kit(late_penalty=0, cutoff=None).assignment(EXAM).exam
    assert plain.cutoff == DEADLINE  # without a late policy the deadline is the cutoff


def test_build_refuses_an_exam_and_points_to_exam_build():
    with pytest.raises(ConfigError, match="autograder exam build"):
        build_assignment(ROOT, EXAM, ROOT / "build-should-not-exist")
    assert not (ROOT / "build-should-not-exist").exists()


# ----------------------------------------------------------------------------- grading every variant


@pytest.mark.parametrize("i", [0, 1, 2])
def test_every_variant_reference_scores_100_and_its_stubs_0(egrader, ekit, tmp_path, i):
    variant = diagonal(egrader, i)
    reference = write_reference(egrader, variant, tmp_path / "reference")
    result = egrader.grade(reference, student=f"ref{i}", variant=variant)
    failing = [(c.check_id, c.feedback) for t in result.tasks for c in t.checks if not c.passed]
    assert failing == []
    assert result.score == result.max_score == 100
    assert result.exam["variant"] == variant.code and result.exam["choices"] == variant.choices
    assert result.exam["swapped"] == []

    files = bundle_files(ekit, ekit.assignment(EXAM), f"stub{i}", variant, egrader.graders)
    stubs = egrader.grade(write_files(files, tmp_path / "stubs"), student=f"stub{i}", variant=variant)
    assert stubs.score == 0
    for task in stubs.tasks:
        assert task.max_score > 0 and task.score == 0
        assert all("NotImplementedError" in c.feedback for c in task.checks), task.task

    # The titles and feedback state this variant's numbers.
    p = egrader.graders_for(variant).params
    titles = {c.check_id: c.title for t in result.tasks for c in t.checks}
    assert titles["delivery.parameter_count"].startswith(f"DeliveryMLP has {p.delivery.n_params} parameters")
    assert p.tinynet.label in titles["tinynet.weight_shapes"]


def test_a_student_is_graded_against_the_variant_of_their_id(egrader, tmp_path):
    variant = egrader.space.derive(SECRET, "ada")
    result = egrader.grade(write_reference(egrader, variant, tmp_path / "ada"))
    assert result.student == "ada" and result.exam["variant"] == variant.code
    assert result.score == 100, [(c.check_id, c.feedback) for t in result.tasks for c in t.checks
                                 if not c.passed]


def _swap_pair(space: exams.VariantSpace) -> tuple[str, str]:
    """Two students whose DeliveryMLP and TwoHead numbers both differ."""
    derive = {s: space.derive(SECRET, s) for s in STUDENTS}
    for a, b in combinations(STUDENTS, 2):
        ca, cb = derive[a].choices, derive[b].choices
        if all(ca[k] != cb[k] for k in ("delivery_hidden", "twohead_heads")):
            return a, b
    raise AssertionError("no pair of students with different numbers")


def test_a_swapped_variant_loses_its_points_and_is_flagged(egrader, ekit, tmp_path):
    ada, bob = _swap_pair(egrader.space)
    theirs = egrader.space.derive(SECRET, bob)
    copied = write_reference(egrader, theirs, tmp_path / ada)  # ada hands in bob's exam
    result = egrader.grade(copied)
    assert result.student == ada and result.exam["variant"] == egrader.space.derive(SECRET, ada).code
    lost = {t.task for t in result.tasks if t.score < t.max_score}
    assert lost == {"delivery", "containers"}  # the variant-dependent tasks, nothing else
    swapped = {s["task"]: s for s in result.exam["swapped"]}
    assert set(swapped) == {"delivery", "containers"}
    assert swapped["delivery"]["found"]["delivery_hidden"] == theirs.choices["delivery_hidden"]
    assert swapped["containers"]["found"]["twohead_heads"] == theirs.choices["twohead_heads"]
    assert all(s["found_score"] == s["max_score"] > s["own_score"] for s in swapped.values())
    assert sum("another student's exam version" in note for note in result.notes) == 2

    honest = egrader.grade(write_reference(egrader, theirs, tmp_path / bob))
    assert honest.score == 100 and honest.exam["swapped"] == []
    summary = summarize([result, honest], ekit.assignment(EXAM), {}, 1.0)
    rows = {row.task: row for row in summary.swaps}
    assert set(rows) == {"delivery", "containers"} and all(row.student == ada for row in rows.values())
    assert bob in rows["containers"].matches
    html = render_html(summary)
    assert "Suspected swapped variants" in html and 'id="swaps"' in html and ada in html

    out = reports.write_student(tmp_path / "out", result, ekit.assignment(EXAM))
    data = json.loads((out / "results.json").read_text())
    assert data["extra_data"]["exam"]["swapped"] and "another student's exam version" in data["output"]
    assert "another student's exam version" in (out / "feedback.md").read_text()


# ----------------------------------------------------------------------------- lateness


@pytest.mark.parametrize(
    ("delay", "status", "percent"),
    [
        (timedelta(hours=-1), "on_time", 0),
        (timedelta(0), "on_time", 0),  # exactly at the deadline
        (timedelta(seconds=1), "late", 10),  # one second late: one started hour
        (timedelta(hours=1), "late", 10),
        (timedelta(hours=1, seconds=1), "late", 20),
        (CUTOFF - DEADLINE, "late", 20),  # exactly at the cutoff: still accepted
        (CUTOFF - DEADLINE + timedelta(seconds=1), "past_cutoff", 100),
    ],
)
def test_late_policy_at_the_boundaries(ekit, delay, status, percent):
    exam = ekit.assignment(EXAM).exam
    late = timing.lateness(exam, DEADLINE + delay)
    assert (late.status, late.percent) == (status, percent)
    penalty = late.penalty(80.0, 100.0, exam.late_penalty_of)
    assert penalty == (80.0 if status == "past_cutoff" else 80.0 * percent / 100)


def test_late_policy_variants():
    kit = exam_kit(late_penalty_of="max", late_penalty=25, late_period="day", cutoff=None)
    by_max = kit.assignment(EXAM).exam
    late = timing.lateness(by_max, DEADLINE + timedelta(days=1, seconds=1))
    assert (late.status, late.periods, late.percent) == ("late", 2, 50)
    assert late.penalty(30.0, 100.0, "max") == 30.0  # 50 of the maximum, never below zero
    assert timing.lateness(by_max, DEADLINE + timedelta(days=30)).percent == 100  # no cutoff: capped
    assert timing.lateness(by_max, None).status == "unknown"
    assert timing.lateness(by_max, START - timedelta(minutes=1)).status == "before_start"
    strict = exam_kit(late_penalty=0, cutoff=None).assignment(EXAM).exam
    assert timing.lateness(strict, DEADLINE + timedelta(seconds=1)).status == "past_cutoff"


def test_submission_times_come_from_platform_metadata_never_mtimes(ekit, tmp_path):
    tz = ekit.assignment(EXAM).exam.tz
    nb = tmp_path / "nb" / "nn_module_exam"
    nb.mkdir(parents=True)
    (nb / "tinynet.py").write_text("x = 1\n")
    (nb / "timestamp.txt").write_text("2025-06-14 07:00:01.000000 UTC\n")  # nbgrader's format
    assert timing.submission_time(tmp_path / "nb", "nb", tz) == timing.SubmittedAt(
        DEADLINE + timedelta(seconds=1), "timestamp.txt"
    )
    gs = tmp_path / "gs"
    gs.mkdir()
    (gs / "submission_metadata.json").write_text(json.dumps({"created_at": "2025-06-14T12:59:59.5+06:00"}))
    assert timing.submission_time(gs, "gs", tz).moment == DEADLINE - timedelta(seconds=0.5)
    with zipfile.ZipFile(tmp_path / "zipped.zip", "w") as archive:
        archive.writestr("zipped/tinynet.py", "x = 1\n")
        archive.writestr("zipped/timestamp.txt", "2025-06-14 13:30:00")  # no zone: the exam's
    zipped = timing.submission_time(tmp_path / "zipped.zip", "zipped", tz)
    assert zipped == timing.SubmittedAt(DEADLINE + timedelta(minutes=30), "timestamp.txt")
    # The instructor's times list wins; a folder with only files (and their mtimes) has no time.
    listed = _write(tmp_path / "times.csv", "student,submitted\nNB,2025-06-14T13:00:00+06:00\n")
    times = timing.read_times(listed, tz)
    listed_first = timing.submission_time(tmp_path / "nb", "nb", tz, times)
    assert listed_first == timing.SubmittedAt(DEADLINE, "times list")
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "tinynet.py").write_text("x = 1\n")
    when = timing.submission_time(bare, "bare", tz)
    assert when.moment is None and "timestamp.txt" in when.problem
    (nb / "timestamp.txt").write_text("yesterday-ish\n")
    assert "not readable" in timing.submission_time(tmp_path / "nb", "nb", tz).problem
    with pytest.raises(exams.ExamError, match="times.csv:2"):
        timing.read_times(_write(tmp_path / "times.csv", "student,time\nada,soon\n"), tz)


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _roster(folder: Path, students: list[str]) -> Path:
    return _write(folder / "roster.csv", "student,name\n" + "".join(f"{s},{s.title()}\n" for s in students))


def test_penalties_show_in_results_feedback_and_grades(ekit, tmp_path):
    """A class graded in one batch: on time (nbgrader), one second late (Gradescope), past the
    cutoff (--times list), and one without any time."""
    klass = tmp_path / "class"
    grader_like = _Rewriter(ekit)
    for student in ("ontime", "late", "cutoff", "undated"):
        write_reference(grader_like, grader_like.space.derive(SECRET, student), klass / student)
    (klass / "ontime" / "timestamp.txt").write_text("2025-06-14 07:00:00.000000 UTC\n")
    metadata = {"created_at": "2025-06-14T13:00:01+06:00", "users": [{"name": "Late"}]}
    (klass / "late" / "submission_metadata.json").write_text(json.dumps(metadata))
    times = timing.read_times(_write(tmp_path / "times.csv", "cutoff,2025-06-14T15:00:01+06:00\n"), DHAKA)
    out = tmp_path / "out"
    grade_batch(ekit, klass, out, assignment=EXAM, jobs=1, options=BARE, secret=SECRET,
                times=times)

    results = {p.parent.name: json.loads(p.read_text()) for p in out.glob("*/results.json")}
    scores = {s: r["score"] for s, r in results.items()}
    assert scores == {"ontime": 100, "late": 90, "cutoff": 0, "undated": 100}
    late = results["late"]
    assert late["extra_data"]["raw_score"] == 100 and late["extra_data"]["late_penalty"] == 10
    assert late["extra_data"]["exam"]["late"]["status"] == "late"
    assert "late penalty of 10%" in late["output"] and "submission_metadata.json" in late["output"]
    assert "after the cutoff" in results["cutoff"]["output"]
    assert "No submission time was found" in results["undated"]["output"]
    assert "late penalty -10" in (out / "late" / "feedback.md").read_text()
    assert "late penalty of 10%" in (out / "late" / "feedback.md").read_text()

    rows = list(csv.DictReader(io.StringIO((out / "grades.csv").read_text())))
    by = {r["student"]: r for r in rows}
    assert list(rows[0])[:3] == ["student", "variant", "submitted_at"]
    assert (by["late"]["late_penalty"], by["late"]["total"]) == ("10", "90")
    assert (by["cutoff"]["late_penalty"], by["cutoff"]["total"]) == ("100", "0")
    assert by["ontime"]["late_penalty"] == "0" and by["ontime"]["variant"].startswith("v")
    html = (out / "report.html").read_text()
    assert "Late and undated submissions" in html and "past cutoff" in html
    assert "Results per variant" in html and 'id="variant-options"' in html


class _Rewriter:
    """What write_reference needs of a Grader, without starting a worker."""

    def __init__(self, kit: Kit):
        assignment = kit.assignment(EXAM)
        self.graders = load_graders(assignment)
        self.space = exams.VariantSpace.of(assignment)

    def graders_for(self, variant: exams.Variant) -> Any:
        return self.graders.with_params(self.graders.module("params").for_variant(variant.choices))


# ----------------------------------------------------------------------------- bundles


def test_bundles_hold_each_students_numbers_and_no_hidden_check_or_solution(ekit, tmp_path):
    roster = _roster(tmp_path, ["ada", "bob", "carol"])
    out = tmp_path / "bundles"
    bundles = build_bundles(ekit, ekit.assignment(EXAM), read_roster(roster), out, SECRET)
    assert [b.student for b in bundles] == ["ada", "bob", "carol"]
    manifest = list(csv.DictReader((out / "manifest.csv").open()))
    assert [(m["student"], m["variant"]) for m in manifest] == [(b.student, b.variant.code) for b in bundles]
    rewriter = _Rewriter(ekit)
    hidden = [p.read_text() for p in (SOLUTIONS / "graders" / "hidden").glob("*.py") if p.stat().st_size]
    hidden_checks = {name for text in hidden for name in re.findall(r"def (test_\w+)", text)}
    for bundle in bundles:
        files = {p.relative_to(bundle.folder).as_posix(): p.read_bytes()
                 for p in bundle.folder.rglob("*") if p.is_file()}
        with zipfile.ZipFile(bundle.zip) as archive:
            zipped = {n.split("/", 1)[1]: archive.read(n) for n in archive.namelist()}
        assert zipped == files
        params = rewriter.graders_for(bundle.variant).params
        references = {name: rewriter.graders.module("reference_variants").variant_source(
            name, (SOLUTIONS / name).read_text(), params) for name in TASK_FILES}
        secret_lines = set().union(*(solution_lines(text, name) for name, text in references.items()))
        for rel, data in files.items():
            if rel.endswith(".whl"):  # the kit's wheel (tests/authoring/test_student_folders.py)
                continue
            text = data.decode("utf-8")
            assert not has_markers(text) and "BEGIN SOLUTION" not in text, rel
            assert "hidden" not in rel.split("/") and "reference" not in rel, rel
            assert not {"correct", "misconceptions.toml"} & set(rel.split("/")), rel  # the catalogue
            assert text not in hidden and not {f"def {n}(" for n in hidden_checks if f"def {n}(" in text}, rel
            if not rel.startswith("checks/"):
                assert not secret_lines & {line.strip() for line in text.splitlines()}, rel
        shipped = {"README.md", "data.py", "checks/manifest.json", "checks/variant.json", *TASK_FILES}
        assert shipped <= set(files)
        assert "grading.toml" not in files  # the manifest carries what the check needs
        assert files["data.py"] == (SOLUTIONS / "data.py").read_bytes()
        assert json.loads(files["checks/variant.json"]) == bundle.variant.choices
        # the student's numbers are in their stubs' docstrings and their README
        h1, h2 = bundle.variant.choices["delivery_hidden"]
        delivery = files["delivery.py"].decode()
        assert f"nn.Linear(3, {h1})" in delivery and f"nn.Linear({h1}, {h2})" in delivery
        assert f"p_drop: float = {bundle.variant.choices['delivery_p_drop']!r}" in delivery
        assert 'raise NotImplementedError("delivery: write DeliveryMLP.__init__")' in delivery
        heads = bundle.variant.choices["twohead_heads"]
        assert all(f'"{name}": nn.Linear(16, {width})' in files["containers.py"].decode()
                   for name, width in heads.items())
        readme = files["README.md"].decode()
        assert f"## Your exam: `{bundle.student}`" in readme and bundle.variant.code in readme
        assert f"{params.delivery.n_params} parameters" in readme
        assert "Submit by 2025-06-14 13:00:00+06:00" in readme
        assert "autograder check" in readme
    codes = {b.variant.code for b in bundles}
    assert len(codes) > 1


def test_self_check_in_a_bundle_uses_the_students_numbers(ekit, tmp_path):
    roster = _roster(tmp_path, STUDENTS)
    bundles = build_bundles(ekit, ekit.assignment(EXAM), read_roster(roster), tmp_path / "b",
                                  SECRET)
    lesson = [b for b in bundles if b.variant.choices["delivery_hidden"] != [16, 8]][0]
    folder = lesson.folder
    shutil.copy(SOLUTIONS / "delivery.py", folder / "delivery.py")  # the lesson's numbers, not theirs
    result = CliRunner().invoke(main, ["check", str(folder)])
    assert result.exit_code == 1, result.output  # the lesson's numbers fail the student's own
    n_params = _Rewriter(ekit).graders_for(lesson.variant).params.delivery.n_params
    assert f"DeliveryMLP has {n_params} parameters" in result.output
    assert re.search(r"FAIL DeliveryMLP has \d+ parameters", result.output)
    assert "public checks:" in result.output

    closed = exam_kit(check="none")
    roster = read_roster(_roster(tmp_path, ["ada"]))
    quiet = build_bundles(closed, closed.assignment(EXAM), roster, tmp_path / "closed", SECRET)[0]
    assert [p.name for p in (quiet.folder / "checks").iterdir()] == ["manifest.json"]
    assert "Self-checks are turned off during this exam" in (quiet.folder / "README.md").read_text()
    result = CliRunner().invoke(main, ["check", str(quiet.folder)])
    assert result.exit_code == 0 and "turned off" in result.output and "PASS" not in result.output


def test_exam_cli_build_and_variant(tmp_path, monkeypatch):
    monkeypatch.delenv(exams.SECRET_ENV, raising=False)
    secret = _write(tmp_path / "secret.txt", SECRET.decode())
    roster = _roster(tmp_path, ["ada", "bob"])
    options = ["--secret-file", str(secret), "--kit", str(ROOT)]
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["exam", "build", "--roster", str(roster), "--out", str(out), *options])
    assert result.exit_code == 0, result.output
    assert "wrote 2 exam folders" in result.output
    assert (tmp_path / "out" / "ada.zip").is_file() and (tmp_path / "out" / "bob" / "README.md").is_file()
    shown = CliRunner().invoke(main, ["exam", "variant", "ada", *options])
    space = exams.VariantSpace.of(load_kit(ROOT).assignment(EXAM))
    assert shown.exit_code == 0 and space.derive(SECRET, "ada").code in shown.output
    bad = _write(tmp_path / "bad.csv", "name\nAda\n")
    result = CliRunner().invoke(main, ["exam", "build", "--roster", str(bad), "--out", str(tmp_path / "x"),
                                       *options])
    assert result.exit_code == 2 and "id column" in result.output


# ----------------------------------------------------------------------------- the class report


def _exam_result(student: str, code: str, choices: dict, raw: float, **exam: Any) -> SubmissionResult:
    from autograder.grading.results import CheckResult, TaskResult

    check = CheckResult("delivery.a", "delivery", "a", "A", raw, 100.0, True)
    info = {"variant": code, "choices": choices, "late": {"status": "on_time"}, "swapped": [], **exam}
    return SubmissionResult(student, EXAM, (TaskResult("delivery", 100.0, (check,)),), exam=info)


def test_class_report_shows_results_per_variant(ekit):
    easy, hard = {"delivery_hidden": [16, 8]}, {"delivery_hidden": [24, 12]}
    results = [_exam_result(f"e{i}", "v0", easy, 90) for i in range(4)]
    results += [_exam_result(f"h{i}", "v1", hard, 50) for i in range(3)]
    summary = summarize(results, ekit.assignment(EXAM), {}, 1.0)
    assert [(v.code, len(v.students), v.mean) for v in summary.variants] == [("v0", 4, 90), ("v1", 3, 50)]
    options = {o.option: o for o in summary.options}
    assert options["[24, 12]"].unfair and not options["[16, 8]"].unfair
    html = render_html(summary)
    assert "Results per variant" in html and "[24, 12]" in html and 'class="unfair"' in html
    # exercises keep their report as it was
    plain = render_html(summarize([], load_kit(ROOT).assignment("nn_module"), {}, 1.0))
    assert "Results per variant" not in plain and "swapped" not in plain


def test_results_round_trip_through_the_gradebook(tmp_path):
    from autograder.ledger.book import Gradebook

    result = _exam_result("ada", "v1", {"delivery_hidden": [24, 12]}, 80)
    late = SubmissionResult(result.student, result.assignment, result.tasks, ("late",), 0.0, "", 8.0,
                            result.exam)
    book = Gradebook(tmp_path / "g.sqlite")
    try:
        book.record(late)
        (again,) = book.current(EXAM)
    finally:
        book.close()
    assert again == late and again.score == 72 and again.raw_score == 80
