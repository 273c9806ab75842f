"""Public checks of task counting: the lesson's known counts, ValueError, buffers, tied and frozen weights."""

from __future__ import annotations

from autograder.checks import fail, points

from ..support import call, fail_if_not_implemented, raised_name, require_raised

# Models the worker builds from plain data (probes._build_counting_model); numbers in params.py.
TIED = {"tie": [10, 4]}


def delivery_like(cp, frozen: tuple[str, ...] = ()) -> dict:
    """A DeliveryMLP-shaped model (Linear, ReLU, Dropout, Linear, ReLU; head) with two buffers."""
    i, h1, h2, out = cp.delivery_sizes
    spec = {
        "modules": [
            ["hidden", ["seq", [["linear", i, h1, True], ["relu"], ["dropout"],
                                ["linear", h1, h2, True], ["relu"]]]],
            ["head", ["linear", h2, out, True]],
        ],
        "buffers": [i, i],
    }
    return {**spec, "frozen": list(frozen)} if frozen else spec


def twohead_like(cp) -> dict:
    """A TwoHead-shaped model: a Linear + ReLU body and a ModuleDict of heads."""
    i, body = cp.twohead_body
    heads = [[name, ["linear", body, width, True]] for name, width in cp.twohead_heads]
    return {"modules": [["body", ["seq", [["linear", i, body, True], ["relu"]]]], ["heads", ["dict", heads]]]}


def _value(obs, what: str) -> int:
    if obs["type"] != "int":
        fail("counting.not_int", call=what, got_type=obs["type"])
    return obs["value"]


def stack_call(sizes, bias, kind: str = "list") -> str:
    """How a count_linear_stack call reads in feedback; bias None: the default, not passed."""
    shown = str(tuple(sizes)) if kind == "tuple" else str(list(sizes))
    if bias is None:
        return f"count_linear_stack({shown}) with the default bias"
    return f"count_linear_stack({shown}, bias={bias})"


@points(2)
def test_known_stacks(worker, params):
    """count_linear_stack: {p.counting.known_text}

    Also with the default bias (True) and with sizes given as a tuple."""
    known = [(*case, "list") for case in params.counting.known_stacks]
    known += [(sizes, None, want, "list") for sizes, bias, want, _ in known[:2] if bias]  # the default bias
    known += [(sizes, bias, want, "tuple") for sizes, bias, want, _ in known[:1]]  # sizes as a tuple
    cases = [[list(sizes), bias, kind] for sizes, bias, _, kind in known]
    obs = call(worker, "counting_stack", "count_linear_stack(sizes, bias)", cases=cases)
    for (sizes, bias, want, kind), got in zip(known, obs, strict=True):
        what = stack_call(sizes, bias, kind)
        fail_if_not_implemented(got["raised"], what)
        if got["raised"]:
            fail("counting.stack_raised", call=what, raised=raised_name(got["raised"]))
        value = _value(got, what)
        if value != want:
            key = "counting.default_bias" if bias is None else "counting.stack_value"
            fail(key, call=what, got=value, want=want)


@points(2)
def test_stack_value_error(worker, params):
    """count_linear_stack raises ValueError for fewer than two sizes or a size < 1

    With the default bias, bias=True and bias=False, and for sizes given as a tuple."""
    bad = params.counting.bad_stacks
    cases = [[list(sizes), bias, "list"] for sizes in bad for bias in (None, True, False)]
    cases += [[list(sizes), None, "tuple"] for sizes in bad]
    obs = call(worker, "counting_stack", "count_linear_stack(sizes)", cases=cases)
    for (sizes, bias, kind), got in zip(cases, obs, strict=True):
        what = stack_call(sizes, bias, kind)
        fail_if_not_implemented(got["raised"], what)
        if got["raised"] is None:
            fail("counting.no_value_error", call=what, observed=f"returned {got['value']!r}")
        require_raised(got["raised"], "ValueError", what, "counting.no_value_error", "observed", call=what)


def count(worker, spec, what):
    obs = call(worker, "counting_model", what, spec=spec)
    return _value(obs["total"], f"count_parameters({what})"), _value(
        obs["trainable"], f"count_parameters({what}, trainable_only=True)")


@points(2)
def test_count_buffers_and_tied(worker, params):
    """count_parameters never counts buffers and counts a tied weight once"""
    cp = params.counting
    total, _ = count(worker, delivery_like(cp), "a DeliveryMLP-shaped model")
    if total != cp.delivery_total:
        key = "counting.counts_buffers" if total == cp.delivery_total + 6 else "counting.total"
        fail(key, model="a DeliveryMLP-shaped model with buffers x_mean, x_std", got=total,
             want=cp.delivery_total)
    total, _ = count(worker, TIED, "an Embedding(10, 4) tied to Linear(4, 10)")
    if total != cp.tied_total:
        key = "counting.counts_tied" if total == cp.tied_total + 40 else "counting.total"
        fail(key, model="an Embedding(10, 4) whose weight is shared with Linear(4, 10)", got=total,
             want=cp.tied_total)


@points(1)
def test_trainable_only(worker, params):
    """count_parameters(model, trainable_only=True) leaves out frozen (requires_grad=False) parameters"""
    cp = params.counting
    total, trainable = count(worker, delivery_like(cp, ("hidden.0",)), "a model with hidden.0 frozen")
    if total != cp.delivery_total:
        fail("counting.frozen_total", got=total, want=cp.delivery_total)
    if trainable != cp.frozen_trainable:
        key = "counting.ignores_requires_grad" if trainable == total else "counting.trainable"
        fail(key, got=trainable, want=cp.frozen_trainable, total=total)


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


@points(2)
def test_per_layer_known(worker, params):
    """per_layer gives each module's own count: TwoHead -> {p.counting.twohead_text}"""
    cp = params.counting
    what = "a TwoHead-shaped model"
    got = per_layer(worker, twohead_like(cp), what)
    judge_per_layer(got, dict(cp.twohead_layers), what, {"", "body", "heads"})
    what = "a DeliveryMLP-shaped model"
    got = per_layer(worker, delivery_like(cp), what)
    judge_per_layer(got, cp.delivery_per_layer, what, {"", "hidden"})
