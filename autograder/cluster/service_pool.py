"""`serve --cluster ADDRESS`: the service's queue sends each submission to a Dask node, as to a pool.

The inbox stays the queue (a row is claimed in the ledger before it is sent, and its grade is
recorded by the service's grading process alone): this pool only turns one submission into one
task, as `grade --cluster` does (the same request on the wire, the same graders' resource, so a
node whose graders differ is never given it), and its result back into a future. A submission
the cluster cannot take (an exam's: its variants' secret stays here; or no node holds this
machine's graders, or none is there) is graded on this machine's warm pool, started on first need.
So is one sent to the cluster whose nodes all go away: once no node has held its graders for
`no_worker_wait` seconds, its task is cancelled and it is graded here. Each submission's future
is settled by whichever side takes its entry out of `_sent` (the node's answer, or the take-back),
never by both, so the queue records it exactly once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
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
NO_WORKER_WAIT = 20.0  # seconds a task sent to the cluster may have no node before it is graded here
WATCH_EVERY = 1.0  # seconds between the take-back thread's looks at the cluster


@dataclass
class _Sent:
    """A submission given to the cluster, with what grading it here again needs."""

    task: Any  # its Dask future
    out: Future[SubmissionResult]
    path: Path
    student: str
    assignment: str
    collected: Collected
    resource: str
    alone_since: float | None = field(default=None)  # when no node held its graders (None: one does)


class ClusterPool:
    """A pool's face (`submit`, `jobs`, `broken`, `close`) over the Dask scheduler at `address`."""

    def __init__(self, address: str, kit: Kit, lang: str, local: Callable[[], GradingPool],
                 connect_timeout: float = CONNECT_TIMEOUT, no_worker_wait: float = NO_WORKER_WAIT):
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
        self.taken_back = 0  # of those, graded here because no node was there for no_worker_wait seconds
        self.no_worker_wait = no_worker_wait
        self._sent: dict[str, _Sent] = {}  # Dask key -> what is in flight on the cluster
        self._sent_lock = threading.Lock()  # never held while a pool starts: Dask's callbacks take it
        self._closed = threading.Event()
        self._watch: threading.Thread | None = None
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
        self._closed.set()
        if self._watch is not None:
            self._watch.join(timeout=10)
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
        key = f"serve-{student}-{time.time_ns()}"
        out: Future[SubmissionResult] = Future()
        with self._sent_lock:  # the entry is in place before the task can answer
            task = self.client.submit(grade_on_node, request, pure=False, resources={SLOT: 1, resource: 1},
                                      key=key)
            self._sent[key] = _Sent(task, out, path, student, target.id, files, resource)
            self.sent += 1
            if self._watch is None:
                self._watch = threading.Thread(target=self._watch_nodes, name="take-back", daemon=True)
                self._watch.start()
        task.add_done_callback(lambda done: self._answered(key, done))
        return out

    def _answered(self, key: str, task: Any) -> None:
        """The node's answer settles the submission's future, unless it was taken back already."""
        with self._sent_lock:
            sent = self._sent.pop(key, None)
        try:
            if sent is not None:
                _settle(task, sent.out, sent.student)
        finally:
            task.release()

    def _watch_nodes(self) -> None:
        """Take back what has had no node holding its graders for `no_worker_wait` seconds."""
        while not self._closed.wait(WATCH_EVERY):
            with self._sent_lock:
                waiting = list(self._sent.items())
            if not waiting:
                continue
            now = time.monotonic()
            slots = {r: self._fresh_slots(r) for r in {s.resource for _, s in waiting}}
            for key, sent in waiting:
                if slots[sent.resource]:
                    sent.alone_since = None
                elif sent.alone_since is None:
                    sent.alone_since = now
                elif now - sent.alone_since >= self.no_worker_wait:
                    self._take_back(key)

    def _fresh_slots(self, resource: str) -> int:
        try:
            connected = self.client.status == "running"
            return node_slots(self.client, resource)[0] if connected else 0
        except Exception:  # noqa: BLE001  the scheduler is unreachable: no node there either
            return 0

    def _take_back(self, key: str) -> None:
        """Grade here what the cluster held: its entry leaves `_sent` first, so a late answer from a
        node that comes back is dropped, and the future is settled by this grading alone."""
        with self._sent_lock:
            sent = self._sent.pop(key, None)
        if sent is None:  # the node answered meanwhile
            return
        self.taken_back += 1
        log.warning("no node has taken the grading of %s for %.0f s: grading it here", sent.student,
                    self.no_worker_wait)
        sent.task.cancel()
        try:
            here = self.local().submit(sent.path, student=sent.student, assignment=sent.assignment,
                                       collected=sent.collected)
        except Exception as exc:  # noqa: BLE001  the queue retries the upload, as for a failed grading
            sent.out.set_exception(exc)
            return
        here.add_done_callback(lambda done: _relay(done, sent.out))


def _relay(done: Future[SubmissionResult], out: Future[SubmissionResult]) -> None:
    """This machine's grading as the future the queue holds."""
    try:
        out.set_result(done.result())
    except BaseException as exc:  # noqa: BLE001  CancelledError too: the future must settle
        out.set_exception(exc if isinstance(exc, Exception) else ClusterError(str(exc)))


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
