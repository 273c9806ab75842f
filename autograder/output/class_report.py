"""The class report: what the class scored and what it got wrong, as one self-contained HTML page."""

from __future__ import annotations

import dataclasses
import json
import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from string import Formatter
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

from autograder import __version__, atomic
from autograder.config import Assignment
from autograder.exam.variants import knob_reach
from autograder.grading.results import SubmissionResult
from autograder.output.charts import bar_chart
from autograder.output.exam_stats import ExamStatistics, exam_statistics
from autograder.output.pages import (
    REPORT_UI,
    assignment_title,
    font_css,
    font_family,
    inert,
    inline_code,
    reason_text,
)
from autograder.output.similarity_files import SimilarityFindings, load_similarity
from autograder.output.similarity_pages import engine_ui

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"


@lru_cache(maxsize=1)
def templates() -> Environment:
    """The kit's page templates, compiled once per process (compiling one costs ~50 ms)."""
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html", "j2"]),
                      finalize=inert)
    env.filters["code"] = inline_code
    env.filters["why"] = reason_text
    return env
ENGINE_KEYS = "engine."
TAMPERED = "engine.tampered"  # never an ordinary mistake: listed for academic-integrity review
EXAMPLES_SHOWN = 5
SIMILAR_SHOWN = 50  # pairs of students listed; similarity.csv has every file pair above the floor


@dataclass(frozen=True)
class CheckRate:
    check_id: str
    title: str
    points: float
    passed: int
    total: int

    @property
    def rate(self) -> float:
        return self.passed / self.total if self.total else 0.0


@dataclass(frozen=True)
class Misconception:
    key: str
    task: str
    idea: str
    students: tuple[str, ...]
    title: str = ""  # what the report names it by (misconception_title)


@dataclass(frozen=True)
class Ungraded:
    student: str
    task: str  # "" for the whole submission
    reason: str
    skipped: bool = False  # an entry of the submissions folder the batch did not grade (`student`: its name)


@dataclass(frozen=True)
class VariantRow:
    """The students of one exam variant and how the checks judged them (before late penalties)."""

    code: str
    description: str
    students: tuple[str, ...]
    mean: float
    task_pct: dict[str, float]


@dataclass(frozen=True)
class OptionRow:
    """One option of one knob: with many variants, this is where an unfair number shows."""

    knob: str
    option: str
    students: int
    mean: float
    delta: float  # mean minus the mean of the whole class
    task_pct: dict[str, float]
    unfair: bool = False  # at least 3 students and 10% of the maximum below the class


@dataclass(frozen=True)
class SwapRow:
    """A task that implements another variant's numbers than the student's own."""

    student: str
    task: str
    found: str
    own: str
    own_score: float
    found_score: float
    max_score: float
    matches: tuple[str, ...]  # classmates whose variant has exactly the numbers found


@dataclass(frozen=True)
class LateRow:
    student: str
    submitted_at: str
    status: str
    percent: float
    penalty: float
    raw: float
    score: float


@dataclass(frozen=True)
class ReviewRow:
    """For academic-integrity review: a task whose probes were changed, or a line that introspects."""

    student: str
    task: str
    what: str
    tampered: bool  # the worker saw its probes change: the task scored 0 for that


@dataclass(frozen=True)
class ClassSummary:
    """Every number the report shows, computed once from the gradebook's results."""

    title: str
    assignment: str
    students: int
    max_score: float
    scores: tuple[float, ...]
    task_means: dict[str, float]
    task_max: dict[str, float]
    task_full: dict[str, int]
    checks: tuple[CheckRate, ...]
    misconceptions: tuple[Misconception, ...]
    ungraded: tuple[Ungraded, ...]
    seconds: float
    generated: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    exam: bool = False
    variants: tuple[VariantRow, ...] = ()
    options: tuple[OptionRow, ...] = ()
    swaps: tuple[SwapRow, ...] = ()
    late: tuple[LateRow, ...] = ()
    review: tuple[ReviewRow, ...] = ()
    ui: dict[str, str] = field(default_factory=dict, hash=False)  # the page's labels, in `lang`
    lang: str = "en"
    # Issue #30: item and variant statistics; what the last similarity run on OUT found (None: none ran).
    stats: ExamStatistics | None = None
    similarity: SimilarityFindings | None = None

    @property
    def mean(self) -> float:
        return statistics.fmean(self.scores) if self.scores else 0.0

    @property
    def median(self) -> float:
        return statistics.median(self.scores) if self.scores else 0.0

    def histogram(self, bins: int = 10) -> list[int]:
        counts = [0] * bins
        for score in self.scores:
            share = score / self.max_score if self.max_score else 0.0
            counts[min(int(share * bins), bins - 1)] += 1
        return counts


def _idea(messages: dict[str, dict[str, str]], key: str) -> str:
    text = messages.get(key, {}).get("idea", "")
    # Ideas are shown without a student's values: fill any placeholder with an ellipsis.
    names = {name for _, name, _, _ in Formatter().parse(text) if name}
    return text.format_map(dict.fromkeys(names, "…")) if names else text


