"""A cluster node's warm grading pool as its own exec'd process, answering JSON lines on a unix socket.

    python -m autograder.cluster.pool_server --kit KIT --socket PATH [--jobs N] [--no-sandbox] [--lang L]

Dask worker processes are daemonic and may not start multiprocessing children, so the node's
plugin execs this process instead; it holds a `GradingPool` (sandboxed workers and grading
processes). Each connection carries one request line and gets one answer line: plain JSON
(wire.py). It stops, with its pool, when its stdin closes: the worker that started it is gone,
even after a SIGKILL. It stops at once then: the pool's sandboxes and grading processes are ended
without waiting for a grading in flight (its worker is gone, nobody reads the answer), and the
process exits without the interpreter's teardown (seconds with torch loaded), so the worker its
nanny starts next never runs its pool beside this one.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socketserver
import sys
import threading
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from autograder.cluster import wire
from autograder.config import Kit, load_kit
from autograder.errors import AutograderError, ClusterError
from autograder.grading.options import GradeOptions
from autograder.grading.pool import GradingPool
from autograder.grading.provenance import grader_digest
from autograder.submissions.collect import collect

MAX_LINE = wire.MAX_REQUEST_BYTES * 2  # base64 and JSON around the files
ORPHAN_CLOSE = 3.0  # seconds an orphaned server gives its pool to close before it exits regardless


class PoolService:
    """The pool and what each request needs of it: the graders' digest per assignment, a lock."""

    def __init__(self, kit: Kit, options: GradeOptions, jobs: int):
        self.kit = kit
        self.options = options
        self.pool = GradingPool(kit, options, jobs)
        self._digests: dict[str, str] = {}
        self._lock = threading.Lock()  # a broken pool is restarted by one request, not by each

    def start(self) -> None:
        """The pool started and warm: each slot has graded the reference solution, to full marks."""
        self.pool.start()
        target = self.kit.assignment(None)
        reference = collect(target.solutions, target.given, target)
        warming = [self.pool.submit(target.solutions, student="reference", collected=reference)
                   for _ in range(self.pool.jobs)]
        for future in warming:
            result = future.result()
            if result.score < result.max_score or result.problem:
                raise ClusterError(
                    f"this node grades the reference solution of {target.id} {result.score:g}/"
                    f"{result.max_score:g}, so it takes no work: run `autograder doctor` here")

    def digest(self, assignment: str) -> str:
        if assignment not in self._digests:
            lang = self.options.language(self.kit.language)
            self._digests[assignment] = grader_digest(self.kit, self.kit.assignment(assignment), lang)
        return self._digests[assignment]

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        if request.get("op") == "health":
            return {"ok": True, "jobs": self.pool.jobs, "pid": os.getpid()}
        if request.get("op") != "grade":
            return wire.refusal("bad-request", f"unknown op {request.get('op')!r}")
        try:
            assignment = self.kit.assignment(str(request["assignment"])).id
            ours = self.digest(assignment)
            if ours != request["graders"]:
                return wire.graders_differ(assignment, os.uname().nodename, str(self.kit.root), ours,
                                           str(request["graders"]))
            collected = wire.collected_of(request)
            with self._lock:
                future = self.pool.submit(Path(str(request["student"])), student=str(request["student"]),
                                          assignment=assignment, collected=collected)
            return wire.answer(future.result())
        except BrokenProcessPool:
            self.pool.broken = True  # the next request starts the pool again
            return wire.refusal("failed", "a grading process died on this node (out of memory?)")
        except (AutograderError, KeyError, TypeError, ValueError) as exc:
            return wire.refusal("failed", f"{type(exc).__name__}: {exc}")


def serve(service: PoolService, socket_path: Path) -> socketserver.ThreadingUnixStreamServer:
    class Handler(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            line = self.rfile.readline(MAX_LINE + 1)
            try:
                request = json.loads(line)
                reply = service.handle(request) if isinstance(request, dict) else wire.refusal(
                    "bad-request", "a request is a JSON object")
            except json.JSONDecodeError as exc:
                reply = wire.refusal("bad-request", f"not JSON: {exc}")
            self.wfile.write(json.dumps(reply).encode() + b"\n")

    socket_path.unlink(missing_ok=True)
    server = socketserver.ThreadingUnixStreamServer(str(socket_path), Handler)
    server.daemon_threads = True
    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="autograder.cluster.pool_server")
    parser.add_argument("--kit", type=Path, required=True)
    parser.add_argument("--socket", type=Path, required=True)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--no-sandbox", action="store_true")
    parser.add_argument("--lang", default=None)
    args = parser.parse_args(argv)
    try:
        service = PoolService(load_kit(args.kit), GradeOptions(sandbox=not args.no_sandbox, lang=args.lang),
                              args.jobs)
    except AutograderError as exc:
        sys.exit(f"error: {exc}")
    try:
        service.start()  # warm before the socket exists: the node takes work only after this
        server = serve(service, args.socket)
        threading.Thread(target=stop_when_orphaned, args=(service, args.socket), daemon=True).start()
        server.serve_forever()
    except AutograderError as exc:
        sys.exit(f"error: {exc}")
    finally:
        service.pool.close()
        args.socket.unlink(missing_ok=True)


def stop_when_orphaned(service: PoolService, socket_path: Path, stdin: Any = None,
                       leave: Callable[[int], object] = os._exit) -> None:
    """At EOF on stdin (the worker that holds the other end is gone): no more requests, the pool's
    sandboxes stopped (a grading in flight fails at once instead of running to its end), its
    grading processes killed, and the process gone (`leave`)."""
    (stdin or sys.stdin.buffer).read()
    socket_path.unlink(missing_ok=True)
    for worker in list(service.pool.workers):
        with contextlib.suppress(Exception):
            worker.stop(graceful=False)
    closing = threading.Thread(target=service.pool.close, daemon=True)
    closing.start()
    closing.join(ORPHAN_CLOSE)  # a thread grading here may hold the pool a moment longer: not waited for
    leave(0)


if __name__ == "__main__":
    main()
