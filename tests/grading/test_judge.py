"""Hypothesis checks are replayed from their listed inputs only when that cannot change a verdict."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from conftest import ROOT
from hypothesis import example, given
from hypothesis import strategies as st

from autograder.checks import Check, fail, points
from autograder.config import load_kit
from autograder.grading import judge
from autograder.grading.course import load_graders
from autograder.grading.hypothesis_setup import pin_seed, salt_seed, use_profile

use_profile()  # the checks below are decorated and run under the kit's profile, as graders are


class Recorder:
    """A stand-in worker: remembers every input the check sends it."""

    def __init__(self, mutate: bool = False) -> None:
        self.seen: list[Any] = []
        self.mutate = mutate


def _check(function: Any) -> Check:
    pin_seed(function)
    return Check("demo", function.__name__, "demo check", 1.0, True, function)


@pytest.fixture(scope="module")
def graders() -> Any:
    kit = load_kit(ROOT)
    return load_graders(kit.assignment("nn_module"))


NO_GRADERS = SimpleNamespace(params=None, secret=b"")  # what _replay_passes reads of the graders


def make_checks() -> tuple[Check, Check, Check]:
    @points(1)
    @given(sizes=st.lists(st.integers(1, 50), min_size=1, max_size=5), flag=st.booleans())
    @example(sizes=[3, 4], flag=True)
    def test_lists(worker: Recorder, sizes: list[int], flag: bool) -> None:
        worker.seen.append((list(sizes), flag))
        if worker.mutate:
            sizes.append(0)  # a check may change its inputs: the next replay must not see it

    @points(1)
    @given(n=st.integers(0, 1000))
    def test_small(worker: Recorder, n: int) -> None:
        worker.seen.append(n)
        if n > 10:
            fail("demo.too_big", n=n)

    @points(1)
    @given(data=st.data())
    def test_interactive(worker: Recorder, data: Any) -> None:
        worker.seen.append(data.draw(st.integers()))

    return _check(test_lists), _check(test_small), _check(test_interactive)


def test_listed_inputs_are_the_ones_hypothesis_gives_a_passing_check() -> None:
    lists, _, _ = make_checks()
    under_hypothesis = Recorder()
    salt_seed(lists.function, b"")  # as a grading with these graders' secret seeds it
    lists.function(worker=under_hypothesis)
    listed = judge.examples_of(lists, None)
    assert listed is not None and len(listed) == len(under_hypothesis.seen) > 5
    assert [(e["sizes"], e["flag"]) for e in listed] == under_hypothesis.seen
    assert listed[0] == {"sizes": [3, 4], "flag": True}  # the explicit example first, as hypothesis runs it


def test_replay_sees_fresh_inputs_every_time() -> None:
    lists, _, _ = make_checks()
    first, second = Recorder(mutate=True), Recorder(mutate=True)
    assert judge._replay_passes(lists, first, NO_GRADERS)  # type: ignore[arg-type]
    assert judge._replay_passes(lists, second, NO_GRADERS)  # type: ignore[arg-type]
    assert first.seen == second.seen and all(0 not in sizes for sizes, _ in first.seen)


def test_a_failure_is_left_to_hypothesis_to_shrink_and_word(graders: Any) -> None:
    _, small, _ = make_checks()
    assert judge._replay_passes(small, Recorder(), NO_GRADERS) is False  # type: ignore[arg-type]
    task = graders.assignment.tasks[0]
    result = judge.run_check(small, Recorder(), graders, task)  # type: ignore[arg-type]
    assert result.score == 0 and result.message_key == "demo.too_big"
    assert "n=11" in result.feedback  # shrunk to the smallest failing input, by hypothesis


def test_interactive_draws_are_never_replayed() -> None:
    _, _, interactive = make_checks()
    assert judge.examples_of(interactive, None) is None
    assert judge._replay_passes(interactive, Recorder(), NO_GRADERS) is False  # type: ignore[arg-type]


def test_fixtures_of_plain_types_keep_their_own_printing() -> None:
    judge.show_fixture_as(dict, "params")
    judge.show_fixture_as(type(None), "worker")
    from hypothesis.vendor import pretty

    assert pretty.pretty({"a": None}) == "{'a': None}"


def test_a_note_is_feedback_of_a_passing_check_never_a_charge(graders: Any) -> None:
    """checks.note: a passing check shows its notes (each once), with no message key and full points;
    a check that fails shows its failure only; outside a check, a note goes nowhere."""
    from autograder.checks import note

    @points(2)
    def test_noted(worker: Any) -> None:
        for _ in range(2):
            note("common.note_other_check", detail="its forward differs", check="demo.forward")

    @points(2)
    def test_noted_then_failed(worker: Any) -> None:
        note("common.note_other_check", detail="its forward differs", check="demo.forward")
        fail("common.wrong_type", call="f(x)", got_type="list", want_type="Tensor")

    task = graders.assignment.tasks[0]
    passed = judge.run_check(_check(test_noted), Recorder(), graders, task)  # type: ignore[arg-type]
    assert passed.score == passed.max_score and passed.message_key == ""
    assert passed.feedback.count("its forward differs") == 1 and "demo.forward" in passed.feedback
    failed = judge.run_check(_check(test_noted_then_failed), Recorder(), graders, task)  # type: ignore[arg-type]
    assert failed.score == 0 and failed.message_key == "common.wrong_type"
    assert "its forward differs" not in failed.feedback and "f(x)" in failed.feedback
    note("common.note_other_check", detail="outside", check="none")  # no running check: ignored
    again = judge.run_check(_check(test_noted), Recorder(), graders, task)  # type: ignore[arg-type]
    assert "outside" not in again.feedback


def _failing_input(graders: Any, function: Any) -> str:
    result = judge.run_check(_check(function), Recorder(), graders, graders.assignment.tasks[0])
    assert result.score == 0 and result.message_key == "demo.too_big", result.feedback
    return result.feedback.rsplit("\nFailing input: ", 1)[1]


def test_a_failing_input_drawn_from_data_is_shown_with_its_draws_and_no_comments(graders: Any) -> None:
    """The note hypothesis writes, "# The test always failed when commented parts were varied
    together.", "# or any other generated value" and `data=data(...)`, becomes the inputs themselves."""

    @points(1)
    @given(data=st.data(), n=st.integers(0, 3), flag=st.booleans())
    def test_draws(worker: Recorder, data: Any, n: int, flag: bool) -> None:
        values = data.draw(st.lists(st.integers(0, 9), min_size=2), label="values")
        data.draw(st.integers(0, 3))
        if sum(values) > 4:
            fail("demo.too_big", n=sum(values))

    shown = _failing_input(graders, test_draws)
    assert "#" not in shown and "data(" not in shown and "worker" not in shown and "\n" not in shown
    assert shown.startswith("values=[") and ", draw_2=" in shown
    assert "n=" in shown and "flag=" in shown  # kept, their comment dropped


