"""Public checks of task counting: the lesson's TinyNet(3, 8, 2) count and exercise 2's growth."""

from __future__ import annotations

from autograder.checks import fail, points
from autograder.probe_calls import call, scalar_type


def check_count(worker, i: int, h: int, o: int, want: int) -> None:
    what = f"tinynet_count({i}, {h}, {o})"
    obs = call(worker, "tinynet_count", what, in_features=i, hidden=h, out_features=o)
    bad = scalar_type(obs, "int")
    if bad:
        fail("counting.not_int", call=what, got_type=bad)
    got = obs["value"]
    if got == want:
        return
    if got == h * i + o * h:
        fail("counting.no_bias", call=what, got=got, want=want)
    if got == h * i + h + o * h:
        fail("counting.no_fc2_bias", call=what, got=got, want=want)
    fail("counting.count", call=what, got=got, want=want)


def check_growth(worker, i: int, o: int, h0: int, h1: int, want: int) -> None:
    what = f"growth({i}, {o}, {h0}, {h1})"
    obs = call(worker, "growth", what, in_features=i, out_features=o, hidden_from=h0, hidden_to=h1)
    bad = scalar_type(obs, "int")
    if bad:
        fail("counting.not_int", call=what, got_type=bad)
    got = obs["value"]
    if got == want:
        return
    if got == -want and want < 0:
        fail("counting.growth_sign", call=what, got=got, want=want)
    total = h1 * i + h1 + o * h1 + o
    if got == total:
        fail("counting.growth_total", call=what, got=got, want=want)
    fail("counting.growth", call=what, got=got, want=want)


@points(2)
def test_lesson_count(worker, params):
    """tinynet_count(3, 8, 2) == 50, the lesson's TinyNet"""
    (i, h, o), want = params.counting.lesson
    check_count(worker, i, h, o, want)


@points(2)
def test_lesson_growth(worker, params):
    """growth(3, 2, 8, 32) == 144: hidden 8 -> 32 (the lesson's exercise 2)"""
    (i, o, h0, h1), want = params.counting.lesson_growth
    check_growth(worker, i, o, h0, h1, want)
