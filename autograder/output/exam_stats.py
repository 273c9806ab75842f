"""The statistics an instructor needs to trust an exam, from the graded results (nothing is regraded).

Per check and per task: difficulty (the share passing; for a task, the mean share of its points)
and discrimination (the point-biserial correlation of passing with the rest of the exam, i.e. the
score without this check or task; for a task, the Pearson correlation of its score with the rest).
A check everyone or no one passes tells nothing about who learned what; one with negative
discrimination is passed more by those who do worse elsewhere, and is flagged for review. Per
variant and per option of each knob: the mean and spread of scores, and a Kruskal-Wallis test of
whether the groups differ in difficulty (H with the ties correction, its p-value from the
chi-square distribution), so an unfair variant is seen before grades are released. A knob is tested
on the total and on the score of each task its numbers reach: an option that sinks one task of 20
points hides in the totals, where the spread between students drowns it. Every p-value is then
adjusted for the number of tests with Holm's step-down method, which keeps the chance of flagging
anything in a fair exam at ALPHA whatever the tests' dependence (an instructor acts on each flag,
so false alarms cost more than a weak effect missed); each test's effect is the spread of its
groups' means, in points.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from autograder.exam.variants import show
from autograder.grading.results import SubmissionResult

ALPHA = 0.05
SMALL_CLASS = 20  # fewer students: the numbers are rough
NEGATIVE, EVERYONE, NO_ONE = "negative", "everyone", "no_one"


@dataclass(frozen=True)
class ItemStat:
    """One check (or one task) of the exam."""

    item: str  # check id, or task id
    task: str
    title: str
    points: float
    students: int
    difficulty: float  # share passing (a task: mean share of its points)
    discrimination: float | None  # None when passing (or the rest) is the same for everyone
    flag: str = ""  # "", NEGATIVE, EVERYONE or NO_ONE


@dataclass(frozen=True)
class GroupRow:
    label: str
    students: int
    mean: float
    sd: float


@dataclass(frozen=True)
class GroupTest:
    """Do the groups (the variants, or the options of one knob) differ in difficulty, on the total or
    on one task's score?"""

    name: str  # "variant" or the knob
    groups: tuple[GroupRow, ...]
    h: float | None = None  # None: too few students per group to test
    df: int = 0
    p: float | None = None
    task: str = ""  # the task whose score the groups are of ("": the total)
    points: float = 0.0  # the most that score can be
    spread: float = 0.0  # the highest tested group's mean minus the lowest's, in points
    p_holm: float | None = None  # p adjusted for every test of the exam (None: not adjusted yet)

    @property
    def differ(self) -> bool:
        p = self.p_holm if self.p_holm is not None else self.p
        return p is not None and p < ALPHA

    @property
    def anchor(self) -> str:
        """The id of this test's row in the report."""
        return f"test-{self.name}" + (f"-{self.task}" if self.task else "")


@dataclass(frozen=True)
class ExamStatistics:
    students: int
    checks: tuple[ItemStat, ...]
    tasks: tuple[ItemStat, ...]
    tests: tuple[GroupTest, ...] = ()

    @property
    def small(self) -> bool:
        return self.students < SMALL_CLASS

    @property
    def flagged(self) -> tuple[ItemStat, ...]:
        return tuple(c for c in self.checks + self.tasks if c.flag)

    @property
    def differing(self) -> tuple[GroupTest, ...]:
        """The tests whose groups differ (after the adjustment), largest effect first."""
        found = [t for t in self.tests if t.differ]
        return tuple(sorted(found, key=lambda t: (-t.spread / (t.points or 1.0), t.name, t.task)))

    @property
    def ran(self) -> int:
        """How many tests ran (what each p-value was adjusted for)."""
        return sum(t.p is not None for t in self.tests)

    def knobs(self) -> list[tuple[str, tuple[GroupTest, ...]]]:
        """Each group test's name (the variant, then each knob) with its tests: the total's first."""
        names = list(dict.fromkeys(t.name for t in self.tests))
        return [(n, tuple(t for t in self.tests if t.name == n)) for n in names]