def test_a_long_failing_input_is_one_line_as_python_writes_it(graders: Any) -> None:
    spec = {"modules": [["body", ["seq", [["linear", 3, 6, True], ["relu"], ["bn", 6]]]]],
            "tie": [7, 3], "frozen": ["body.0", "heads.h0"], "note": "a # b", "xs": list(range(30))}

    @points(1)
    @given(spec=st.just(spec), data=st.data())
    def test_long(worker: Recorder, spec: dict[str, Any], data: Any) -> None:
        data.draw(st.just(list(range(40))), label="xs")
        fail("demo.too_big", n=1)

    assert _failing_input(graders, test_long) == f"spec={spec!r}, xs={list(range(40))!r}"


def test_a_tuple_hypothesis_wrote_over_lines_reads_as_python_writes_it(graders: Any) -> None:
    """Issue #35: `shape=(1, 1, 2, 2, 1, )=, seed=0` was how a tuple printed one item a line read."""
    shape = tuple(range(100_000, 100_025))  # long enough for hypothesis to print one item a line

    @points(1)
    @given(shape=st.just(shape), one=st.just((7,)), seed=st.just(0))
    def test_shape(worker: Recorder, shape: tuple[int, ...], one: tuple[int], seed: int) -> None:
        fail("demo.too_big", n=1)

    assert _failing_input(graders, test_shape) == f"shape={shape!r}, one=(7,), seed=0"
    note = ("Falsifying example: test_shape(\n    shape=(\n        1,\n        2,\n    ),\n"
            "    one=(\n        7,\n    ),\n)")
    error = AssertionError()
    error.add_note(note)
    assert judge.falsifying_example(error) == "shape=(1, 2), one=(7,)"


def test_busy_code_gets_one_verdict_whichever_limit_the_sandbox_saw_first(graders: Any) -> None:
    """A CPU limit no lower than the time limit is reached by a busy loop at the same moment as the
    time limit: the verdict must not depend on which one won the race (repeatable feedback)."""
    from autograder.checks import WorkerLost
    from autograder.config import TaskConfig

    equal = TaskConfig("demo", "demo.py", 1.0, time_limit=20.0, cpu_limit=20.0)
    seen = {judge.lost_feedback(graders, equal, WorkerLost(reason, "train")) for reason in
            ("time_limit", "cpu_limit")}
    assert len(seen) == 1 and next(iter(seen))[0] == "engine.time_limit", seen
    lower = TaskConfig("demo", "demo.py", 1.0, time_limit=20.0, cpu_limit=5.0)
    key, text = judge.lost_feedback(graders, lower, WorkerLost("cpu_limit", "train"))
    assert key == "engine.cpu_limit" and "5" in text


def test_a_calls_what_and_a_passed_through_message_are_code_in_bangla() -> None:
    """Issue #35: `{call}` (a call's `what`, code) and `{message}` (the student's exception, English) are
    shown as they are in every language; on a Bangla page they are set as code, so that the Latin-word
    scan leaves them alone. English feedback is what it always was."""
    from autograder.authoring.latin_scan import latin_words
    from autograder.grading.course import load_graders

    assignment = load_kit(ROOT).assignment("nn_module")
    params = {"call": "sum of squares", "type": "RuntimeError", "message": "size of tensor a", "where": ""}
    bangla = judge.render(load_graders(assignment, lang="bn"), "common.raised", params)
    assert "`sum of squares`" in bangla and "`RuntimeError: size of tensor a`" in bangla, bangla
    assert latin_words(bangla) == [], bangla
    english = judge.render(load_graders(assignment, lang="en"), "common.raised", params)
    assert english.startswith("Observed: sum of squares raised `RuntimeError: size of tensor a`"), english
