"""The service's cluster pool settles each submission's future once: by the node's answer, or by this
machine's grading when no node has held its graders for `no_worker_wait` seconds (then a late answer
from a node is dropped). A fake Dask client stands in for the cluster; the real one is
test_serve_cluster.py's."""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path
from typing import Any

import distributed

from autograder.cluster import service_pool, wire
from autograder.cluster.node import SLOT
from autograder.config import Kit
from autograder.grading.provenance import grader_digest
from autograder.grading.results import SubmissionResult
from autograder.submissions.files import Collected


class _Task:
    def __init__(self) -> None:
        self.callbacks: list[Any] = []
        self.answer: dict[str, Any] | None = None
        self.cancelled = self.released = False

    def add_done_callback(self, callback: Any) -> None:
        self.callbacks.append(callback)

    def result(self) -> dict[str, Any]:
        assert self.answer is not None
        return self.answer

    def cancel(self) -> None:
        self.cancelled = True

    def release(self) -> None:
        self.released = True

    def answers(self, result: SubmissionResult) -> None:  # the node's answer arrives
        self.answer = wire.answer(result)
        for callback in self.callbacks:
            callback(self)


class _Client:
    """The scheduler's view: the nodes in `nodes` (none at first)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.status = "running"
        self.nodes: dict[str, dict[str, Any]] = {}
        self.tasks: list[_Task] = []

    def scheduler_info(self, n_workers: int = 0) -> dict[str, Any]:
        return {"workers": dict(self.nodes)}

    def submit(self, *args: Any, **kwargs: Any) -> _Task:
        self.tasks.append(_Task())
        return self.tasks[-1]

    def close(self) -> None:
        pass


class _Here:
    """This machine's pool: what it grades, it grades at once."""

    jobs = 1

    def __init__(self) -> None:
        self.graded: list[str] = []

    def submit(self, path: Path, *, student: str | None = None, **kwargs: Any) -> Future[SubmissionResult]:
        self.graded.append(str(student))
        done: Future[SubmissionResult] = Future()
        done.set_result(SubmissionResult(str(student), "nn_module", (), notes=("here",)))
        return done

    def close(self) -> None:
        pass


def test_a_task_with_no_node_is_graded_here_once_and_a_late_answer_is_dropped(kit: Kit, tmp_path: Path,
                                                                            monkeypatch):
    monkeypatch.setattr(distributed, "Client", _Client)
    monkeypatch.setattr(service_pool, "WATCH_EVERY", 0.01)
    here = _Here()
    pool = service_pool.ClusterPool("tcp://scheduler", kit, "en", lambda: here, no_worker_wait=0.05)
    client: _Client = pool.client  # type: ignore[assignment]
    resource = wire.graders_resource(grader_digest(kit, kit.assignment("nn_module"), "en"))
    client.nodes = {"tcp://node": {"name": "node", "resources": {SLOT: 1, resource: 1}}}
    files = Collected({"tinynet.py": b"x = 1\n"}, ())
    try:
        answered = pool.submit(tmp_path, student="ada", collected=files)
        [first] = client.tasks
        first.answers(SubmissionResult("ada", "nn_module", (), notes=("node",)))
        assert answered.result(timeout=10).notes == ("node",) and first.released

        taken = pool.submit(tmp_path, student="bob", assignment="nn_module", collected=files)
        second = client.tasks[1]
        client.nodes = {}  # the only node dies
        assert taken.result(timeout=30).notes == ("here",)  # graded here, once
        assert second.cancelled and pool.taken_back == 1 and here.graded == ["bob"]
        second.answers(SubmissionResult("bob", "nn_module", (), notes=("node",)))  # a node came back late
        assert taken.result().notes == ("here",) and second.released  # dropped, the future unchanged
        assert pool.sent == 2 and not pool._sent
    finally:
        pool.close()
