"""The class report: what the class scored and what it got wrong, as one self-contained HTML page."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from string import Formatter

from jinja2 import Environment, FileSystemLoader, select_autoescape

from . import __version__
from .config import Assignment
from .results import SubmissionResult

TEMPLATES = Path(__file__).resolve().parent / "templates"
ENGINE_KEYS = "engine."
EXAMPLES_SHOWN = 5


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


@dataclass(frozen=True)
class Ungraded:
    student: str
    task: str  # "" for the whole submission
    reason: str


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


def summarize(
    results: list[SubmissionResult], assignment: Assignment, messages: dict[str, dict[str, str]], seconds: float
) -> ClassSummary:
    results = sorted(results, key=lambda r: r.student)
    task_ids = [t.id for t in assignment.tasks]
    task_scores: dict[str, list[float]] = defaultdict(list)
    task_full: Counter[str] = Counter()
    passed: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    meta: dict[str, tuple[str, float]] = {}
    by_key: dict[str, list[str]] = defaultdict(list)
    key_task: dict[str, str] = {}
    ungraded: list[Ungraded] = []
    for result in results:
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
            for reason in sorted(engine_reasons):
                if reason != "engine.not_implemented":
                    ungraded.append(Ungraded(result.student, task.task, reason.removeprefix(ENGINE_KEYS)))
    checks = tuple(
        CheckRate(cid, meta[cid][0], meta[cid][1], passed[cid], seen[cid])
        for cid in sorted(meta, key=lambda c: (passed[c] / seen[c], c))
    )
    misconceptions = tuple(
        Misconception(key, key_task[key], _idea(messages, key), tuple(students))
        for key, students in sorted(by_key.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    )
    return ClassSummary(
        title=assignment.title,
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
        seconds=seconds,
    )


def _svg_bars(values: list[float], labels: list[str], maximum: float, width: int = 640, unit: str = "") -> str:
    """A horizontal-axis bar chart as inline SVG: readable without JavaScript or network."""
    height, pad, top = 220, 30, 12
    n = max(len(values), 1)
    step = (width - 2 * pad) / n
    bar = step * 0.7
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 {width} {height + 40}" '
             f'width="100%" style="max-width:{width}px">']  # fmt: skip
    parts.append(f'<line x1="{pad}" y1="{height}" x2="{width - pad}" y2="{height}" stroke="#555"/>')
    for i, (value, label) in enumerate(zip(values, labels, strict=True)):
        h = 0 if maximum <= 0 else (height - top - 10) * value / maximum
        x = pad + i * step + (step - bar) / 2
        parts.append(f'<rect x="{x:.1f}" y="{height - h:.1f}" width="{bar:.1f}" height="{h:.1f}" fill="#3b6ea5">'
                     f"<title>{label}: {value:g}{unit}</title></rect>")  # fmt: skip
        parts.append(f'<text x="{x + bar / 2:.1f}" y="{height - h - 3:.1f}" font-size="11" '
                     f'text-anchor="middle">{value:g}{unit}</text>')  # fmt: skip
        parts.append(f'<text x="{x + bar / 2:.1f}" y="{height + 14}" font-size="10" '
                     f'text-anchor="middle">{label}</text>')  # fmt: skip
    parts.append("</svg>")
    return "".join(parts)


def render_html(summary: ClassSummary) -> str:
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html", "j2"]))
    counts = summary.histogram()
    width = summary.max_score / len(counts)
    labels = [f"{i * width:g}–{(i + 1) * width:g}" for i in range(len(counts))]
    histogram = _svg_bars([float(c) for c in counts], labels, max(counts or [1]))
    task_ids = list(summary.task_means)
    task_pct = [round(100 * summary.task_means[t] / summary.task_max[t], 1) if summary.task_max[t] else 0.0
                for t in task_ids]  # fmt: skip
    tasks_chart = _svg_bars(task_pct, task_ids, 100.0, unit="%")
    return env.get_template("report.html.j2").render(
        s=summary, histogram=histogram, tasks_chart=tasks_chart, examples_shown=EXAMPLES_SHOWN,
        version=__version__,
    )  # fmt: skip


def write_report(out: Path, summary: ClassSummary) -> Path:
    path = out / "report.html"
    path.write_text(render_html(summary), encoding="utf-8")
    return path
