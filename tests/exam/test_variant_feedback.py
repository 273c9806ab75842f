"""Exam feedback states the student's own numbers (issue #26): no check title, task title, Expected or
Idea a student of one variant reads names a number or a name that only other variants have.

A variant's own words are the tokens of its exam README (params.describe: widths, counts, head
names, p_drop); the words another variant's README has for a task and this one's lacks are foreign
there, except the ones every variant's reference of the task holds (the contract's fixed numbers,
such as the 3 input features). Statically for every variant of grading.toml's exam (titles rendered from the
variant, catalogue texts as written), and on real feedback: the lesson's reference graded against
other variants fails many checks, and what those checks expect and teach is the variant's.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from itertools import product
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, SOLUTIONS

from autograder.config import load_kit
from autograder.exam.plan import ExamPlan, plan_for
from autograder.exam.variants import Variant, VariantSpace
from autograder.grading.course import Graders, load_graders
from autograder.grading.grader import Grader
from autograder.grading.options import GradeOptions

EXAM = "nn_module_exam"
SECRET = b"test-exam-secret-0123456789abcdef"
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z_0-9]*|\d+(?:\.\d+)?(?:e-?\d+)?")


def tokens(text: str) -> set[str]:
    """Names and numbers of a text: `hidden.0.weight (16, 3)` -> hidden, 0, weight, 16, 3."""
    return set(_TOKEN.findall(text))


@lru_cache(maxsize=1)
def exam() -> tuple[Any, VariantSpace, Graders, Graders]:
    assignment = load_kit(ROOT).assignment(EXAM)
    return (assignment, VariantSpace.of(assignment), load_graders(assignment, lang="en"),
            load_graders(assignment, lang="bn"))


def every_variant(space: VariantSpace) -> list[Variant]:
    return [space.variant(list(ix)) for ix in product(*(range(len(o)) for _, o in space.knobs))]


def own_words(graders: Graders, variant: Variant) -> dict[str, set[str]]:
    """Task -> the tokens of the variant's README line for it."""
    module = graders.module("params")
    params = module.for_variant(variant.choices)
    found: dict[str, set[str]] = {}
    for line in module.describe(params):
        task = line.split("`")[1]
        found[task] = tokens(line.split(":", 1)[1])
    return found


@lru_cache(maxsize=1)
def words_of_every_variant() -> tuple[list[Variant], list[dict[str, set[str]]], dict[str, set[str]]]:
    """Every variant, its own words per task, and per task the tokens every variant's reference holds."""
    assignment, space, graders, _ = exam()
    variants = every_variant(space)
    words = [own_words(graders, v) for v in variants]
    params_module, rewriter = graders.module("params"), graders.module("reference_variants")
    fixed: dict[str, set[str]] = {}
    for task in assignment.tasks:
        source = (SOLUTIONS / task.file).read_text(encoding="utf-8")
        common: set[str] | None = None
        for knob, options in space.knobs:
            for option in options:
                params = params_module.for_variant({knob: option})
                held = tokens(rewriter.variant_source(task.file, source, params))
                common = held if common is None else common & held
        fixed[task.id] = common or set()
    # TwoHead's body is no knob: its parameters (Linear(3, 16): 64) are every variant's
    containers = params_module.default().containers
    fixed["containers"].add(str(containers.in_features * containers.body + containers.body))
    return variants, words, fixed


@cache
def _every_word(task: str) -> frozenset[str]:
    _, words, _ = words_of_every_variant()
    return frozenset(set().union(*(w.get(task, set()) for w in words)))


@cache
def foreign(i: int, task: str) -> frozenset[str]:
    """The words of other variants that variant i lacks, for `task`."""
    _, words, fixed = words_of_every_variant()
    return _every_word(task) - set().union(*words[i].values()) - fixed.get(task, set())


@cache
def anyone_lacks(task: str) -> frozenset[str]:
    """The words some variant lacks for `task` (a text shown to every variant must name none)."""
    variants, _, _ = words_of_every_variant()
    return frozenset(set().union(*(foreign(i, task) for i in range(len(variants)))))


def task_of(check_id: str) -> str:
    return check_id.split(".", 1)[0]


def test_the_token_rule_sees_numbers_and_names():
    assert tokens("Linear(3, 16): 48 + 16, heads.time 1e-12 float16 16টি") == \
        {"Linear", "3", "16", "48", "heads", "time", "1e-12", "float16"}
    variants, words, fixed = words_of_every_variant()
    assert len(variants) == exam()[1].size > 100
    lesson = next(i for i, v in enumerate(variants) if not any(v.indices))
    assert {"16", "209", "0.1"} <= words[lesson]["delivery"]
    assert {"time", "late"} <= words[lesson]["containers"]
    assert "3" in fixed["containers"] and "16" not in fixed["delivery"]
    assert {"eta", "delay", "24", "12"} & (foreign(lesson, "containers") | foreign(lesson, "delivery"))


def _template_problems(graders: Graders, lang: str) -> list[str]:
    """Catalogue texts (the same for every variant) naming a word some variant lacks."""
    bad = []
    for key, entry in graders.messages.items():
        task = task_of(key)
        if key in ("titles", "ui") or not isinstance(entry, dict):
            continue
        for field, text in entry.items():
            hit = tokens(re.sub(r"\{[^{}]*\}", " ", text)) & anyone_lacks(task)
            if hit:
                bad.append(f"{lang} {key}.{field} names {sorted(hit)}, which some variants lack")
    titles = graders.messages.get("titles", {})
    for task in {t for t in titles if "." not in t}:
        hit = tokens(titles[task]) & anyone_lacks(task)
        if hit:
            bad.append(f"{lang} the title of task {task} names {sorted(hit)}")
    return bad


