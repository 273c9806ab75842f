"""Public checks of task counting: the lesson's known counts, ValueError, buffers, tied and frozen weights."""

from __future__ import annotations

from autograder.graders import RaisesCase, fail, judge_refusals, mix_valid, points

from ..counting_cases import (
    delivery_like,
    delivery_per_layer,
    delivery_text,
    draw_bad_stacks,
    draw_delivery,
    draw_frozen,
    draw_stacks,
    draw_tied,
    draw_twohead,
    stack_count,
    tied,
    tied_text,
    twohead_like,
    twohead_per_layer,
)
from ..support import call, caller, fail_if_not_implemented, raised_name

# Models the worker builds from plain data (probes._build_counting_model); the lesson's numbers in
# params.py. Each check also asks about hidden stacks or models (counting_cases), counted here.


def _value(obs, what: str) -> int:
    if obs["type"] != "int":
        fail("counting.not_int", call=what, got_type=obs["type"])
    return obs["value"]


def stack_call(sizes, bias, kind: str = "list") -> str:
    """How a count_linear_stack call reads in feedback; bias None: the default, not passed."""
    shown = str(tuple(sizes)) if kind == "tuple" else str(list(sizes))
    if bias is None:
        return f"count_linear_stack({shown})"
    return f"count_linear_stack({shown}, bias={bias})"


def _stacks(worker, cases) -> list:
    """count_linear_stack on each (sizes, bias, kind) case, in that order."""
    sent = [[list(sizes), bias, kind] for sizes, bias, kind in cases]
    return call(worker, "counting_stack", "count_linear_stack(sizes, bias)", cases=sent)


def _stack_value(got, what: str) -> int:
    fail_if_not_implemented(got["raised"], what)
    if got["raised"]:
        fail("counting.stack_raised", call=what, raised=raised_name(got["raised"]))
    return _value(got, what)


@points(2)
def test_known_stacks(worker, params, challenge):
    """count_linear_stack: {p.counting.known_text}

    Also with the default bias (True) and with sizes given as a tuple; then hidden stacks."""
    known = [(*case, "list") for case in params.counting.known_stacks]
    known += [(sizes, None, want, "list") for sizes, bias, want, _ in known[:2] if bias]  # the default bias
    known += [(sizes, bias, want, "tuple") for sizes, bias, want, _ in known[:1]]  # sizes as a tuple
    hidden = draw_stacks(challenge.rng())
    known += [(sizes, bias, stack_count(sizes, bias), kind) for sizes, bias, kind in hidden]
    obs = _stacks(worker, [(sizes, bias, kind) for sizes, bias, _, kind in known])
    for (sizes, bias, want, kind), got in zip(known, obs, strict=True):
        what = stack_call(sizes, bias, kind)
        value = _stack_value(got, what)
        if value != want:
            key = "counting.default_bias" if bias is None else "counting.stack_value"
            fail(key, call=what, got=value, want=want)


@points(2)
def test_stack_value_error(worker, params, challenge):
    """count_linear_stack raises ValueError for fewer than two sizes or a size < 1

    With the default bias, bias=True and bias=False, and for sizes given as a tuple; among them, at
    hidden places, hidden valid stacks that must return without raising (their counts are the
    other checks' business)."""
    gen = challenge.rng()
    lesson = params.counting.bad_stacks
    bad = [(list(sizes), bias, "list") for sizes in lesson for bias in (None, True, False)]
    bad += [(list(sizes), None, "tuple") for sizes in lesson]
    cases = mix_valid(gen, [RaisesCase(case, True, stack_call(*case)) for case in bad + draw_bad_stacks(gen)],
                      [RaisesCase(case, False, stack_call(*case)) for case in draw_stacks(gen)[:3]])
    obs = _stacks(worker, [case.inputs for case in cases])
    judge_refusals(cases, [got["raised"] for got in obs], "ValueError", refuse_key="counting.no_value_error",
                   accept_key="counting.stack_raised", field="observed",
                   returned=lambda k: f"returned {obs[k]['value']!r}", caller=caller)


def count(worker, spec, what):
    obs = call(worker, "counting_model", what, spec=spec)
    return _value(obs["total"], f"count_parameters({what})"), _value(
        obs["trainable"], f"count_parameters({what}, trainable_only=True)")