def misconception_title(messages: dict[str, dict[str, str]], key: str, check_title: str) -> str:
    """The name of message `key` in the report's language: the message's own `title` when its
    catalogue gives one, else the catalogue's [titles] entry for it (a key that is a check id), else
    the title of the check that failed with it (what the student's code did not do)."""
    return (messages.get(key, {}).get("title") or messages.get("titles", {}).get(key)
            or check_title or key)


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _show(value: Any) -> str:
    from autograder.exam.variants import show

    return show(value)


def _task_pct(group: list[SubmissionResult], task_max: dict[str, float]) -> dict[str, float]:
    pct = {}
    for task, top in task_max.items():
        scores = [t.score for r in group for t in r.tasks if t.task == task]
        pct[task] = round(100 * statistics.fmean(scores) / top, 1) if scores and top else 0.0
    return pct


@dataclass(frozen=True)
class ExamRows:
    variants: tuple[VariantRow, ...] = ()
    options: tuple[OptionRow, ...] = ()
    swaps: tuple[SwapRow, ...] = ()
    late: tuple[LateRow, ...] = ()


def exam_rows(results: list[SubmissionResult], assignment: Assignment) -> ExamRows:
    """Per variant, per knob option, suspected swaps and late submissions, from results' exam data."""
    task_max = {t.id: t.points for t in assignment.tasks}
    graded = [r for r in results if r.exam.get("variant")]
    class_mean = statistics.fmean(r.raw_score for r in graded) if graded else 0.0
    by_variant: dict[str, list[SubmissionResult]] = defaultdict(list)
    by_option: dict[tuple[str, str], list[SubmissionResult]] = defaultdict(list)
    option_text: dict[tuple[str, str], str] = {}
    for r in graded:
        by_variant[r.exam["variant"]].append(r)
        for knob, value in r.exam.get("choices", {}).items():
            by_option[(knob, _key(value))].append(r)
            option_text[(knob, _key(value))] = _show(value)
    variants = tuple(
        VariantRow(code, ", ".join(f"{k} = {_show(v)}" for k, v in group[0].exam.get("choices", {}).items()),
                   tuple(r.student for r in group), statistics.fmean(r.raw_score for r in group),
                   _task_pct(group, task_max))
        for code, group in sorted(by_variant.items())
    )
    # Every declared option in grading.toml's order (one nobody drew shows 0 students), then any
    # option the results hold that the exam no longer declares.
    declared = assignment.exam.variants if assignment.exam else ()
    order = [(knob, _key(option)) for knob, options in declared for option in options]
    for knob, key in order:
        option_text.setdefault((knob, key), _show(json.loads(key)))
    order += [k for k in by_option if k not in order]
    options = []
    for knob, key in order:
        group = by_option.get((knob, key), [])
        mean = statistics.fmean(r.raw_score for r in group) if group else 0.0
        unfair = len(group) >= 3 and class_mean - mean >= 0.1 * assignment.max_score
        delta = mean - class_mean if group else 0.0
        pct = _task_pct(group, task_max)
        options.append(OptionRow(knob, option_text[(knob, key)], len(group), mean, delta, pct, unfair))
    swaps = []
    for r in results:
        for finding in r.exam.get("swapped", []):
            found = finding.get("found", {})
            matches = tuple(
                other.student for other in graded
                if other.student != r.student
                and all(_key(other.exam.get("choices", {}).get(k)) == _key(v) for k, v in found.items())
            )
            swaps.append(SwapRow(
                r.student, finding.get("task", ""), ", ".join(f"{k} = {_show(v)}" for k, v in found.items()),
                ", ".join(f"{k} = {_show(v)}" for k, v in finding.get("own", {}).items()),
                float(finding.get("own_score", 0)), float(finding.get("found_score", 0)),
                float(finding.get("max_score", 0)), matches,
            ))
    late = tuple(
        LateRow(r.student, str(r.exam.get("submitted_at") or "unknown"), r.exam["late"]["status"],
                float(r.exam["late"].get("percent", 0)), r.penalty, r.raw_score, r.score)
        for r in results
        if r.exam.get("late", {}).get("status") in ("late", "past_cutoff", "unknown", "before_start")
    )
    return ExamRows(variants, tuple(options), tuple(swaps), late)


