"""The exam statistics: known values of the tests; a class with a known bad check and an unfair variant."""

from __future__ import annotations

import random

import pytest

from autograder.exam.variants import knob_reach
from autograder.grading.results import CheckResult, SubmissionResult, TaskResult
from autograder.output.class_report import render_html, summarize
from autograder.output.exam_stats import (
    EVERYONE,
    NEGATIVE,
    NO_ONE,
    chi2_sf,
    exam_statistics,
    holm,
    kruskal_wallis,
    point_biserial,
)


def test_chi_square_tail_matches_known_values():
    assert chi2_sf(3.841458820694124, 1) == pytest.approx(0.05, abs=1e-12)
    assert chi2_sf(5.991464547107979, 2) == pytest.approx(0.05, abs=1e-12)
    assert chi2_sf(7.0, 2) == pytest.approx(0.0301973834223185, rel=1e-12)  # exp(-3.5)
    assert chi2_sf(11.070497693516351, 5) == pytest.approx(0.05, abs=1e-12)
    assert chi2_sf(0.5, 3) == pytest.approx(0.9188914116546758, rel=1e-10)
    assert chi2_sf(0.0, 4) == 1.0


def test_kruskal_wallis_matches_scipy_documented_values():
    # scipy.stats.kruskal's documented examples: no ties, then ties (corrected).
    h, df, p = kruskal_wallis([[1, 3, 5, 7, 9], [2, 4, 6, 8, 10]])
    assert (round(h, 10), df) == (0.2727272727, 1) and p == pytest.approx(0.6015081344405895, rel=1e-9)
    h, df, p = kruskal_wallis([[1, 1, 1], [2, 2, 2], [2, 2]])
    assert h == pytest.approx(7.0) and df == 2 and p == pytest.approx(0.0301973834223185, rel=1e-9)


def test_point_biserial_is_pearson_and_none_without_spread():
    assert point_biserial([1, 1, 0, 0], [10, 8, 2, 0]) == pytest.approx(0.9701425, rel=1e-6)
    assert point_biserial([0, 0, 1, 1], [10, 8, 2, 0]) == pytest.approx(-0.9701425, rel=1e-6)
    assert point_biserial([1, 1, 1], [1, 2, 3]) is None


def _class(students: int = 60, seed: int = 3) -> list[SubmissionResult]:
    """Skilled students pass more checks, except `bad.inverted`, passed by the weaker ones; `bad.free`
    everyone passes, `bad.never` nobody; variant v2 is harder (its students pass half as often)."""
    rng = random.Random(seed)
    results = []
    for n in range(students):
        skill = rng.random()
        variant = f"v{n % 3}"
        odds = skill / 2 if variant == "v2" else skill
        good = [
            CheckResult(
                f"good.c{i}", "good", f"c{i}", f"good {i}", 5.0 if rng.random() < odds else 0.0, 5.0, True
            )
            for i in range(10)
        ]
        bad = [
            CheckResult(
                "bad.inverted",
                "bad",
                "inverted",
                "inverted",
                5.0 if rng.random() > skill else 0.0,
                5.0,
                False,
            ),
            CheckResult("bad.free", "bad", "free", "free", 5.0, 5.0, False),
            CheckResult("bad.never", "bad", "never", "never", 0.0, 5.0, False),
        ]
        results.append(
            SubmissionResult(
                f"s{n:03d}",
                "nn_module",
                (TaskResult("good", 50.0, tuple(good)), TaskResult("bad", 15.0, tuple(bad))),
                exam={"variant": variant, "choices": {"knob": int(variant[1])}},
            )
        )
    return results


def test_a_class_with_a_known_bad_check():
    stats = exam_statistics(_class())
    by_id = {c.item: c for c in stats.checks}
    assert by_id["bad.inverted"].flag == NEGATIVE and by_id["bad.inverted"].discrimination < -0.3
    assert by_id["bad.free"].flag == EVERYONE and by_id["bad.free"].discrimination is None
    assert by_id["bad.never"].flag == NO_ONE and by_id["bad.never"].difficulty == 0
    assert all(by_id[f"good.c{i}"].flag == "" and by_id[f"good.c{i}"].discrimination > 0.2 for i in range(10))
    assert stats.checks[0].flag  # flagged checks come first
    assert 0.0 < by_id["good.c1"].difficulty < 1.0
    tasks = {t.item: t for t in stats.tasks}
    assert tasks["good"].discrimination is not None
    assert stats.students == 60 and not stats.small


def test_an_unfair_variant_is_seen_and_fair_ones_are_not():
    stats = exam_statistics(_class(students=90))
    variant = next(t for t in stats.tests if t.name == "variant")
    means = {g.label: g.mean for g in variant.groups}
    assert means["v2"] < min(means["v0"], means["v1"]) and variant.differ and variant.p < 0.01
    knob = next(t for t in stats.tests if t.name == "knob")
    assert [g.label for g in knob.groups] == ["0", "1", "2"]
    fair = exam_statistics([r for r in _class(students=90) if r.exam["variant"] != "v2"])
    assert not next(t for t in fair.tests if t.name == "variant").differ


def test_too_few_students_per_variant_are_not_tested():
    stats = exam_statistics(_class(students=3))
    variant = next(t for t in stats.tests if t.name == "variant")
    assert variant.p is None and not variant.differ and stats.small