def point_biserial(passed: Sequence[float], rest: Sequence[float]) -> float | None:
    """Pearson's r of two lists (the point-biserial one when the first is 0/1); None without spread."""
    x, y = np.asarray(passed, dtype=np.float64), np.asarray(rest, dtype=np.float64)
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    x, y = x - x.mean(), y - y.mean()
    return float((x @ y) / math.sqrt((x @ x) * (y @ y)))


def _upper_gamma(a: float, x: float) -> float:
    """The regularized upper incomplete gamma function Q(a, x) (series below a + 1, else Lentz's
    continued fraction)."""
    if x <= 0:
        return 1.0
    front = math.exp(-x + a * math.log(x) - math.lgamma(a))
    if x < a + 1:
        term = total = 1.0 / a
        n = a
        while abs(term) > 1e-16 * abs(total):
            n += 1
            term *= x / n
            total += term
        return max(0.0, 1.0 - total * front)
    tiny = 1e-300
    b = x + 1 - a
    c, d = 1 / tiny, 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        h *= d * c
        if abs(d * c - 1) < 1e-16:
            break
    return front * h


def chi2_sf(x: float, df: int) -> float:
    """P(X >= x) for X chi-square distributed with `df` degrees of freedom."""
    return _upper_gamma(df / 2, x / 2)


