"""Public checks of task counting: tinynet_count (lesson and hidden sizes) and exercise 2's growth."""

from __future__ import annotations

from autograder.graders import call, fail, note, points, scalar_type

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
    """growth(i, o, h0, h1) is the change of the count. Judged on the student's own tinynet_count
    (growth is naturally written with it): a growth that is their own counts' difference passes with a
    note, since a slip in the count (its value or its type) is the count check's to charge, once."""
    what = f"growth({i}, {o}, {h0}, {h1})"
    obs = call(worker, "counting_growth", what, in_features=i, out_features=o, hidden_from=h0, hidden_to=h1)
    got = _whole(obs, what, False)
    own = None
    if types and scalar_type(obs, "int"):
        own = own_counts(worker, i, o, h0, h1)
        if own is None or not own[1]:
            fail("counting.not_int", call=what, got_type=scalar_type(obs, "int"))
        note("common.note_other_check", check="counting.lesson_count",
             detail=f"{what} is a {own[1]}, as your own tinynet_count is")
    if got == want:
        return
    own = own or own_counts(worker, i, o, h0, h1)
    if own is not None and got == own[0]:
        note("common.note_other_check", check="counting.lesson_count",
             detail=f"{what} == {got}, the difference of your own counts, where PyTorch's give {want}")
        return
    if got == -want and want < 0:
        fail("counting.growth_sign", call=what, got=got, want=want)
    total = h1 * i + h1 + o * h1 + o
    if got == total:
        fail("counting.growth_total", call=what, got=got, want=want)
    fail("counting.growth", call=what, got=got, want=want)


def own_counts(worker, i: int, o: int, h0: int, h1: int) -> tuple[int, str] | None:
    """The student's own tinynet_count(i, h1, o) - tinynet_count(i, h0, o), and the type name of their
    count when it is not an int ("" when it is); None when a count is not a whole number."""
    found = []
    for h in (h0, h1):
        obs = call(worker, "counting_tinynet", f"tinynet_count({i}, {h}, {o})", in_features=i, hidden=h,
                   out_features=o)
        value = number(obs)
        if value is None or value != int(value):
            return None
        found.append((int(value), scalar_type(obs, "int")))
    return found[1][0] - found[0][0], found[1][1] or found[0][1]


def count(i: int, h: int, o: int) -> int:
    """fc1 = nn.Linear(i, h) and fc2 = nn.Linear(h, o): weights and biases."""
    return h * i + h + o * h + o


def hidden_sizes(gen, k: int, top: int) -> list[int]:
    return [int(v) for v in gen.integers(1, top + 1, k)]


@points(5)
def test_lesson_count(worker, params, challenge):
    """tinynet_count(3, 8, 2) == 50, the lesson's TinyNet, and TinyNet's count for hidden sizes

    The one check of tinynet_count (one slip, one charge): its value and its type on the lesson's
    sizes and hidden ones, its value on a sweep of random sizes (hidden too)."""
    (i, h, o), want = params.counting.lesson
    check_count(worker, i, h, o, want, types=True)
    i, h, o = hidden_sizes(challenge.rng("sizes"), 3, params.counting.max_size)
    check_count(worker, i, h, o, count(i, h, o), types=True)
    sweep = challenge.rng("sweep")
    for i, h, o in [(1, 1, 1), *(hidden_sizes(sweep, 3, params.counting.max_size) for _ in range(12))]:
        check_count(worker, i, h, o, count(i, h, o))


@points(2)
def test_lesson_growth(worker, params, challenge):
    """growth(3, 2, 8, 32) == 144: hidden 8 -> 32 (the lesson's exercise 2), and growth of hidden sizes"""
    (i, o, h0, h1), want = params.counting.lesson_growth
    check_growth(worker, i, o, h0, h1, want, types=True)
    i, o, h0, h1 = hidden_sizes(challenge.rng("sizes"), 4, params.counting.max_size)
    h0, h1 = min(h0, h1), max(h0, h1) + 1  # growing, as in the exercise (shrinking: a hidden check)
    check_growth(worker, i, o, h0, h1, count(i, h1, o) - count(i, h0, o), types=True)