@pytest.mark.parametrize("lang", ["en", "bn"])
def test_catalogue_texts_name_no_number_of_one_variant(lang):
    _, _, en, bn = exam()
    assert _template_problems(en if lang == "en" else bn, lang) == []


@pytest.mark.parametrize("lang", ["en", "bn"])
def test_every_variant_s_check_titles_name_its_own_numbers(lang):
    _, _, en, bn = exam()
    graders = en if lang == "en" else bn
    params_module = graders.module("params")
    variants, _, _ = words_of_every_variant()
    titles = []
    for variant in variants:
        restated = graders.with_params(params_module.for_variant(variant.choices))
        titles.append({c.id: c.title for found in restated.checks.values() for c in found})
    # a word every variant's title shows is nobody's own (the TwoHead body's 64 parameters); the
    # template's own text is judged by the catalogue test below
    shared = {check: set.intersection(*(tokens(t[check]) for t in titles)) for check in titles[0]}
    bad = []
    for i, variant in enumerate(variants):
        for check, title in titles[i].items():
            hit = tokens(title) & foreign(i, task_of(check)) - shared[check]
            if hit:
                bad.append(f"{variant.code} {check}: {title!r} names {sorted(hit)}")
    assert bad[:10] == []
    assert len(titles) == len(variants) and any(t != titles[0] for t in titles)  # rendered per variant
    static = {check: re.sub(r"\{p\.[^{}]*\}", " ", text) for check, text in graders.title_templates.items()}
    assert [f"{c}: {sorted(tokens(s) & anyone_lacks(task_of(c)))}" for c, s in static.items()
            if tokens(s) & anyone_lacks(task_of(c))] == []


# ----------------------------------------------------------------------------- real feedback

SMALL = {"tinynet_hidden": [8, 12], "delivery_hidden": [[16, 8], [24, 12]], "delivery_p_drop": [0.1, 0.25],
         "twohead_heads": [{"time": 1, "late": 2}, {"cost": 1, "tier": 4}],
         "counting_stack": [[784, 256, 128, 10], [300, 100, 50, 5]]}


def _small_kit() -> Any:
    import tomllib

    from autograder.config import parse_kit

    data = tomllib.loads((ROOT / "grading.toml").read_text(encoding="utf-8"))
    data["assignments"][EXAM]["exam"]["variants"] = SMALL
    return parse_kit(ROOT, data)


def _lines(feedback: str, labels: tuple[str, ...]) -> list[str]:
    return [line for line in feedback.splitlines() if line.split(": ", 1)[0] in labels]


@pytest.mark.parametrize("lang", ["en", "bn"])
def test_the_lesson_s_code_graded_as_another_variant_is_told_that_variant_s_numbers(tmp_path: Path, lang):
    """The lesson's reference, graded against the variant with every other option: each failing
    check's Expected and Idea, and every title, name that variant's numbers, not the lesson's."""
    kit = _small_kit()
    plan = plan_for(kit, EXAM, SECRET)
    assert isinstance(plan, ExamPlan)
    variant = plan.space.variant([1] * len(plan.space.knobs))
    submission = tmp_path / "lesson"
    submission.mkdir()
    for task in kit.assignment(EXAM).tasks:
        (submission / task.file).write_text((SOLUTIONS / task.file).read_text(encoding="utf-8"), "utf-8")
    import dataclasses

    with Grader(kit, EXAM, GradeOptions(sandbox=False, lang=lang), plan=plan) as grader:
        result = grader.grade(submission, "lesson", dataclasses.replace(plan, fixed=variant))
        messages = grader.graders.messages
    ui = messages["ui"]
    labels = (ui.get("expected", "Expected"), ui.get("idea", "Idea"))
    # this variant's words against the lesson's (the small space has two options a knob)
    graders = exam()[2]
    lesson_variant = plan.space.variant([0] * len(plan.space.knobs))
    mine = set().union(*own_words(graders, variant).values())
    lesson = set().union(*own_words(graders, lesson_variant).values())
    fixed = words_of_every_variant()[2]
    failed = [c for t in result.tasks for c in t.checks if not c.passed]
    assert {task_of(c.check_id) for c in failed} >= {"delivery", "containers"}, "the lesson's code must lose"
    # a word the check's title shows the lesson's variant and this one alike is nobody's own
    params_module = graders.module("params")
    both = [exam()[2 if lang == "en" else 3].with_params(params_module.for_variant(v.choices))
            for v in (lesson_variant, variant)]
    shared = {c.id: tokens(c.title) for found in both[0].checks.values() for c in found}
    for found in both[1].checks.values():
        for c in found:
            shared[c.id] &= tokens(c.title)
    bad = []
    for task in result.tasks:
        wrong = lesson - mine - fixed.get(task.task, set())
        for check in task.checks:
            for line in [check.title, *_lines(check.feedback, labels)]:
                hit = tokens(line) & wrong - (shared[check.check_id] if line == check.title else set())
                if hit:
                    bad.append(f"{check.check_id}: {line!r} names the lesson's {sorted(hit)}")
    assert "\n".join(bad) == ""