def kruskal_wallis(groups: Sequence[Sequence[float]]) -> tuple[float, int, float]:
    """H (corrected for ties), its degrees of freedom and p-value, for two groups or more."""
    values = np.concatenate([np.asarray(g, dtype=np.float64) for g in groups])
    n = len(values)
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(n)
    sorted_values = values[order]
    ties = 0.0
    i = 0
    while i < n:
        j = i
        while j + 1 < n and sorted_values[j + 1] == sorted_values[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        t = j - i + 1
        ties += t**3 - t
        i = j + 1
    h, start = 0.0, 0
    for g in groups:
        r = ranks[start : start + len(g)]
        h += r.sum() ** 2 / len(g)
        start += len(g)
    h = 12 / (n * (n + 1)) * h - 3 * (n + 1)
    correction = 1 - ties / (n**3 - n) if n > 1 else 1.0
    h = h / correction if correction > 0 else 0.0
    df = len(groups) - 1
    return float(h), df, float(chi2_sf(h, df))


def holm(ps: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment: the i-th smallest of m p-values times (m - i + 1), made
    monotone and capped at 1, returned in the given order (statsmodels' multipletests "holm")."""
    m = len(ps)
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda j: ps[j])):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        adjusted[i] = running
    return adjusted


def _flag(difficulty: float, discrimination: float | None) -> str:
    if difficulty >= 1:
        return EVERYONE
    if difficulty <= 0:
        return NO_ONE
    return NEGATIVE if discrimination is not None and discrimination < 0 else ""


def item_statistics(results: Sequence[SubmissionResult]) -> tuple[tuple[ItemStat, ...], tuple[ItemStat, ...]]:
    """Every check's and every task's difficulty and discrimination (graded submissions only)."""
    graded = [r for r in results if r.tasks and not r.problem]
    totals = [r.raw_score for r in graded]
    by_check: dict[str, list[tuple[int, float, float]]] = defaultdict(list)  # (student, passed, score)
    by_task: dict[str, list[tuple[int, float]]] = defaultdict(list)
    meta: dict[str, tuple[str, str, float]] = {}
    task_max: dict[str, float] = {}
    for s, result in enumerate(graded):
        for t in result.tasks:
            by_task[t.task].append((s, t.score))
            task_max[t.task] = t.max_score
            for c in t.checks:
                by_check[c.check_id].append((s, float(c.passed), c.score))
                meta[c.check_id] = (t.task, c.title, c.max_score)
    checks = []
    for cid, rows in by_check.items():
        passed = [p for _, p, _ in rows]
        rest = [totals[s] - score for s, _, score in rows]
        difficulty = statistics.fmean(passed)
        r = point_biserial(passed, rest)
        task, title, points = meta[cid]
        checks.append(ItemStat(cid, task, title, points, len(rows), difficulty, r, _flag(difficulty, r)))
    tasks = []
    for tid, task_rows in by_task.items():
        top = task_max[tid] or 1.0
        shares = [score / top for _, score in task_rows]
        r = point_biserial([score for _, score in task_rows], [totals[s] - score for s, score in task_rows])
        difficulty = statistics.fmean(shares)
        tasks.append(
            ItemStat(tid, tid, tid, task_max[tid], len(task_rows), difficulty, r, _flag(difficulty, r))
        )

    def order(i: ItemStat) -> tuple[bool, float, str]:
        return (not i.flag, i.discrimination if i.discrimination is not None else 2.0, i.item)

    return tuple(sorted(checks, key=order)), tuple(sorted(tasks, key=order))


def group_test(name: str, groups: dict[str, list[float]], order: Sequence[str] = (), task: str = "",
               points: float = 0.0) -> GroupTest:
    """The groups' mean and spread, and Kruskal-Wallis over those of at least two students (`task`:
    the task whose score `groups` hold; `points`: the most that score can be)."""
    labels = [g for g in order if g in groups] + sorted(g for g in groups if g not in order)
    rows = tuple(
        GroupRow(
            label,
            len(groups[label]),
            statistics.fmean(groups[label]),
            statistics.stdev(groups[label]) if len(groups[label]) > 1 else 0.0,
        )
        for label in labels
    )
    testable = [v for v in groups.values() if len(v) >= 2]
    if len(testable) < 2 or len(set().union(*map(set, testable))) < 2:
        return GroupTest(name, rows, task=task, points=points)
    h, df, p = kruskal_wallis(testable)
    means = [statistics.fmean(v) for v in testable]
    return GroupTest(name, rows, round(h, 4), df, p, task, points, round(max(means) - min(means), 6))


def exam_statistics(
    results: Sequence[SubmissionResult], declared: Sequence[tuple[str, Sequence[object]]] = (),
    reach: Mapping[str, Sequence[str]] | None = None,
) -> ExamStatistics:
    """Items for every assignment; the group tests when the results carry exam variants (`declared`:
    the exam's knobs and options, in grading.toml's order; `reach`: knob -> the tasks its numbers
    change, exam/variants.knob_tasks; a knob it does not name is tested on every task)."""
    checks, tasks = item_statistics(results)
    graded = [r for r in results if r.tasks and not r.problem]
    tests = []
    variants: dict[str, list[float]] = defaultdict(list)
    options: dict[str, dict[str, list[SubmissionResult]]] = defaultdict(lambda: defaultdict(list))
    for r in graded:
        if r.exam.get("variant"):
            variants[str(r.exam["variant"])].append(r.raw_score)
            for knob, value in (r.exam.get("choices") or {}).items():
                options[knob][show(value)].append(r)
    if variants:
        top = max(r.max_score for r in graded)
        tests.append(group_test("variant", variants, points=top))
        order = {knob: [show(o) for o in opts] for knob, opts in declared}
        task_max = {t.task: t.max_score for r in graded for t in r.tasks}
        for knob, groups in options.items():
            known = order.get(knob, ())
            tests.append(group_test(knob, {o: [r.raw_score for r in g] for o, g in groups.items()}, known,
                                    points=top))
            reached = (reach or {}).get(knob, list(task_max))
            for task in [t for t in task_max if t in reached]:
                scores = {o: [t.score for r in g for t in r.tasks if t.task == task]
                          for o, g in groups.items()}
                tests.append(group_test(knob, {o: v for o, v in scores.items() if v}, known, task,
                                        task_max[task]))
    return ExamStatistics(len(graded), checks, tasks, adjusted(tests))


def adjusted(tests: Sequence[GroupTest]) -> tuple[GroupTest, ...]:
    """The tests with their p-values adjusted together (Holm), so more tests flag no more noise."""
    ran = [i for i, t in enumerate(tests) if t.p is not None]
    holm_ps = holm([float(tests[i].p) for i in ran])  # type: ignore[arg-type]
    found = list(tests)
    for i, p in zip(ran, holm_ps, strict=True):
        found[i] = dataclasses.replace(found[i], p_holm=p)
    return tuple(found)
