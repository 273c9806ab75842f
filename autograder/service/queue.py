"""The service's grading queue: a thread feeds the inbox's queued uploads to warm pools, one per language.

Nothing is graded from memory: an upload is in the inbox (committed) before it is queued, the
thread takes rows from there, and a grade lands in the ledger in the same transaction that marks
its row graded. Started again after a crash, the queue first puts back what was being graded.
Rows are claimed by this process as they are taken (grading_claims.py), so another grading
process on the same file never grades them too; the queue renews its claims while it runs. It
wakes on an upload of its own process (`wake`) and on any change another process made to the file.
With `cluster`, its pools send submissions to the Dask nodes there (cluster/service_pool.py).
An upload whose key (its files, the graders, an exam's context) is the student's current grade's
gets that grade at once, as a batch keeps it; an instructor's regrade is always graded again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from datetime import datetime
from pathlib import Path
from typing import Protocol

from autograder.batch import stamped
from autograder.config import Kit, SandboxConfig
from autograder.errors import AutograderError
from autograder.exam.plan import plan_for
from autograder.grading.grader import Plan
from autograder.grading.options import GradeOptions
from autograder.grading.pool import GradingPool
from autograder.grading.provenance import grader_key, submission_digest
from autograder.grading.results import SubmissionResult
from autograder.ledger.grading_claims import RENEW_EVERY
from autograder.ledger.inbox import Inbox, Received
from autograder.ledger.release import extensions_of
from autograder.service.door import spool_name
from autograder.submissions.collect import collect
from autograder.submissions.files import Collected
from autograder.submissions.students import student_key

log = logging.getLogger("autograder.service")
MAX_ATTEMPTS = 3  # a grading process that died this often for one upload: the upload is failed
TEXT = "text:"  # a row's message that is a key of the service's texts (shown in the student's language)
UID_STRIDE = 100  # each language's pool runs its sandboxes as uids of its own


class Pool(Protocol):
    """What the queue grades on: this machine's GradingPool, or the cluster's (cluster/service_pool.py)."""

    broken: bool

    @property
    def jobs(self) -> int: ...

    def submit(self, path: Path, *, student: str | None = None, assignment: str | None = None,
               plan: Plan | None = None, collected: Collected | None = None) -> Future[SubmissionResult]: ...

    def close(self) -> None: ...


class GradingQueue:
    """Grades what the inbox holds, as fast as the pools take it; `start` once, `wake` on each upload."""

    def __init__(self, kit: Kit, inbox: Inbox, *, jobs: int = 1, sandbox: bool = True,
                 lang: str | None = None, secret: bytes | None = None, signing_key: bytes = b"",
                 on_graded: Callable[[Received, SubmissionResult], object] | None = None,
                 cluster: str | None = None, cluster_wait: float = 20.0):
        self.kit = kit
        self.inbox = inbox
        self.jobs = max(1, jobs)
        self.sandbox = sandbox
        self.first_lang = lang or kit.language
        self.secret = secret
        self.signing_key = signing_key
        self.on_graded = on_graded
        self.cluster = cluster
        self.cluster_wait = cluster_wait  # seconds a submission sent to the cluster may find no node
        self.pools: dict[str, Pool] = {}
        self._pool_lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._in_flight = 0
        self._count_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.spool = Path(tempfile.mkdtemp(prefix="autograder-spool-"))
        self._digests: dict[tuple[str, str], tuple[str, dict[str, str]]] = {}  # with each part's digest

    # -- life --------------------------------------------------------------------------------
    def start(self) -> GradingQueue:
        """Warm the first language's pool, put back interrupted gradings, and start feeding."""
        self.pool(self.first_lang)
        self.inbox.watch(self._wake.set)  # an upload a web worker (another process) stored
        requeued = self.inbox.requeue_interrupted()
        if requeued:
            log.info("queued again %d submissions a stopped server was grading", requeued)
        self._thread = threading.Thread(target=self._feed, name="grading-queue", daemon=True)
        self._thread.start()
        self._wake.set()
        return self

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        for pool in self.pools.values():
            pool.close()
        self.pools = {}
        shutil.rmtree(self.spool, ignore_errors=True)

    def wake(self) -> None:
        self._wake.set()

    def pool(self, lang: str) -> Pool:
        """The warm pool grading in `lang`; the first is forked with `jobs` processes before any
        request thread runs, the others (made on a first launch in their language) run on a thread.
        With a cluster: the cluster's, with such a pool to fall back on (started on first need)."""
        with self._pool_lock:
            if lang not in self.pools:
                index = len(self.pools)
                kit = dataclasses.replace(
                    self.kit, sandbox=SandboxConfig(self.kit.sandbox.uid_base + UID_STRIDE * index))
                jobs = self.jobs if index == 0 else 1
                options = GradeOptions(sandbox=self.sandbox, lang=lang)
                if self.cluster is not None:
                    from autograder.cluster.service_pool import ClusterPool

                    self.pools[lang] = ClusterPool(self.cluster, kit, lang,
                                                   lambda: GradingPool(kit, options, jobs).start(),
                                                   no_worker_wait=self.cluster_wait)
                else:
                    self.pools[lang] = GradingPool(kit, options, jobs).start()
            return self.pools[lang]

    @property
    def capacity(self) -> int:
        """Uploads handed to the pools at once: enough to keep every grading process busy."""
        return 2 * sum(p.jobs for p in self.pools.values()) or 2

    # -- feeding -----------------------------------------------------------------------------
    def _feed(self) -> None:
        renewed = time.monotonic()
        while not self._stop.is_set():
            self._wake.wait(timeout=1.0)
            self._wake.clear()
            if time.monotonic() - renewed >= RENEW_EVERY:  # the rows in flight stay this process's
                with contextlib.suppress(Exception):
                    self.inbox.renew_claims()
                renewed = time.monotonic()
            while not self._stop.is_set():
                with self._count_lock:
                    free = self.capacity - self._in_flight
                if free <= 0:
                    break
                rows = self.inbox.take(free)
                if not rows:
                    break
                for row in rows:
                    try:
                        self._submit(row)
                    except Exception:  # the feeding thread must outlive any one upload
                        log.exception("could not queue submission %d", row.id)
                        retry = row.attempts < MAX_ATTEMPTS
                        self.inbox.fail(row.id, TEXT + ("retrying" if retry else "gave_up"), retry=retry)

    def _submit(self, row: Received) -> None:
        try:
            path = self._spooled(row)
            target = self.kit.assignment(row.assignment)
            collected = collect(path, target.given, target)
            received = datetime.fromisoformat(row.received_at)
            with self.inbox.lock:  # each student's extension (the ledger's), for the late policy
                extensions = extensions_of(self.inbox.book, target.id)
            plan = plan_for(self.kit, target.id, self.secret, {student_key(row.student): received},
                            extensions)
            context = plan.context(path, row.student) if plan is not None else ""
            key = (submission_digest(collected, context), self._grader_digest(target.id, row.lang))
            known = None if row.regrade else self.inbox.current_grade(target.id, row.student, key)
            if known is not None:  # the same files, graders and context as the current grade: it stands
                self.inbox.finish(row.id, known, record=False)
                shutil.rmtree(path.parent, ignore_errors=True)
                return
            future = self.pool(row.lang).submit(path, student=row.student, assignment=target.id, plan=plan,
                                                collected=collected)
        except AutograderError as exc:  # the kit's setup (an exam's secret...): the instructor's to fix
            log.error("submission %d of %s could not be graded: %s", row.id, row.student, exc)
            self.inbox.fail(row.id, TEXT + "not_gradable", retry=False)
            shutil.rmtree(self.spool / str(row.id), ignore_errors=True)
            return
        with self._count_lock:
            self._in_flight += 1
        future.add_done_callback(lambda done: self._done(row, key, path, done))

    def _spooled(self, row: Received) -> Path:
        """The upload as a file for the grader (the inbox keeps the bytes; this copy is scratch), in a
        folder of its own and named as the student named it: a note about it names their file."""
        folder = self.spool / str(row.id)
        folder.mkdir(exist_ok=True)
        path = folder / spool_name(row.filename, row.kind)
        path.write_bytes(self.inbox.upload(row.id))
        return path

    def _grader_digest(self, assignment: str, lang: str) -> str:
        if (assignment, lang) not in self._digests:
            self._digests[assignment, lang] = grader_key(self.kit, self.kit.assignment(assignment), lang)
        return self._digests[assignment, lang][0]

    def _done(self, row: Received, key: tuple[str, str], path: Path, done: Future[SubmissionResult]) -> None:
        try:
            try:
                files = self._digests.get((row.assignment, row.lang), ("", {}))[1]
                result = stamped(done.result(), key, self.signing_key, files=files)
            except Exception as exc:  # noqa: BLE001  a grading process died (out of memory...): retried
                retry = row.attempts < MAX_ATTEMPTS
                log.warning("grading of submission %d stopped (%s)", row.id, type(exc).__name__)
                self.inbox.fail(row.id, TEXT + ("retrying" if retry else "gave_up"), retry=retry)
                if self.pools.get(row.lang) is not None:
                    self.pools[row.lang].broken = True
                return
            self.inbox.finish(row.id, result, counts=self.kit.assignment(row.assignment).counts)
            if self.on_graded is not None:
                with contextlib.suppress(Exception):  # a passback problem never undoes a grade
                    self.on_graded(row, result)
        finally:
            shutil.rmtree(path.parent, ignore_errors=True)
            with self._count_lock:
                self._in_flight -= 1
            self._wake.set()