def _judge_total(got: int, want: int, buffers: int, tied_twice: int, model: str) -> None:
    """The total, with the two usual slips named: buffers counted, a tied weight counted twice."""
    if got == want:
        return
    key = "counting.total"
    if buffers and got == want + buffers:
        key = "counting.counts_buffers"
    elif tied_twice and got == want + tied_twice:
        key = "counting.counts_tied"
    fail(key, model=model, got=got, want=want)


@points(2)
def test_count_buffers_and_tied(worker, params, challenge):
    """count_parameters never counts buffers and counts a tied weight once

    For the lesson's DeliveryMLP shape and Embedding(10, 4), then for hidden sizes of both."""
    cp = params.counting
    gen = challenge.rng()
    shapes = [cp.delivery_sizes, draw_delivery(gen)]
    for sizes in shapes:
        model = delivery_text(sizes)
        total, _ = count(worker, delivery_like(sizes), model)
        _judge_total(total, sum(delivery_per_layer(sizes).values()), 2 * sizes[0], 0, model)
    for vocab, dim in [(10, 4), draw_tied(gen)]:
        model = tied_text(vocab, dim)
        total, _ = count(worker, tied(vocab, dim), model)
        _judge_total(total, vocab * dim + vocab, 0, vocab * dim, model)


@points(1)
def test_trainable_only(worker, params, challenge):
    """count_parameters(model, trainable_only=True) leaves out frozen (requires_grad=False) parameters

    For the lesson's DeliveryMLP shape with hidden.0 frozen, then hidden sizes and frozen layers."""
    cp = params.counting
    gen = challenge.rng()
    for sizes, frozen in [(cp.delivery_sizes, ("hidden.0",)), (draw_delivery(gen), draw_frozen(gen))]:
        own = delivery_per_layer(sizes)
        want_total = sum(own.values())
        want = want_total - sum(own[name] for name in frozen)
        model = delivery_text(sizes, frozen)
        total, trainable = count(worker, delivery_like(sizes, frozen), model)
        if trainable != want:  # the total (frozen ones included) is count_buffers_and_tied's business
            key = "counting.ignores_requires_grad" if trainable == total else "counting.trainable"
            fail(key, model=model, got=trainable, want=want, total=total)


def per_layer(worker, spec, what: str) -> dict[str, int]:
    obs = call(worker, "counting_per_layer", f"per_layer({what})", spec=spec)
    if obs["items"] is None:
        fail("counting.per_layer_type", got_type=obs["type"])
    if obs["bad"]:
        fail("counting.per_layer_items", bad=", ".join(obs["bad"]))
    return dict(obs["items"])


def judge_per_layer(got: dict[str, int], want: dict[str, int], what: str,
                    containers: set[str]) -> None:
    """Diagnose the two usual per_layer mistakes before the generic message."""
    if got == want:
        return
    zero = sorted(k for k, v in got.items() if v == 0)
    if zero:
        fail("counting.per_layer_empty", model=what, names=zero, want=want)
    if containers & set(got):
        fail("counting.per_layer_recurse", model=what, names=sorted(containers & set(got)), got=got,
             want=want)
    fail("counting.per_layer", model=what, got=got, want=want)


def _twohead_text(body, heads) -> str:
    shown = ", ".join(f"{name!r}: Linear({body[1]}, {w})" for name, w in heads)
    return f"TwoHead(body=Linear({body[0]}, {body[1]}), heads={{{shown}}})"


@points(2)
def test_per_layer_known(worker, params, challenge):
    """per_layer gives each module's own count: TwoHead -> {p.counting.twohead_text}

    Then the same shapes with hidden sizes (and hidden heads)."""
    cp = params.counting
    what = _twohead_text(cp.twohead_body, cp.twohead_heads)
    got = per_layer(worker, twohead_like(cp.twohead_body, cp.twohead_heads), what)
    judge_per_layer(got, dict(cp.twohead_layers), what, {"", "body", "heads"})
    what = delivery_text(cp.delivery_sizes)
    got = per_layer(worker, delivery_like(cp.delivery_sizes), what)
    judge_per_layer(got, cp.delivery_per_layer, what, {"", "hidden"})
    gen = challenge.rng()
    body, heads = draw_twohead(gen)
    what = _twohead_text(body, heads)
    got = per_layer(worker, twohead_like(body, heads), what)
    judge_per_layer(got, twohead_per_layer(body, heads), what, {"", "body", "heads"})
    sizes = draw_delivery(gen)
    what = delivery_text(sizes)
    got = per_layer(worker, delivery_like(sizes), what)
    judge_per_layer(got, delivery_per_layer(sizes), what, {"", "hidden"})
