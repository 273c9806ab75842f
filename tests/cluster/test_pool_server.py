"""A node's pool server ends with its Dask worker: at EOF on its stdin it stops its pool's sandboxes and
leaves at once, without waiting for a grading in flight to end (issue #40: it used to linger ~30 s
beside the pool of the worker the nanny started next)."""

from __future__ import annotations

import io
import threading
from pathlib import Path

from autograder.cluster import pool_server


class _Worker:
    def __init__(self) -> None:
        self.stopped = False

    def stop(self, graceful: bool = True) -> None:
        self.stopped = True


class _Pool:
    """A pool whose close waits for a grading that never ends (a student's loop, a hung task)."""

    def __init__(self) -> None:
        self.workers = [_Worker(), _Worker()]
        self.grading = threading.Event()
        self.closing = threading.Event()

    def close(self) -> None:
        self.closing.set()
        self.grading.wait()


def test_an_orphaned_pool_server_stops_its_sandboxes_and_leaves_without_waiting(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(pool_server, "ORPHAN_CLOSE", 0.05)
    service = pool_server.PoolService.__new__(pool_server.PoolService)
    service.pool = _Pool()  # type: ignore[assignment]
    sock = tmp_path / "pool.sock"
    sock.write_text("")
    workers = list(service.pool.workers)
    left: list[int] = []
    pool_server.stop_when_orphaned(service, sock, stdin=io.BytesIO(b""), leave=left.append)
    assert left == [0]  # gone, though the grading in flight never ended
    assert all(w.stopped for w in workers) and service.pool.closing.is_set()
    assert not sock.exists()  # no request reaches it any more
    service.pool.grading.set()
