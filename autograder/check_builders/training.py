"""A training loop's returned values, judged step by step against what its own steps computed."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class StepMismatch:
    """The first returned value that is not its step's: where, what came back, what was due."""

    step: int  # 0-based
    got: float | None
    want: float  # the step's value by the contract's measure
    measure: str  # the measure the earlier steps matched (the contract's when none did)


def returned_per_step(returned: Sequence[float | None], seen: Sequence[Mapping[str, float]],
                      contract: str, accept: Collection[str] = (), tol: float = 1e-5,
                      limit: int | None = None) -> StepMismatch | None:
    """Value k of what a loop returned is the measure of its own step k: `seen[k][measure]`.

    `seen` holds, per step the loop really took (each new state of what it trains, in order), the
    candidate measures computed in the grading process from what the step produced (its outputs,
    seen through a hook): `contract` is the measure the contract names, `accept` other measures
    whose slip is another check's business (a loss whose gradients differ is the trajectory's).
    One measure must hold for every step. Steps after the last state seen repeat it (a loop whose
    state never changes is judged on that one state); only the first `limit` values are judged.
    What it returned judged against what its own steps computed, never the reference's run: a
    wrong step that the trajectory owns costs nothing here, a wrong value returned (another
    reduction, a scaled loss, a step off by one) costs nothing there."""
    if not seen:
        return None
    count = len(returned) if limit is None else min(len(returned), limit)
    names = [contract, *(m for m in accept if m != contract)]
    best: tuple[int, str] = (-1, contract)
    for name in names:
        for k in range(count + 1):
            if k == count:
                return None
            got = returned[k]
            want = seen[min(k, len(seen) - 1)].get(name)
            if got is None or want is None or abs(got - want) > tol * max(1.0, abs(want)):
                break
        if k > best[0]:
            best = (k, name)
    step, name = best
    step = max(step, 0)
    return StepMismatch(step=step, got=returned[step], want=seen[min(step, len(seen) - 1)][contract],
                        measure=name)
