"""Hidden checks of task counting: hypothesis over random stacks and models against PyTorch's own counts."""

from __future__ import annotations

import functools
import json
from itertools import pairwise

from hypothesis import example, given
from hypothesis import strategies as st

from autograder.graders import fail, points

from ..params import default
from ..public.test_counting import _value, judge_per_layer, per_layer
from ..support import call, fail_if_not_implemented, raised_name
from . import _ref

P = default().counting

width = st.integers(1, P.max_size)
linear = st.tuples(st.just("linear"), width, width, st.booleans()).map(list)
other = st.one_of(
    st.just(["relu"]), st.just(["dropout"]), width.map(lambda n: ["bn", n])
)
layer = st.one_of(linear, linear, other)
specs = st.fixed_dictionaries({
    "modules": st.tuples(
        st.lists(layer, min_size=1, max_size=4).map(lambda ls: ["body", ["seq", ls]]),
        st.one_of(st.none(), linear.map(lambda ln: ["head", ln])),
        st.one_of(st.none(), st.lists(linear, min_size=1, max_size=2).map(
            lambda ls: ["heads", ["dict", [[f"h{i}", ln] for i, ln in enumerate(ls)]]])),
    ).map(lambda mods: [m for m in mods if m is not None]),
    "tie": st.one_of(st.none(), st.tuples(width, width).map(list)),
    "root_param": st.integers(0, 4),
    "buffers": st.lists(width, max_size=2),
    "frozen": st.lists(st.sampled_from(["body.0", "body.1", "head", "heads.h0", "emb", "scale"]),
                       max_size=3, unique=True),
})


# Explicit examples run first: a usual mistake fails at once, without generating and shrinking.
RICH = {
    "modules": [
        ["body", ["seq", [["linear", 3, 6, True], ["relu"], ["bn", 6], ["linear", 6, 4, False]]]],
        ["heads", ["dict", [["h0", ["linear", 4, 2, True]], ["h1", ["linear", 4, 1, True]]]]],
    ],
    "tie": [7, 3],
    "root_param": 2,
    "buffers": [3],
    "frozen": ["body.0", "heads.h0"],
}


def _describe(spec: dict) -> str:
    return json.dumps(spec, separators=(",", ":"))


def truth(spec: dict) -> dict:
    """PyTorch's own counts for the model the worker built (same builder, grading process)."""
    return _truth(_describe(spec))


@functools.lru_cache(maxsize=1024)
def _truth(described: str) -> dict:
    # Cached by the spec's text: derandomized examples repeat from one submission to the next.
    spec = json.loads(described)
    model = _ref.probes()._build_counting_model(spec)
    params = list(model.parameters())
    modules = dict(model.named_modules())
    own = {n: sum(p.numel() for p in m.parameters(recurse=False)) for n, m in modules.items()}
    return {
        "total": sum(p.numel() for p in params),
        "trainable": sum(p.numel() for p in params if p.requires_grad),
        "with_buffers": sum(p.numel() for p in params) + sum(b.numel() for b in model.buffers()),
        "tied_twice": sum(own.values()),
        "per_layer": {n: c for n, c in own.items() if c},
        "containers": {n for n, m in modules.items() if list(m.children())},
    }


@points(2)
@given(sizes=st.lists(st.integers(1, P.max_stack), min_size=2, max_size=6), bias=st.booleans())
@example(sizes=[5, 9, 2, 4], bias=False)
@example(sizes=[5, 9, 2, 4], bias=True)
def test_random_stacks(worker, params, sizes, bias):
    """count_linear_stack equals the parameter count of the same nn.Linear stack, for random sizes"""
    want = sum(b * a + (b if bias else 0) for a, b in pairwise(sizes))
    obs = call(worker, "counting_stack", "count_linear_stack(sizes, bias)", cases=[[sizes, bias]])[0]
    what = f"count_linear_stack({sizes}, bias={bias})"
    fail_if_not_implemented(obs["raised"], what)
    if obs["raised"]:
        fail("counting.stack_raised", call=what, raised=raised_name(obs["raised"]))
    got = _value(obs, what)
    if got != want:
        fail("counting.stack_value", call=what, got=got, want=want)


@points(2)
@given(spec=specs)
@example(spec=RICH)
def test_random_models(worker, params, spec):
    """count_parameters equals PyTorch's count for random models with buffers, BatchNorm and tied weights

    Both paths of the default: trainable_only not passed, and trainable_only=False passed."""
    want = truth(spec)
    obs = call(worker, "counting_model", "count_parameters(model)", spec=spec)
    model = f"the model {_describe(spec)}"
    got = _value(obs["total"], "count_parameters(model)")
    explicit = _value(obs["explicit"], "count_parameters(model, trainable_only=False)")
    if got == want["total"]:
        if explicit != want["total"]:
            fail("counting.explicit_false", model=model, got=explicit, want=want["total"])
        return
    if got == want["with_buffers"]:
        fail("counting.counts_buffers", model=model, got=got, want=want["total"])
    if got == want["tied_twice"]:
        fail("counting.counts_tied", model=model, got=got, want=want["total"])
    fail("counting.total", model=model, got=got, want=want["total"])


@points(1)
@given(spec=specs)
@example(spec=RICH)
def test_random_trainable(worker, params, spec):
    """count_parameters(model, trainable_only=True) equals the count of requires_grad parameters"""
    want = truth(spec)
    obs = call(worker, "counting_model", "count_parameters(model, trainable_only=True)", spec=spec)
    got = _value(obs["trainable"], "count_parameters(model, trainable_only=True)")
    if got != want["trainable"]:
        key = "counting.ignores_requires_grad" if got == want["total"] else "counting.trainable"
        fail(key, model=f"the model {_describe(spec)}", got=got, want=want["trainable"], total=want["total"])


@points(1)
@given(spec=specs)
@example(spec=RICH)
def test_random_per_layer(worker, params, spec):
    """per_layer equals each module's parameters(recurse=False) count, for random models"""
    want = truth(spec)
    what = f"the model {_describe(spec)}"
    got = per_layer(worker, spec, what)
    judge_per_layer(got, want["per_layer"], what, want["containers"])
