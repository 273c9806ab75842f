"""Hidden checks of task counting: growth for random sizes against PyTorch's own counts, shrinking too."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from autograder.graders import points

from ..params import default
from ..public.test_counting import check_growth

size = st.integers(1, default().counting.max_size)


def torch_count(i: int, h: int, o: int) -> int:
    """PyTorch's own count of the lesson's TinyNet(i, h, o)."""
    from ._loop import lesson_tinynet

    return sum(p.numel() for p in lesson_tinynet(i, h, o).parameters())


@points(3)
@given(i=size, o=size, h0=size, h1=size)
@example(i=3, o=2, h0=32, h1=8)
def test_growth_random(worker, params, i, o, h0, h1):
    """growth equals the difference of PyTorch's counts, negative when hidden shrinks"""
    check_growth(worker, i, o, h0, h1, torch_count(i, h1, o) - torch_count(i, h0, o))
