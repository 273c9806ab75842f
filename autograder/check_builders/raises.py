"""A "raises" check built to own refusal alone: bad cases must raise, hidden valid ones only must run."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from autograder.checks import fail
from autograder.probe_calls import ProbeCaller

_DEFAULT = ProbeCaller()


@dataclass(frozen=True)
class RaisesCase:
    """One call of a raises check: its inputs (plain data), whether it must raise, how it reads."""

    inputs: Any
    must_raise: bool
    what: str


def mix_valid(gen: np.random.Generator, bad: Sequence[RaisesCase],
              valid: Sequence[RaisesCase]) -> list[RaisesCase]:
    """`valid` inserted among `bad` at places drawn from `gen` (the bad cases' own order kept).

    Which calls must raise is then a pattern only the grader knows: a forged answer that repeats a
    refusal everywhere, or replays another grading's answers, misses it."""
    out = list(bad)
    for case in valid:
        out.insert(int(gen.integers(len(out) + 1)), case)
    return out


def judge_refusals(cases: Sequence[RaisesCase], raised: Sequence[Any], exception: str, *,
                   refuse_key: str, accept_key: str, field: str = "raised",
                   returned: Callable[[int], str] | None = None,
                   caller: ProbeCaller = _DEFAULT) -> None:
    """Each bad case raised `exception` (or a subclass); each valid case returned without raising.

    `raised[k]` is the probe's report of case k's exception ({type, mro, message, ...}) or None.
    What a valid case returned is never judged here: its value is another check's property, so a
    slip in it is not charged twice. Only that it ran counts (a stub's NotImplementedError fails as
    not implemented). `refuse_key` is the message for a bad case that did not raise `exception`
    (its `field` placeholder gets the exception, or what `returned(k)` says came back, with
    `call`); `accept_key` the message for a valid case that raised (`call`, `raised`)."""
    if len(raised) != len(cases):
        fail(refuse_key, call=cases[0].what if cases else "", **{field: f"{len(raised)} answers"})
    for k, (case, obs) in enumerate(zip(cases, raised, strict=True)):
        caller.fail_if_not_implemented(obs, case.what)
        if not case.must_raise:
            if obs is not None:
                fail(accept_key, call=case.what, raised=caller.raised_name(obs))
            continue
        if obs is None:
            shown = returned(k) if returned else caller.raised_name(None)
            fail(refuse_key, call=case.what, **{field: shown})
        caller.require_raised(obs, exception, case.what, refuse_key, field, call=case.what)