def summarize(
    results: list[SubmissionResult], assignment: Assignment, messages: dict[str, dict[str, str]],
    seconds: float, lang: str = "en", skipped: Sequence[tuple[str, str]] = (),
) -> ClassSummary:
    """`skipped`: (entry name, why) of each entry of the submissions folder that was not graded."""
    results = sorted(results, key=lambda r: r.student)
    task_ids = [t.id for t in assignment.tasks]
    task_scores: dict[str, list[float]] = defaultdict(list)
    task_full: Counter[str] = Counter()
    passed: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    meta: dict[str, tuple[str, float]] = {}
    by_key: dict[str, list[str]] = defaultdict(list)
    key_task: dict[str, str] = {}
    key_check: dict[str, tuple[str, str]] = {}  # message key -> (check id, title) of its first failed check
    ungraded: list[Ungraded] = [Ungraded(name, "", why, skipped=True) for name, why in skipped]
    review: list[ReviewRow] = []
    for result in results:
        review += [ReviewRow(result.student, flag.split(":", 1)[0], flag, False) for flag in result.review]
        if result.problem:
            ungraded.append(Ungraded(result.student, "", result.problem))
        for task in result.tasks:
            task_scores[task.task].append(task.score)
            task_full[task.task] += task.score >= task.max_score
            engine_reasons = set()
            for check in task.checks:
                meta[check.check_id] = (check.title, check.max_score)
                seen[check.check_id] += 1
                passed[check.check_id] += check.passed
                if check.passed or not check.message_key:
                    continue
                if check.message_key.startswith(ENGINE_KEYS):
                    engine_reasons.add(check.message_key)
                elif result.student not in by_key[check.message_key]:
                    by_key[check.message_key].append(result.student)
                    key_task[check.message_key] = task.task
                if not check.message_key.startswith(ENGINE_KEYS):
                    failed = key_check.setdefault(check.message_key, (check.check_id, check.title))
                    key_check[check.message_key] = min(failed, (check.check_id, check.title))
            for reason in sorted(engine_reasons):
                if reason == TAMPERED:
                    what = next((c.feedback for c in task.checks if c.message_key == TAMPERED), "")
                    first = what.splitlines()[0] if what else ""
                    review.append(ReviewRow(result.student, task.task, first, True))
                elif reason != "engine.not_implemented":
                    ungraded.append(Ungraded(result.student, task.task, reason.removeprefix(ENGINE_KEYS)))
    checks = tuple(
        CheckRate(cid, meta[cid][0], meta[cid][1], passed[cid], seen[cid])
        for cid in sorted(meta, key=lambda c: (passed[c] / seen[c], c))
    )
    misconceptions = tuple(
        Misconception(key, key_task[key], _idea(messages, key), tuple(students),
                      misconception_title(messages, key, key_check[key][1]))
        for key, students in sorted(by_key.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    )
    exam = exam_rows(results, assignment)
    return ClassSummary(
        title=assignment_title(assignment.id, assignment.title, messages.get("titles", {})),
        assignment=assignment.id,
        students=len(results),
        max_score=assignment.max_score,
        scores=tuple(r.score for r in results),
        task_means={t: statistics.fmean(task_scores[t]) if task_scores[t] else 0.0 for t in task_ids},
        task_max={t.id: t.points for t in assignment.tasks},
        task_full={t: task_full[t] for t in task_ids},
        checks=checks,
        misconceptions=misconceptions,
        ungraded=tuple(ungraded),
        review=tuple(sorted(review, key=lambda r: (not r.tampered, r.student, r.task))),
        ui={**REPORT_UI, **engine_ui(), **messages.get("ui", {})},
        lang=lang,
        stats=exam_statistics(results, assignment.exam.variants if assignment.exam else (),
                              knob_reach(assignment)),
        seconds=seconds,
        exam=assignment.exam is not None or any(r.exam for r in results),
        variants=exam.variants,
        options=exam.options,
        swaps=exam.swaps,
        late=exam.late,
    )


def render_html(summary: ClassSummary) -> str:
    env = templates()
    ui = {**REPORT_UI, **engine_ui(), **summary.ui}
    counts = summary.histogram()
    width = summary.max_score / len(counts)
    labels = [f"{i * width:g}–{(i + 1) * width:g}" for i in range(len(counts))]
    histogram = bar_chart([float(c) for c in counts], labels, max(counts or [1]),
                          f"{ui['score_distribution']} ({ui['students']})")
    task_ids = list(summary.task_means)
    task_pct = [round(100 * summary.task_means[t] / summary.task_max[t], 1) if summary.task_max[t] else 0.0
                for t in task_ids]
    tasks_chart = bar_chart(task_pct, task_ids, 100.0, f"{ui['tasks']} ({ui['mean']}, %)", unit="%")
    return env.get_template("report.html.j2").render(
        s=summary, ui=ui, histogram=histogram,
        tasks_chart=tasks_chart, similar_shown=SIMILAR_SHOWN,
        examples_shown=EXAMPLES_SHOWN, version=__version__, font_css=font_css(summary.lang),
        font_family=font_family(summary.lang),
    )


def write_report(out: Path, summary: ClassSummary) -> Path:
    """OUT/report.html, with the findings of the last similarity run on OUT when it has them."""
    if summary.similarity is None:
        summary = dataclasses.replace(summary, similarity=load_similarity(out))
    return atomic.write_text(out / "report.html", render_html(summary))
