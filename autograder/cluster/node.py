"""A cluster node (`autograder worker`): a Dask worker under a nanny, with this machine's warm pool.

The worker's plugin execs the pool server (pool_server.py) and waits until it answers before the
worker registers with the scheduler, so a node takes work only once its pool is warm. The worker
offers `jobs` grading slots as a Dask resource, and as many of a resource named by the digest of
its graders of each assignment; a grading task asks for one of each, so no task waits on a node
behind another, and none lands on a node whose graders are not the client's. When the scheduler
goes away Dask's worker closes; the node then
starts a new one that waits for the scheduler to come back.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from distributed import WorkerPlugin

from autograder.cluster import wire
from autograder.config import load_kit
from autograder.errors import ClusterError
from autograder.grading.provenance import grader_digest

PLUGIN = "autograder-pool"
SLOT = "grading_slot"  # the Dask resource a grading task needs one of
READY_TIMEOUT = 600.0  # seconds a pool may take to start (each worker imports torch)
GRADING_TIMEOUT = 3600.0  # seconds one grading may take before the node gives up on its pool


def _talk(path: Path, request: dict[str, Any], timeout: float) -> dict[str, Any]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(timeout)
        conn.connect(str(path))
        conn.sendall(json.dumps(request).encode() + b"\n")
        with conn.makefile("rb") as reply:
            line = reply.readline()
    if not line:
        raise ConnectionError(f"the grading pool at {path} closed without answering")
    answer: dict[str, Any] = json.loads(line)
    return answer


class PoolPlugin(WorkerPlugin):
    """This worker's pool server: started in `setup` (the worker registers only after it), stopped in
    `teardown`; `grade` hands it one request."""

    name = PLUGIN

    def __init__(self, kit_root: str, jobs: int, sandbox: bool, lang: str | None):
        self.kit_root = kit_root
        self.jobs = jobs
        self.sandbox = sandbox
        self.lang = lang
        self.socket_path = Path()
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = Path()

    def __getstate__(self) -> dict[str, Any]:  # the nanny hands the plugin to its worker process
        return {"kit_root": self.kit_root, "jobs": self.jobs, "sandbox": self.sandbox, "lang": self.lang}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]

    async def setup(self, worker: Any) -> None:
        folder = Path(worker.local_directory)
        self.socket_path = folder / "pool.sock"
        self.log_path = folder / "pool.log"
        self._start()
        deadline = time.monotonic() + READY_TIMEOUT
        while not self._healthy():
            await asyncio.sleep(0.2)
            if time.monotonic() > deadline:
                self.teardown(worker)
                raise ClusterError(
                    f"the grading pool did not start in {READY_TIMEOUT:.0f} s, see {self.log_path}")

    def _start(self) -> None:
        command = [sys.executable, "-m", "autograder.cluster.pool_server", "--kit", self.kit_root,
                   "--socket", str(self.socket_path), "--jobs", str(self.jobs)]
        command += [] if self.sandbox else ["--no-sandbox"]
        command += ["--lang", self.lang] if self.lang else []
        with self.log_path.open("ab") as log:
            # stdin is a pipe only we hold: the pool server stops when this worker is gone.
            self.process = subprocess.Popen(  # noqa: S603  the worker's argv, built above; no shell
                command, stdin=subprocess.PIPE, stdout=log, stderr=log)

    def _healthy(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            tail = self.log_path.read_text(errors="replace")[-2000:]
            raise ClusterError(f"the grading pool stopped (exit {self.process.returncode}):\n{tail}")
        if not self.socket_path.exists():
            return False
        try:
            return bool(_talk(self.socket_path, {"op": "health"}, 10.0).get("ok"))
        except (OSError, ValueError):
            return False

    def teardown(self, worker: Any) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            assert process.stdin is not None
            process.stdin.close()  # the server closes its pool and exits
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def grade(self, request: dict[str, Any]) -> dict[str, Any]:
        """One grading on this node's pool (restarted first if it has died)."""
        if self.process is None or self.process.poll() is not None:
            self._start()
            deadline = time.monotonic() + READY_TIMEOUT
            while not self._healthy():
                if time.monotonic() > deadline:
                    raise ClusterError(f"the grading pool did not start again ({self.log_path})")
                time.sleep(0.2)
        return _talk(self.socket_path, request, GRADING_TIMEOUT)


def grade_on_node(request: dict[str, Any]) -> dict[str, Any]:
    """The Dask task: plain data in, plain data out (a result or a refusal)."""
    from distributed import get_worker

    worker = get_worker()
    plugin = worker.plugins[PLUGIN]
    assert isinstance(plugin, PoolPlugin)
    return wire.from_node(plugin.grade(request), worker.address)


def graders_digests(kit_root: Path, lang: str | None) -> set[str]:
    """The digests of this node's graders, one per assignment of its kit (in its language): a
    client's task asks for its own as a resource, so no other graders ever grade it here."""
    kit = load_kit(kit_root)
    language = lang or kit.language
    return {grader_digest(kit, assignment, language) for assignment in kit.assignments.values()}


def run_node(scheduler: str, kit_root: Path, jobs: int, sandbox: bool, lang: str | None,
             name: str | None = None) -> None:
    """Serve `scheduler` until interrupted: a nanny and its worker, again whenever they close."""
    asyncio.run(_serve(scheduler, kit_root, jobs, sandbox, lang, name))


async def _serve(scheduler: str, kit_root: Path, jobs: int, sandbox: bool, lang: str | None,
                 name: str | None) -> None:
    from distributed import Nanny

    plugin = PoolPlugin(str(kit_root.resolve()), jobs, sandbox, lang)
    resources = {SLOT: jobs, **{wire.graders_resource(d): jobs for d in graders_digests(kit_root, lang)}}
    while True:
        # memory_limit=0: the nanny would count only the worker, not the pool; the sandbox's
        # cgroups bound what student code may take.
        nanny = Nanny(scheduler, nthreads=jobs, resources=resources, plugins={plugin}, name=name,
                      memory_limit=0, death_timeout=None)
        with contextlib.suppress(OSError, TimeoutError):
            await nanny
            await nanny.finished()
        await nanny.close()
        await asyncio.sleep(1.0)  # the scheduler is gone: wait for it to come back