def test_the_report_shows_the_statistics_and_flags(kit):
    summary = summarize(_class(), kit.assignment("nn_module_exam"), {}, 1.0)
    html = render_html(summary)
    assert 'id="item-stats"' in html and "negative discrimination" in html and "everyone passes" in html
    assert "Kruskal-Wallis H = " in html and "The groups differ in difficulty" in html
    bangla = render_html(
        summarize(
            _class(),
            kit.assignment("nn_module_exam"),
            {"ui": {"stats_flag_negative": "ঋণাত্মক পার্থক্য-ক্ষমতা"}},
            1.0,
            "bn",
        )
    )
    assert "ঋণাত্মক পার্থক্য-ক্ষমতা" in bangla


# -- issue #40: a knob tested on each task it reaches, corrected for the number of tests -----------------
def test_holm_matches_known_adjusted_values():
    # statsmodels.stats.multitest.multipletests([...], method="holm")[1] for these p-values.
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # capped at 1, kept monotone
    assert holm([]) == []


def _exam_class(kit, unfair: dict[str, object] | None, students: int = 30,
                seed: int = 5) -> list[SubmissionResult]:
    """A mixed-ability exam class of nn_module_exam: each check passed with the student's skill; with
    `unfair` ({knob: option}), the students who drew that option fail every check of delivery."""
    exam = kit.assignment("nn_module_exam")
    rng = random.Random(seed)
    results = []
    for n in range(students):
        skill = rng.uniform(0.2, 1.0)
        choices = {knob: rng.choice(options) for knob, options in exam.exam.variants}
        doomed = unfair is not None and all(choices[k] == v for k, v in unfair.items())
        tasks = []
        for task in exam.tasks:
            checks = tuple(
                CheckResult(f"{task.id}.c{i}", task.id, f"c{i}", f"{task.id} {i}",
                            task.points / 4 if rng.random() < skill and not (doomed and task.id == "delivery")
                            else 0.0, task.points / 4, True)
                for i in range(4))
            tasks.append(TaskResult(task.id, task.points, checks))
        code = "v" + "-".join(str(opts.index(choices[k])) for k, opts in exam.exam.variants)
        results.append(SubmissionResult(f"s{n:02d}", exam.id, tuple(tasks),
                                        exam={"variant": code, "choices": choices}))
    return results


def test_the_knobs_reach_the_tasks_their_numbers_change(kit):
    reach = knob_reach(kit.assignment("nn_module_exam"))
    assert reach is not None and reach["tinynet_hidden"] == ("tinynet",)
    # numpy_forward's checks read params.delivery: delivery_hidden reaches it too
    assert reach["delivery_hidden"] == ("delivery", "counting", "numpy_forward")
    assert "tinynet" not in reach["twohead_heads"] and knob_reach(kit.assignment("nn_module")) is None


def test_an_option_failing_one_task_is_flagged_on_that_task_alone(kit):
    unfair = {"delivery_hidden": [20, 10]}
    summary = summarize(_exam_class(kit, unfair), kit.assignment("nn_module_exam"), {}, 1.0)
    stats = summary.stats
    assert stats is not None and stats.students == 30
    by = {(t.name, t.task): t for t in stats.tests}
    assert ("tinynet_hidden", "delivery") not in by and ("delivery_hidden", "numpy_forward") in by
    assert [(t.name, t.task) for t in stats.differing] == [("delivery_hidden", "delivery")]
    flagged = by["delivery_hidden", "delivery"]
    assert flagged.p_holm is not None and flagged.p_holm >= flagged.p  # adjusted for all tests
    assert flagged.p_holm < 0.01 and flagged.points == 20 and flagged.spread > 8
    assert not by["delivery_hidden", ""].differ  # the totals alone hide it (the class: p = 0.107)
    groups = {g.label: g.mean for g in flagged.groups}
    assert groups["[20, 10]"] == 0 and flagged.spread == pytest.approx(max(groups.values()))
    assert stats.ran == sum(t.p is not None for t in stats.tests) >= 10
    html = render_html(summary)
    top = html.split('id="review-first"', 1)[1].split("</section>", 1)[0]
    assert 'href="#test-delivery_hidden-delivery"' in top and "<code>delivery_hidden</code>" in top
    assert 'id="test-delivery_hidden-delivery"' in html and "adjusted for every test (Holm)" in html
    assert html.count('href="#test-') == 1

    fair = summarize(_exam_class(kit, None), kit.assignment("nn_module_exam"), {}, 1.0)
    assert fair.stats is not None and fair.stats.differing == ()
    assert 'href="#test-' not in render_html(fair).split("</section>", 1)[0]


def test_the_top_of_the_report_links_each_flagged_check_and_task(kit):
    summary = summarize(_class(), kit.assignment("nn_module_exam"), {}, 1.0)
    html = render_html(summary)
    top = html.split('id="review-first"', 1)[1].split("</section>", 1)[0]
    for item in ("bad.inverted", "bad.free", "bad.never"):
        assert f'href="#item-{item}"' in top and f'id="item-{item}"' in html
    assert 'href="#item-good.c1"' not in top
    assert top.index("negative discrimination") < top.index("no one passes") < top.index("everyone passes")
