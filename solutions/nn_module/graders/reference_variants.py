"""The reference solutions of an exam variant: the lesson's files with that variant's numbers.

Instructor only (the name matches `*reference*`, so it is never copied to students). An exam
variant rewrites exact phrases of the reference files, code and docstrings alike, all at once:
every phrase must still occur in the lesson's file (otherwise the reference drifted and this
table must follow), and no replacement is rewritten again. The stubs of a student are stripped
from their variant's file, so their docstrings state their own numbers; the hidden checks load
the same file as their reference.
"""

from __future__ import annotations

import re

from .params import Params

Rules = list[tuple[str, str]]


def rules(p: Params) -> dict[str, Rules]:
    """Reference file name -> (lesson phrase, this variant's phrase), for every phrase a knob touches."""
    d, c, k = p.delivery, p.containers, p.counting
    (_, i, h1), (_, _, h2), _ = d.layers
    a, b, z = d.layer_counts
    (n1, w1), (n2, w2) = c.heads
    ka, kb, kz = k.delivery_per_layer.values()
    return {
        "delivery.py": [
            ("(3 -> 16 -> 8 -> 1)", f"({i} -> {h1} -> {h2} -> 1)"),
            ("209 parameters in total", f"{d.n_params} parameters in total"),
            ("64 + 136 + 9", f"{a} + {b} + {z}"),
            ("nn.Linear(3, 16)", f"nn.Linear({i}, {h1})"),
            ("nn.Linear(16, 8)", f"nn.Linear({h1}, {h2})"),
            ("nn.Linear(8, 1)", f"nn.Linear({h2}, 1)"),
            ("p_drop: float = 0.1", f"p_drop: float = {d.p_drop!r}"),
        ],
        "counting.py": [
            ("`[3, 16, 8, 1]` -> 64 + 136 + 9 = 209",
             f"`{list(k.delivery_sizes)}` -> {ka} + {kb} + {kz} = {k.delivery_total}"),
            ('`{"hidden.0": 64, "hidden.3": 136, "head": 9}`',
             f'`{{"hidden.0": {ka}, "hidden.3": {kb}, "head": {kz}}}`'),
        ],
        "containers.py": [
            ("two named output heads (115 parameters)",
             f"two named output heads ({c.twohead_params} parameters)"),
            ('the head `"time"` predicts\n    minutes `(N, 1)` and the head `"late"` gives two class scores '
             '`(N, 2)`', f'the head `"{n1}"` gives\n    `(N, {w1})` and the head `"{n2}"` gives `(N, {w2})`'),
            ('nn.ModuleDict({"time": nn.Linear(16, 1), "late": nn.Linear(16, 2)})',
             f"nn.ModuleDict({{{c.heads_code}}})"),
            ("`heads.time.*` and `heads.late.*`", f"`heads.{n1}.*` and `heads.{n2}.*`"),
            ('`{"time": (N, 1) tensor, "late": (N, 2) tensor}`', f"`{{{c.outputs_text}}}`"),
        ],
    }


def rewrite(name: str, source: str, rules_: Rules) -> str:
    """Replace every phrase of `rules_` in `source` in one pass; ValueError if one is missing."""
    missing = [old for old, _ in rules_ if old not in source]
    if missing:
        raise ValueError(
            f"{name}: the phrase {missing[0]!r} is not in the reference any more; update "
            "graders/reference_variants.py to the reference's current text"
        )
    changed = {old: new for old, new in rules_ if old != new}
    if not changed:
        return source
    pattern = re.compile("|".join(re.escape(old) for old in sorted(changed, key=len, reverse=True)))
    return pattern.sub(lambda m: changed[m.group(0)], source)


def variant_source(name: str, source: str, params: Params) -> str:
    """The reference file `name` (its lesson text `source`) as the variant `params` has it."""
    return rewrite(name, source, rules(params).get(name, []))
