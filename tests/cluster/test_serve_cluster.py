"""`serve --cluster ADDRESS`: the service's uploads graded on a Dask node (`autograder worker`), on this
machine when no node holds its graders, and exactly once in the ledger either way."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

from conftest import ROOT, sandbox_works
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


def test_the_service_grades_here_without_a_node_then_on_the_node_that_joins(kit: Kit, tmp_path: Path):
    cluster = Cluster(tmp_path / "cluster", kit)
    cluster.root.mkdir()
    cluster.start_scheduler()
    try:
        settings = ServiceSettings(kit, tmp_path / "data", demo=True, sandbox=sandbox_works(kit),
                                   cluster=cluster.address)
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
        db = sqlite3.connect(settings.gradebook)
        try:
            counts = dict(db.execute("SELECT student, COUNT(*) FROM gradings GROUP BY student").fetchall())
        finally:
            db.close()
        assert counts == {"demo-ada": 1, "demo-bob": 1}
    finally:
        cluster.stop()
