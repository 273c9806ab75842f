"""`serve --cluster ADDRESS`: the service's uploads graded on a Dask node (`autograder worker`), on this
machine when no node holds its graders, and exactly once in the ledger either way; an upload whose only
node is killed mid-grading is taken back once no node has been there for `cluster_wait` seconds, and
graded here, once."""

from __future__ import annotations

import os
import signal
import sqlite3
import sys
import time
from pathlib import Path

from conftest import ROOT, SOLUTIONS, sandbox_works
from test_cluster import Cluster, _executed

sys.path.insert(0, str(ROOT / "tests" / "service"))

from browser import Browser
from served import example, serving, upload, wait_graded

from autograder.cluster.service_pool import ClusterPool
from autograder.config import Kit
from autograder.service.queue import GradingQueue
from autograder.service.settings import ServiceSettings


def _graded(browser: Browser, url: str, name: str) -> dict:
    answer = upload(browser, url, [example(name)])
    assert answer.status_code == 202, answer.text
    data = wait_graded(browser, url, answer.json()["status_url"], timeout=600.0)
    assert data["status"] == "graded" and data["score"] is not None, data
    return data


def _slow_upload() -> list[tuple[str, bytes]]:
    """A submission whose containers.py loops until its task's time limit: the node is still grading it
    when the test kills the node."""
    files = [(p.name, p.read_bytes()) for p in sorted(SOLUTIONS.glob("*.py")) if p.name != "containers.py"]
    return [*files, ("containers.py", (ROOT / "tests" / "hostile" / "loop_in_function.py.txt").read_bytes())]


def _busy(cluster: Cluster, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while not cluster.busy_pids():
        assert time.monotonic() < deadline, "the node never started grading"
        time.sleep(0.2)


def test_the_service_grades_here_without_a_node_then_on_the_node_that_joins(kit: Kit, tmp_path: Path):
    cluster = Cluster(tmp_path / "cluster", kit)
    cluster.root.mkdir()
    cluster.start_scheduler()
    try:
        settings = ServiceSettings(kit, tmp_path / "data", demo=True, sandbox=sandbox_works(kit),
                                   cluster=cluster.address, cluster_wait=3.0)
        with serving(settings) as served:
            assert isinstance(served.state.queue, GradingQueue)
            pool = served.state.queue.pools[kit.language]
            assert isinstance(pool, ClusterPool)
            ada, bob = Browser(), Browser()
            ada.get(f"{served.url}/demo/student?as=ada")
            bob.get(f"{served.url}/demo/student?as=bob")
            alone = _graded(ada, served.url, "ayesha.zip")  # no node at all: this machine's pool
            assert pool.sent == 0 and pool._local is not None

            cluster.start_node()
            cluster.wait_for(1)
            on_node = _graded(bob, served.url, "ayesha.zip")
            assert pool.sent == 1 and sum(_executed(cluster).values()) == 1
            assert on_node["score"] == alone["score"]  # the same files, the same grade, wherever graded

            # The only node dies mid-grading: the task waits for a node, none comes, it is graded here.
            carol = Browser()
            carol.get(f"{served.url}/demo/student?as=carol")
            answer = upload(carol, served.url, _slow_upload())
            assert answer.status_code == 202, answer.text
            _busy(cluster)
            os.killpg(cluster.nodes[0].pid, signal.SIGKILL)
            cluster.nodes[0].wait()
            taken = wait_graded(carol, served.url, answer.json()["status_url"], timeout=600.0)
            assert taken["status"] == "graded" and taken["score"] is not None, taken
            assert pool.sent == 2 and pool.taken_back == 1 and not pool._sent
        db = sqlite3.connect(settings.gradebook)
        try:
            counts = dict(db.execute("SELECT student, COUNT(*) FROM gradings GROUP BY student").fetchall())
        finally:
            db.close()
        assert counts == {"demo-ada": 1, "demo-bob": 1, "demo-carol": 1}  # each exactly once
    finally:
        cluster.stop()
