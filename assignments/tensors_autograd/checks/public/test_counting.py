"""Public checks of task counting: the lesson's TinyNet(3, 8, 2) count and exercise 2's growth."""

from __future__ import annotations

from autograder.graders import call, fail, points, scalar_type

from ..support import number


def _whole(obs: dict, what: str, types: bool) -> int:
    """The count a probe reported: with `types`, it must be an int (the lesson checks' business); the
    random checks judge the number, whatever type holds it."""
    bad = scalar_type(obs, "int")
    value = number(obs)
    if (bad and types) or value is None or value != int(value):
        fail("counting.not_int", call=what, got_type=bad)
    return int(value)


def check_count(worker, i: int, h: int, o: int, want: int, types: bool = False) -> None:
    what = f"tinynet_count({i}, {h}, {o})"
    obs = call(worker, "counting_tinynet", what, in_features=i, hidden=h, out_features=o)
    got = _whole(obs, what, types)
    if got == want:
        return
    if got == h * i + o * h:
        fail("counting.no_bias", call=what, got=got, want=want)
    if got == h * i + h + o * h:
        fail("counting.no_fc2_bias", call=what, got=got, want=want)
    fail("counting.count", call=what, got=got, want=want)


def check_growth(worker, i: int, o: int, h0: int, h1: int, want: int, types: bool = False) -> None:
    what = f"growth({i}, {o}, {h0}, {h1})"
    obs = call(worker, "counting_growth", what, in_features=i, out_features=o, hidden_from=h0, hidden_to=h1)
    got = _whole(obs, what, types)
    if got == want:
        return
    if got == -want and want < 0:
        fail("counting.growth_sign", call=what, got=got, want=want)
    total = h1 * i + h1 + o * h1 + o
    if got == total:
        fail("counting.growth_total", call=what, got=got, want=want)
    fail("counting.growth", call=what, got=got, want=want)


def count(i: int, h: int, o: int) -> int:
    """fc1 = nn.Linear(i, h) and fc2 = nn.Linear(h, o): weights and biases."""
    return h * i + h + o * h + o


def hidden_sizes(gen, k: int, top: int) -> list[int]:
    return [int(v) for v in gen.integers(1, top + 1, k)]


@points(2)
def test_lesson_count(worker, params, challenge):
    """tinynet_count(3, 8, 2) == 50, the lesson's TinyNet (and a TinyNet of hidden sizes)"""
    (i, h, o), want = params.counting.lesson
    check_count(worker, i, h, o, want, types=True)
    i, h, o = hidden_sizes(challenge.rng("sizes"), 3, params.counting.max_size)
    check_count(worker, i, h, o, count(i, h, o), types=True)


@points(2)
def test_lesson_growth(worker, params, challenge):
    """growth(3, 2, 8, 32) == 144: hidden 8 -> 32 (the lesson's exercise 2), and growth of hidden sizes"""
    (i, o, h0, h1), want = params.counting.lesson_growth
    check_growth(worker, i, o, h0, h1, want, types=True)
    i, o, h0, h1 = hidden_sizes(challenge.rng("sizes"), 4, params.counting.max_size)
    h0, h1 = min(h0, h1), max(h0, h1) + 1  # growing, as in the exercise (shrinking: a hidden check)
    check_growth(worker, i, o, h0, h1, count(i, h1, o) - count(i, h0, o), types=True)
