"""`serve --cluster ADDRESS`: the service's queue sends each submission to a Dask node, as to a pool.

The inbox stays the queue (a row is claimed in the ledger before it is sent, and its grade is
recorded by the service's grading process alone): this pool only turns one submission into one
task, as `grade --cluster` does (the same request on the wire, the same graders' resource, so a
node whose graders differ is never given it), and its result back into a future. A submission
the cluster cannot take (an exam's: its variants' secret stays here; or no node holds this
machine's graders, or none is there) is graded on this machine's warm pool, started on first need.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from autograder.cluster import wire
from autograder.cluster.client import CONNECT_TIMEOUT, SLOTS_FRESH, node_slots
from autograder.cluster.node import SLOT, grade_on_node
from autograder.config import Kit
from autograder.errors import ClusterError
from autograder.grading.grader import Plan
from autograder.grading.pool import GradingPool
from autograder.grading.provenance import grader_digest
from autograder.grading.results import SubmissionResult
from autograder.submissions.collect import collect
from autograder.submissions.files import Collected

log = logging.getLogger("autograder.service")


class ClusterPool:
    """A pool's face (`submit`, `jobs`, `broken`, `close`) over the Dask scheduler at `address`."""

    def __init__(self, address: str, kit: Kit, lang: str, local: Callable[[], GradingPool],
                 connect_timeout: float = CONNECT_TIMEOUT):
        from distributed import Client

        self.address = address
        self.kit = kit
        self.lang = lang
        self._local_factory = local
        self._local: GradingPool | None = None
        self._lock = threading.Lock()
        self._digests: dict[str, str] = {}
        self._slots: dict[str, tuple[float, int]] = {}  # resource -> (when, slots)
        self.broken = False  # a pool's flag; the cluster resubmits on its own, so it stays False
        self.sent = 0  # submissions given to nodes (what the benchmark divides by the nodes)
        try:
            self.client = Client(address, timeout=connect_timeout, set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise ClusterError(f"no Dask scheduler answers at {address} ({exc}): start one with `dask "
                               "scheduler`, and nodes with `autograder worker --scheduler "
                               f"{address}`") from None

    @property
    def jobs(self) -> int:
        """Grading slots the nodes offer (at least one: the queue keeps that many in flight)."""
        found = [slots for _, slots in self._slots.values()]
        return max(1, max(found, default=0) + (self._local.jobs if self._local is not None else 0))

    def close(self) -> None:
        self.client.close()
        if self._local is not None:
            self._local.close()

    def local(self) -> GradingPool:
        with self._lock:
            if self._local is None:
                self._local = self._local_factory()
            return self._local

    def slots(self, resource: str) -> int:
        """The grading slots of the nodes holding the graders `resource` names (asked at most every
        SLOTS_FRESH seconds)."""
        at, slots = self._slots.get(resource, (-SLOTS_FRESH, 0))
        if time.monotonic() - at >= SLOTS_FRESH:
            slots = node_slots(self.client, resource)[0] if self.client.status == "running" else 0
            self._slots[resource] = (time.monotonic(), slots)
        return slots

    def submit(self, path: Path, *, student: str | None = None, assignment: str | None = None,
               plan: Plan | None = None, collected: Collected | None = None) -> Future[SubmissionResult]:
        """Grade one submission on a node holding this machine's graders, or here when none can."""
        target = self.kit.assignment(assignment)
        if target.id not in self._digests:
            self._digests[target.id] = grader_digest(self.kit, target, self.lang)
        digest = self._digests[target.id]
        resource = wire.graders_resource(digest)
        if plan is not None or student is None or self.slots(resource) == 0:
            return self.local().submit(path, student=student, assignment=target.id, plan=plan,
                                       collected=collected)
        files = collected if collected is not None else collect(path, target.given, target)
        request = wire.grade_request(target.id, student, files, digest, str(path))
        task = self.client.submit(grade_on_node, request, pure=False, resources={SLOT: 1, resource: 1},
                                  key=f"serve-{student}-{time.time_ns()}")
        self.sent += 1
        out: Future[SubmissionResult] = Future()
        task.add_done_callback(lambda done: _settle(done, out, student))
        return out


def _settle(task: Any, out: Future[SubmissionResult], student: str) -> None:
    """The node's answer as the future's result; a refusal, a lost task or a dead worker as its exception
    (the service's queue grades that row again, a few times)."""
    try:
        result = wire.result_of(task.result())
        if result.student != student:
            raise ClusterError(f"a node answered for {result.student!r} when asked to grade {student!r}")
        out.set_result(result)
    except BaseException as exc:  # noqa: BLE001  CancelledError too: the future must settle, whatever it was
        out.set_exception(exc if isinstance(exc, Exception) else ClusterError(str(exc)))
    finally:
        task.release()
