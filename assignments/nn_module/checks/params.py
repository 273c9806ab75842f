"""Every number the nn_module graders (and the reference solutions) depend on, in one place.

`default()` gives the lesson's numbers (its docstrings). In an exam every student gets a variant: a choice
for each knob in `KNOBS` (grading.toml declares the options), and `for_variant(choices)` turns it
into the Params every check and reference of that student uses; knobs not chosen keep the lesson's
value. `describe(params)` says, in a student's words, what their numbers are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from .lesson_numbers import (  # noqa: F401  the checks import them from here
    CheckpointParams,
    ContainersParams,
    CountingParams,
    DeliveryParams,
    DropoutParams,
    NumpyForwardParams,
    Params,
    TinyNetParams,
    Tolerances,
    _stack_count,
)

# Seeds the kit keeps as written; every other seed is drawn from the graders' secret at grading time
# (autograder/grading/challenge.py), so a check's inputs cannot be known in advance. The toy data is
# the lesson's make_toy() (the contract says the accuracy is reached on it).
PUBLIC_SEEDS = ("tinynet.toy_seed",)


def default() -> Params:
    """The parameters of the default grading run."""
    return Params()


# ----------------------------------------------------------------------------- exam variants

# knob -> what it sets; grading.toml's [assignments.<id>.exam.variants] lists the options of each.
KNOBS = {
    "tinynet_hidden": "the hidden width H of the graders' TinyNet(3, H, 2) (int)",
    "delivery_hidden": "DeliveryMLP's two hidden widths [h1, h2] (3 -> h1 -> h2 -> 1)",
    "delivery_p_drop": "DeliveryMLP's default dropout probability p_drop (0 < p < 1)",
    "twohead_heads": "TwoHead's two heads, name -> width ({ eta = 1, delay = 3 })",
    "counting_stack": "the nn.Linear stack count_linear_stack is graded on ([784, 256, 128, 10])",
}


def lesson_choices() -> dict[str, Any]:
    """The lesson's value of every knob: the default variant."""
    p = default()
    return {
        "tinynet_hidden": p.tinynet.hidden,
        "delivery_hidden": list(p.delivery.sizes[1:3]),
        "delivery_p_drop": p.delivery.p_drop,
        "twohead_heads": dict(p.containers.heads),
        "counting_stack": list(p.counting.known_stacks[1][0]),
    }


def _int(value: Any, knob: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{knob}: {value!r} is not a whole number from {low} to {high}")
    return value


def _widths(value: Any, knob: str, count: int | None, low: int, high: int) -> tuple[int, ...]:
    if not isinstance(value, list | tuple) or (count is not None and len(value) != count):
        raise ValueError(f"{knob}: {value!r} is not a list of {count or 'at least two'} sizes")
    return tuple(_int(v, knob, low, high) for v in value)


def _heads(value: Any, knob: str) -> tuple[tuple[str, int], ...]:
    if not isinstance(value, Mapping) or len(value) != 2:
        raise ValueError(f"{knob}: {value!r} is not a table of exactly two heads, name = width")
    heads = tuple((str(name), _int(width, knob, 1, 16)) for name, width in value.items())
    for name, _ in heads:
        if not name.isidentifier() or name.startswith("_"):
            raise ValueError(f"{knob}: head name {name!r} is not a plain identifier")
    return heads


def for_variant(choices: Mapping[str, Any]) -> Params:
    """The Params of one exam variant; ValueError names the knob when a choice is unknown or bad."""
    unknown = sorted(set(choices) - set(KNOBS))
    if unknown:
        raise ValueError(f"unknown knob {unknown[0]!r} (known: {', '.join(KNOBS)})")
    c = {**lesson_choices(), **choices}
    base = default()
    hidden = _int(c["tinynet_hidden"], "tinynet_hidden", 2, 64)
    h1, h2 = _widths(c["delivery_hidden"], "delivery_hidden", 2, 2, 64)
    p_drop = c["delivery_p_drop"]
    if isinstance(p_drop, bool) or not isinstance(p_drop, int | float) or not 0 < p_drop < 1:
        raise ValueError(f"delivery_p_drop: {p_drop!r} is not a probability between 0 and 1")
    p_drop = float(p_drop)
    heads = _heads(c["twohead_heads"], "twohead_heads")
    stack = _widths(c["counting_stack"], "counting_stack", None, 1, 4096)
    if len(stack) < 2:
        raise ValueError(f"counting_stack: {list(stack)!r} needs at least two sizes")

    tinynet = dataclasses.replace(
        base.tinynet, hidden=hidden, forward_sizes=((3, hidden, 2), *base.tinynet.forward_sizes[1:])
    )
    sizes = (3, h1, h2, 1)
    delivery = dataclasses.replace(
        base.delivery, sizes=sizes, p_drop=p_drop, n_params=_stack_count(sizes, True),
        weight_shapes=(("hidden.0.weight", (h1, 3)), ("hidden.3.weight", (h2, h1)),
                       ("head.weight", (1, h2))),
        train_p=0.4 if p_drop == 0.3 else base.delivery.train_p,  # the explicit p differs from the default
    )
    body = base.containers.body
    containers = dataclasses.replace(
        base.containers, head_names=tuple(n for n, _ in heads), head_widths=tuple(w for _, w in heads),
        twohead_params=3 * body + body + sum(body * w + w for _, w in heads),
    )
    frozen = sizes[0] * h1 + h1
    counting = dataclasses.replace(
        base.counting,
        known_stacks=(
            (sizes, True, _stack_count(sizes, True)),
            (stack, True, _stack_count(stack, True)),
            (stack, False, _stack_count(stack, False)),
            base.counting.known_stacks[3],
        ),
        delivery_total=_stack_count(sizes, True),
        frozen_trainable=_stack_count(sizes, True) - frozen,
        delivery_sizes=sizes,
        twohead_heads=heads,
        twohead_layers=(("body.0", 3 * body + body), *((f"heads.{n}", body * w + w) for n, w in heads)),
    )
    return dataclasses.replace(base, tinynet=tinynet, delivery=delivery, containers=containers,
                               counting=counting)


def describe(params: Params) -> list[str]:
    """A student's own numbers, one line each, for the exam README."""
    d, c, k, t = params.delivery, params.containers, params.counting, params.tinynet
    stack, bias_n, plain_n = k.known_stacks[1][0], k.known_stacks[1][2], k.known_stacks[2][2]
    return [
        f"`tinynet`: TinyNet is graded as `{t.label}` (fc1.weight `{t.fc1_shape}`, "
        f"fc2.weight `{t.fc2_shape}`), trained on `make_toy()`.",
        f"`delivery`: `DeliveryMLP` is 3 -> {d.sizes[1]} -> {d.sizes[2]} -> 1: "
        f"`self.hidden = {d.hidden_code}`, `self.head = nn.Linear({d.sizes[2]}, 1)`; "
        f"{d.n_params} parameters ({d.count_terms}); the default `p_drop` is {d.p_drop:g}.",
        f"`counting`: `count_linear_stack({list(stack)})` is {bias_n} ({plain_n} with `bias=False`); "
        f"a DeliveryMLP has {k.delivery_total} parameters.",
        f"`containers`: `TwoHead` has the heads `{{{c.heads_code}}}` ({c.twohead_params} parameters).",
        "`numpy_forward`: `delivery_forward` runs the state_dict of your DeliveryMLP "
        f"(weights {d.shapes_text}).",
    ]
