"""Hidden checks of task counting: random sizes against PyTorch's own count; shrinking networks."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from autograder.graders import points

from ..params import default
from ..public.test_counting import check_count, check_growth

size = st.integers(1, default().counting.max_size)


def torch_count(i: int, h: int, o: int) -> int:
    """PyTorch's own count of the lesson's TinyNet(i, h, o)."""
    from ._loop import lesson_tinynet

    return sum(p.numel() for p in lesson_tinynet(i, h, o).parameters())


@points(3)
@given(i=size, h=size, o=size)
@example(i=5, h=7, o=3)
def test_count_random(worker, params, i, h, o):
    """tinynet_count equals sum(p.numel() for p in TinyNet(i, h, o).parameters()) for random sizes"""
    check_count(worker, i, h, o, torch_count(i, h, o))


@points(3)
@given(i=size, o=size, h0=size, h1=size)
@example(i=3, o=2, h0=32, h1=8)
def test_growth_random(worker, params, i, o, h0, h1):
    """growth equals the difference of PyTorch's counts, negative when hidden shrinks"""
    check_growth(worker, i, o, h0, h1, torch_count(i, h1, o) - torch_count(i, h0, o))
