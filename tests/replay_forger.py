"""A forger of observations for the kit's tests, the strongest there is: it answers every probe call
as the reference solution answered it in a grading whose hidden challenges it could not know.

It is modelled outside any student file (a session that replays answers), with no integrity check
to get past: it is what is left once every other defence has fallen. It records the reference
solution graded with another secret (all it can know: the graders, the params, the seeds, the
public checks), keyed by probe and inputs, and in the real grading answers each call with the
recorded answer to the same inputs, or else the answer its probe gave at the same place in the order.
"""

from __future__ import annotations

import hashlib
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from autograder.checks import StudentCodeError
from autograder.grading import judge
from autograder.grading.course import Graders
from autograder.sandbox import codec
from autograder.sandbox.local import InProcessSession

Outcome = tuple[str, Any]


def _key(probe: str, kwargs: dict[str, Any]) -> str:
    return probe + ":" + hashlib.sha256(codec.encode(kwargs)).hexdigest()


class Recorder:
    """A session that passes calls to the real one and remembers every answer."""

    def __init__(self, session: InProcessSession):
        self.task = session.task
        self.session = session
        self.by_input: dict[str, Outcome] = {}
        self.by_order: dict[str, list[Outcome]] = defaultdict(list)

    def call(self, probe: str, /, **kwargs: Any) -> Any:
        outcome: Outcome
        try:
            outcome = ("value", self.session.call(probe, **kwargs))
        except StudentCodeError as exc:
            outcome = ("error", exc)
        self.by_input[_key(probe, kwargs)] = outcome
        self.by_order[probe].append(outcome)
        return _give(outcome)


class Replay:
    """A session whose every answer is one the recorder saw (the same inputs, else the same place)."""

    def __init__(self, recorded: Recorder):
        self.task = recorded.task
        self.recorded = recorded
        self.calls: dict[str, int] = defaultdict(int)

    def call(self, probe: str, /, **kwargs: Any) -> Any:
        seen = self.recorded.by_order.get(probe) or [("error", StudentCodeError(probe, "KeyError", probe))]
        place = min(self.calls[probe], len(seen) - 1)
        self.calls[probe] += 1
        return _give(self.recorded.by_input.get(_key(probe, kwargs), seen[place]))


def _give(outcome: Outcome) -> Any:
    kind, value = outcome
    if kind == "error":
        raise value
    return codec.decode(codec.encode({"v": value}))["v"]  # a fresh copy, as a worker would send


def _grade(graders: Graders, folder: Path, task_id: str) -> tuple[Recorder, list[Any]]:
    task = graders.assignment.task(task_id)
    session = Recorder(InProcessSession(task.id, folder, task.module, graders.probes_source))
    return session, [judge.run_check(c, session, graders, task) for c in graders.for_task(task.id)]


def replay_gains(graders: Graders, reference: Path,
                 guess: bytes = b"what the forger guessed") -> dict[str, float]:
    """The points each check gives a replay of the reference's answers recorded under another
    secret (only checks that give any). The reference must score full marks when recorded."""
    guessed = graders.with_secret(hashlib.sha256(guess).digest())
    gained: dict[str, float] = {}
    try:
        for task in graders.assignment.tasks:
            recorded, honest = _grade(guessed, reference, task.id)
            assert sum(c.score for c in honest) == task.points, [(c.check_id, c.feedback) for c in honest]
            replay = Replay(recorded)
            forged = [judge.run_check(c, replay, graders, task) for c in graders.for_task(task.id)]
            gained.update({c.check_id: c.score for c in forged if c.score})
    finally:  # the reference's modules go with the run
        for name, module in list(sys.modules.items()):
            if str(getattr(module, "__file__", "") or "").startswith(str(reference)):
                del sys.modules[name]
    return gained

