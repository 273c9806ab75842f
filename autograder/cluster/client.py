"""`grade --cluster ADDRESS`: the batch's executor that grades on a Dask cluster's nodes.

The ledger is the queue, never Dask's futures: the executor keeps what the batch claimed and has
not yet recorded, and keeps no more tasks in flight than the cluster has free grading slots.
Whatever is lost (a worker killed, the scheduler restarted, the client's connection cut) is
submitted again; a result that comes twice (Dask reran a task whose worker died after it ran)
is yielded once. Only this process writes the ledger (batch.py records what is yielded).

A task asks for a slot of a node holding the client's graders (the Dask resource named by their
digest, which each node offers for its own graders), so the scheduler never gives it to a node
whose graders differ: such a node is named as refused, and the batch runs on the nodes that
match, or on this machine when none does. A node whose graders changed after it registered (its
kit edited) still offers the old digest and refuses what it is given: a refusal is never the
student's failure; the node is named and dropped for the batch (no task goes to it again), the
submission is given to the nodes that match, and to this machine when none is left.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import CancelledError
from dataclasses import dataclass
from typing import Any

from autograder.batch import Entry, Notice, PoolExecutor
from autograder.cluster import wire
from autograder.cluster.node import SLOT, grade_on_node
from autograder.config import Assignment, Kit
from autograder.errors import ClusterError
from autograder.grading.grader import Plan
from autograder.grading.options import GradeOptions
from autograder.grading.results import SubmissionResult
from autograder.sandbox import launch

ATTEMPTS = 3  # gradings of one submission that failed on a node before the batch names it ungraded
CONNECT_TIMEOUT = 60.0  # seconds to reach the scheduler, and to get it back after it is lost
WAIT_FOR_NODES = 300.0  # seconds to wait for a node with a grading slot to join
SLOTS_FRESH = 1.0  # seconds the count of grading slots is trusted before the scheduler is asked again
NO_NODE_GRACE = 10.0  # seconds tasks stay in flight with no node at all before they are taken back


@dataclass(frozen=True)
class ClusterExecutor:
    """Grades a batch's due submissions on the nodes of the scheduler at `address`."""

    address: str
    connect_timeout: float = CONNECT_TIMEOUT
    wait_for_nodes: float = WAIT_FOR_NODES

    def grade(self, kit: Kit, target: Assignment, todo: Sequence[Entry], options: GradeOptions,
              plan: Plan | None, notice: Notice) -> Iterator[SubmissionResult]:
        from distributed import Client

        if plan is not None:
            raise ClusterError(f"{target.id} is an exam: exams are graded on one machine (the variants' "
                               "secret stays there); run grade without --cluster")
        requests = {e.student: wire.grade_request(target.id, e.student, e.collected, e.key[1], str(e.path))
                    for e in todo}  # a submission too big to send stops the batch before any grading
        graders = {e.key[1] for e in todo}
        assert len(graders) <= 1, "one batch, one assignment, one language: one graders' digest"
        try:
            client = Client(self.address, timeout=self.connect_timeout, set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise ClusterError(f"no Dask scheduler answers at {self.address} ({exc}): start one with "
                               "`dask scheduler`, and nodes with `autograder worker --scheduler "
                               f"{self.address}`") from None
        run = _Run(client, requests, self, wire.graders_resource(graders.pop() if graders else ""), target.id,
                   notice)
        try:
            yield from run.results()
        finally:
            client.close()
        if run.missing:  # no node holds these graders: this machine grades what is left
            notice(f"no node of {self.address} holds this machine's graders of {target.id}: grading the "
                   f"{len(run.missing)} left here")
            if options.sandbox:
                launch.check_available(kit.sandbox.uid_base)
            left = [e for e in todo if e.student in set(run.missing)]
            yield from PoolExecutor().grade(kit, target, left, options, plan, notice)


def node_slots(client: Any, resource: str) -> tuple[int, int, dict[str, str]]:
    """(grading slots of the nodes holding the graders `resource` names, slots of the nodes holding
    other graders, {address: name} of those nodes); nothing while the scheduler is away."""
    nodes = cluster_nodes(client, resource)
    slots = sum(n.slots for n in nodes if n.ours)
    others = sum(n.slots for n in nodes if not n.ours)
    return slots, others, {n.address: n.name for n in nodes if not n.ours}


@dataclass(frozen=True)
class Node:
    """A grading node as the scheduler sees it: its grading slots, and whether it offers our graders."""

    address: str
    name: str
    slots: int
    ours: bool


def cluster_nodes(client: Any, resource: str) -> list[Node]:
    """The scheduler's grading nodes (none while it is away); `ours`: offering the graders `resource`
    names."""
    try:
        workers = client.scheduler_info(n_workers=-1).get("workers", {})
    except (OSError, TimeoutError, CancelledError):
        workers = {}  # the scheduler is away: nothing is submitted until it is back
    nodes = []
    for address, worker in workers.items():
        resources = worker.get("resources", {})
        slots = int(resources.get(SLOT, 0))
        if slots:
            ours = min(slots, int(resources.get(resource, 0)))
            nodes.append(Node(address, str(worker.get("name", address)), ours or slots, bool(ours)))
    return nodes


class _Run:
    """One batch on the cluster: what is still missing, what is in flight, what failed."""

    def __init__(self, client: Any, requests: dict[str, dict[str, Any]], executor: ClusterExecutor,
                 resource: str, assignment: str, notice: Notice):
        self.client = client
        self.requests = requests
        self.executor = executor
        self.resource = resource  # held by the nodes whose graders are the client's
        self.assignment = assignment
        self.notice = notice
        self.missing = list(requests)  # in the batch's order; the ledger lacks these
        self.failures: dict[str, list[str]] = {}
        self.refused: set[str] = set()  # nodes named as holding other graders
        self.dropped: set[str] = set()  # nodes that refused a task (graders changed since they registered)
        self._slots_at = (-SLOTS_FRESH, 0)  # (when, how many)
        self._others = 0  # grading slots of nodes with other graders (or dropped), at the last look
        self._usable: list[str] = []  # addresses of the nodes a task may go to, at the last look
        self._again: list[str] = []  # students a node refused: given to the others, not counted as failures

    def results(self) -> Iterator[SubmissionResult]:
        """Results as the nodes give them; returns with `missing` left when no node matches."""
        from distributed import as_completed

        while queue := [s for s in self.missing if len(self.failures.get(s, ())) < ATTEMPTS]:
            if not self._wait_until_usable():
                return  # nodes there are, but none with our graders: the caller grades the rest here
            flying: dict[Any, str] = {}
            done = as_completed(loop=self.client.loop)
            self._top_up(queue, flying, done)
            stop = threading.Event()
            threading.Thread(target=self._watch, args=(flying, stop), daemon=True, name="in-flight").start()
            try:
                for future in done:
                    student = flying.pop(future)
                    result = self._result(future, student)
                    future.release()
                    queue[:0] = [s for s in self._again if s not in queue]  # first, on another node
                    self._again.clear()
                    self._top_up(queue, flying, done)  # first: the slot grades while the batch records
                    if result is not None and student in self.missing:
                        self.missing.remove(student)
                        yield result  # the batch records it before asking for the next
            finally:
                stop.set()
        if self.missing:
            shown = "\n  ".join(f"{s}: {self.failures[s][-1]}" for s in self.missing[:10])
            raise ClusterError(f"{len(self.missing)} submissions failed {ATTEMPTS} times on the cluster and "
                               f"were not graded (run grade again to retry them):\n  {shown}")

    def _watch(self, flying: dict[Any, str], stop: threading.Event) -> None:
        """Take back what is in flight once no node has been there for a while: Dask would hold
        those tasks until one joins; cancelled, they are submitted again when one does."""
        empty_since: float | None = None
        while not stop.wait(1.0):
            if self._slots() > 0 or not flying:
                empty_since = None
            elif empty_since is None:
                empty_since = time.monotonic()
            elif time.monotonic() - empty_since > NO_NODE_GRACE:
                self.client.cancel(list(flying.copy()))  # copy: one step under the GIL
                empty_since = None

    def _top_up(self, queue: list[str], flying: dict[Any, str], done: Any) -> None:
        """As many tasks in flight as the nodes have grading slots: none waits queued on a node."""
        slots = self._slots()
        while queue and len(flying) < slots and self.client.status == "running":
            student = queue.pop(0)
            future = self.client.submit(grade_on_node, self.requests[student], pure=False,
                                        resources={SLOT: 1, self.resource: 1},
                                        # only once a node is dropped: a restarted worker has a new address
                                        workers=list(self._usable) if self.dropped else None,
                                        key=f"grade-{student}-{time.time_ns()}")
            flying[future] = student
            done.add(future)

    def _result(self, future: Any, student: str) -> SubmissionResult | None:
        """The future's result, or None when it must be graded again (lost, or failed on a node)."""
        from distributed import KilledWorker

        try:
            reply = future.result()
        except CancelledError:
            return None  # the scheduler (or our connection to it) was lost: not a failure of its own
        except KilledWorker as exc:
            self.failures.setdefault(student, []).append(f"its workers died ({exc})")
            return None
        except Exception as exc:  # noqa: BLE001  the node could not reach its pool, or the comm broke
            self.failures.setdefault(student, []).append(f"{type(exc).__name__}: {exc}")
            return None
        try:
            result = wire.result_of(reply)
        except wire.NodeRefused as exc:
            if exc.kind == wire.GRADERS_DIFFER and wire.node_of(reply):  # its kit changed: not the student's
                self._drop(wire.node_of(reply), student, exc)
                self._again.append(student)
                return None
            self.failures.setdefault(student, []).append(str(exc))
            return None
        if result.student != student:
            raise ClusterError(f"a node answered for {result.student!r} when asked to grade {student!r}")
        return result

    def _drop(self, address: str, student: str, refused: Exception) -> None:
        """No task of this batch goes to the node at `address` again (named once)."""
        if address in self.dropped:
            return
        self.dropped.add(address)
        self._slots_at = (-SLOTS_FRESH, 0)  # counted again without it before the next task goes out
        self.notice(f"node {address} refused {student} and is dropped for this batch ({refused}); its "
                    "submissions go to the nodes that match, or are graded here when none is left")

    def _slots(self) -> int:
        """The grading slots of nodes with our graders, those dropped aside (asked of the scheduler at
        most every SLOTS_FRESH seconds); a node with other graders is named the first time it is seen."""
        now = time.monotonic()
        if now - self._slots_at[0] < SLOTS_FRESH:
            return self._slots_at[1]
        nodes = cluster_nodes(self.client, self.resource)
        for node in nodes:
            if not node.ours and node.address not in self.refused:
                self.refused.add(node.address)
                self.notice(f"node {node.name} ({node.address}) refused: its graders of "
                            f"{self.assignment} differ from this machine's (another kit, kit version or "
                            "--lang); the batch runs on the nodes that match")
        usable = [n for n in nodes if n.ours and n.address not in self.dropped]
        slots = sum(n.slots for n in usable)
        self._usable = [n.address for n in usable]
        self._slots_at = (now, slots)
        self._others = sum(n.slots for n in nodes) - slots
        return slots

    def _wait_until_usable(self) -> bool:
        """Back on the scheduler (after losing it) and with at least one node that grades with our
        graders (True); False when nodes are there but none holds them."""
        deadline = time.monotonic() + self.executor.wait_for_nodes
        while self.client.status != "running" or self._slots() == 0:
            if self.client.status in ("closed", "closing"):
                raise ClusterError(f"lost the Dask scheduler at {self.executor.address} and could not "
                                   f"reconnect in {self.executor.connect_timeout:.0f} s; graded students "
                                   "are kept: run grade again once it is back")
            if self.client.status == "running" and self._others:
                return False
            if time.monotonic() > deadline:
                raise ClusterError(f"no autograder node has joined the scheduler at {self.executor.address} "
                                   f"in {self.executor.wait_for_nodes:.0f} s: start one with "
                                   f"`autograder worker --scheduler {self.executor.address}`")
            time.sleep(0.2)
        return True
