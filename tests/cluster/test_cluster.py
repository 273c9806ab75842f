"""Grading on Dask: a scheduler and two `autograder worker` nodes on 127.0.0.1, started with the CLI.

Proves: a batch graded on the cluster gives exactly the local engine's results (execution times
aside), a hostile submission included, and the nodes survive it; a node's Dask worker killed with
SIGKILL mid-batch and a scheduler killed and restarted mid-batch both end with every student in
the ledger exactly once, with the same results, and a batch that stops when its only node is gone
leaves grades.csv and report.html showing what it recorded; a node whose graders differ from the
client's is refused by name and gets no task: the batch runs on the nodes that match, or here when
none does; a node whose graders changed after it registered refuses, is named and dropped for the
batch, and its students are graded once, on the node that matches or here when none is left (never
counted as their failures); a submission too big for a task stops the batch before anything is graded.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ROOT, SOLUTIONS, STUBS, sandbox_works

from autograder.batch import grade_batch
from autograder.cli import main
from autograder.cluster import wire
from autograder.cluster.client import ClusterExecutor
from autograder.config import Kit, load_kit
from autograder.errors import ClusterError
from autograder.grading.options import GradeOptions

AUTOGRADER = str(Path(sys.executable).with_name("autograder"))
DASK = str(Path(sys.executable).with_name("dask"))
HOSTILE = ROOT / "tests" / "hostile"


class Cluster:
    """A scheduler and nodes as subprocesses (each in its own session, to be killed as a whole)."""

    def __init__(self, root: Path, kit: Kit):
        self.root = root
        self.kit = kit
        self.port = 0  # until the scheduler has bound one of the system's choice (start_scheduler)
        self.address = ""
        self.scheduler: subprocess.Popen[bytes] | None = None
        self.nodes: list[subprocess.Popen[bytes]] = []

    def _spawn(self, command: list[str], log: str) -> subprocess.Popen[bytes]:
        with (self.root / log).open("ab") as handle:
            return subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True,
                                    cwd=self.root)

    def start_scheduler(self) -> None:
        """The scheduler on the port it bound the first time (a restart comes back to it); the first
        time it binds port 0 and writes its address to a scheduler file: no port is raced for."""
        found = self.root / "scheduler.json"
        found.unlink(missing_ok=True)
        self.scheduler = self._spawn([DASK, "scheduler", "--host", "127.0.0.1", "--port", str(self.port),
                                      "--scheduler-file", str(found), "--no-dashboard"], "scheduler.log")
        if not self.address:
            self.address = self._scheduler_address(found)
            self.port = int(self.address.rsplit(":", 1)[1])

    def _scheduler_address(self, found: Path) -> str:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert self.scheduler is not None and self.scheduler.poll() is None, "the scheduler stopped"
            with contextlib.suppress(OSError, ValueError, KeyError):
                return str(json.loads(found.read_text(encoding="utf-8"))["address"])
            time.sleep(0.2)
        log = (self.root / "scheduler.log").read_text(errors="replace")
        raise AssertionError(f"the scheduler wrote no address in 120 s: {log[-2000:]}")

    def start_node(self, kit_root: Path = ROOT) -> None:
        flags = [] if sandbox_works(self.kit) else ["--no-sandbox"]
        self.nodes.append(self._spawn([AUTOGRADER, "worker", "--scheduler", self.address, "--jobs", "1",
                                       "--kit", str(kit_root), *flags], f"node{len(self.nodes)}.log"))

    def workers(self) -> dict[str, dict]:
        from distributed import Client

        with Client(self.address, timeout=30, set_as_default=False) as client:
            return dict(client.scheduler_info(n_workers=-1)["workers"])

    def pids(self) -> set[int]:
        """The process ids of the Dask workers now in the cluster."""
        from distributed import Client

        with Client(self.address, timeout=30, set_as_default=False) as client:
            return set(client.run(os.getpid).values())

    def busy_pids(self) -> list[int]:
        """The process ids of the Dask workers executing a task now."""
        from distributed import Client

        def busy(dask_worker: object) -> tuple[int, int]:
            return os.getpid(), len(dask_worker.state.executing)  # type: ignore[attr-defined]

        with Client(self.address, timeout=30, set_as_default=False) as client:
            return [pid for pid, executing in client.run(busy).values() if executing]

    def wait_for(self, count: int, timeout: float = 240.0) -> dict[str, dict]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, TimeoutError):
                found = self.workers()
                if len(found) >= count:
                    return found
            time.sleep(0.5)
        logs = {p.name: p.read_text(errors="replace")[-1500:] for p in self.root.glob("*.log")}
        raise AssertionError(f"{count} nodes did not join in {timeout} s: {logs}")

    def kill_scheduler(self) -> None:
        assert self.scheduler is not None
        os.killpg(self.scheduler.pid, signal.SIGKILL)
        self.scheduler.wait()

    def stop(self) -> None:
        for process in [*self.nodes, self.scheduler]:
            if process is not None and process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, kit) -> Iterator[Cluster]:
    running = Cluster(tmp_path_factory.mktemp("cluster"), kit)
    running.start_scheduler()
    running.start_node()
    running.start_node()
    try:
        running.wait_for(2)
        yield running
    finally:
        running.stop()


def _class(root: Path, students: dict[str, str]) -> Path:
    """Students -> what they hand in: "solution", "stub", or a hostile case replacing dropout.py."""
    klass = root / "class"
    klass.mkdir()
    for name, kind in students.items():
        source = STUBS if kind == "stub" else SOLUTIONS
        dest = klass / name
        skipped = shutil.ignore_patterns("graders", "checks", "__pycache__", "*.md")
        shutil.copytree(source, dest, ignore=skipped)
        if kind not in ("solution", "stub"):
            shutil.copy(HOSTILE / f"{kind}.py.txt", dest / "dropout.py")
    return klass


def _results(out: Path) -> dict[str, dict]:
    found = {}
    for path in sorted(out.glob("*/results.json")):
        data = json.loads(path.read_text())
        data.pop("execution_time")
        found[path.parent.name] = data
    return found


def _ledger(out: Path) -> list[str]:
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        return sorted(student for (student,) in db.execute("SELECT student FROM gradings"))


def _options(kit: Kit) -> GradeOptions:
    return GradeOptions(sandbox=sandbox_works(kit))


def test_the_cluster_gives_the_local_engines_results_and_survives_a_hostile_submission(cluster, kit,
                                                                                         tmp_path):
    students = {"ada": "solution", "bob": "stub", "eve": "kill_parent", "zed": "exit_at_import"}
    klass = _class(tmp_path, students)
    local, remote = tmp_path / "local", tmp_path / "remote"
    grade_batch(kit, klass, local, options=_options(kit), jobs=1)
    before = cluster.pids()
    flags = [] if sandbox_works(kit) else ["--no-sandbox"]
    run = CliRunner().invoke(main, ["grade", str(klass), "--out", str(remote), "--cluster", cluster.address,
                                    "--quiet", "--kit", str(ROOT), *flags])
    assert run.exit_code == 0, run.output
    assert "graded 4 submissions (4 new;" in run.output
    assert _results(remote) == _results(local)  # signatures, provenance and feedback included
    assert _results(remote)["eve"]["score"] < _results(remote)["ada"]["score"]
    assert cluster.pids() == before  # no Dask worker died of it
    assert _ledger(remote) == ["ada", "bob", "eve", "zed"]
    again = grade_batch(kit, klass, remote, options=_options(kit), executor=ClusterExecutor("tcp://127.0.0.1:9"))
    assert (again.graded, again.skipped) == (0, 4)  # nothing due: the cluster is not even asked


def _grade_while(kit: Kit, klass: Path, out: Path, address: str, on_first: object,
                 wait_for_nodes: float = 300.0) -> list[object]:
    """Grade on the cluster in a thread; `on_first()` runs once the first result is recorded."""
    outcome: list[object] = []
    seen: list[str] = []

    def each(result: object) -> None:
        seen.append(result.student)  # type: ignore[attr-defined]
        if len(seen) == 1:
            on_first()  # type: ignore[operator]

    def run() -> None:
        try:
            outcome.append(grade_batch(kit, klass, out, options=_options(kit), on_result=each,
                                       executor=ClusterExecutor(address, wait_for_nodes=wait_for_nodes)))
        except BaseException as exc:  # handed to the test thread
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(600)
    assert not thread.is_alive(), "the batch did not finish"
    return outcome


STUDENTS = {f"s{i}": ("stub" if i % 3 == 0 else "solution") for i in range(6)}


@pytest.fixture(scope="module")
def uninterrupted(kit, tmp_path_factory) -> dict[str, dict]:
    root = tmp_path_factory.mktemp("whole")
    out = root / "out"
    grade_batch(kit, _class(root, STUDENTS), out, options=_options(kit), jobs=1)
    return _results(out)


def test_a_worker_killed_mid_batch_is_replaced_and_everyone_graded_once(cluster, kit, tmp_path,
                                                                        uninterrupted):
    klass = _class(tmp_path, STUDENTS)
    out = tmp_path / "out"
    victims: list[int] = []

    def kill() -> None:
        victims.extend(cluster.busy_pids()[:1])
        assert victims, "no worker was grading when the first result came"
        os.kill(victims[0], signal.SIGKILL)  # a Dask worker process mid-grading; its nanny starts another

    [summary] = _grade_while(kit, klass, out, cluster.address, kill)
    assert not isinstance(summary, BaseException), summary
    assert _ledger(out) == sorted(STUDENTS)  # each exactly once
    assert _results(out) == uninterrupted
    cluster.wait_for(2)
    assert victims[0] not in cluster.pids()  # replaced by its nanny


def test_a_scheduler_restart_mid_batch_ends_with_everyone_graded_once(cluster, kit, tmp_path, uninterrupted):
    klass = _class(tmp_path, STUDENTS)
    out = tmp_path / "out"

    def restart() -> None:
        cluster.kill_scheduler()
        cluster.start_scheduler()  # same port: the client and the nodes come back to it

    [summary] = _grade_while(kit, klass, out, cluster.address, restart)
    assert not isinstance(summary, BaseException), summary
    assert _ledger(out) == sorted(STUDENTS)
    assert _results(out) == uninterrupted
    cluster.wait_for(2)


def test_a_batch_whose_only_node_is_gone_stops_and_says_so(kit, tmp_path):
    lone = Cluster(tmp_path, kit)
    lone.start_scheduler()
    lone.start_node()
    try:
        lone.wait_for(1)
        klass = _class(tmp_path, {f"s{i}": "solution" for i in range(4)})

        def gone() -> None:
            os.killpg(lone.nodes[0].pid, signal.SIGKILL)

        [outcome] = _grade_while(kit, klass, tmp_path / "out", lone.address, gone, wait_for_nodes=5.0)
    finally:
        lone.stop()
    assert isinstance(outcome, ClusterError) and "no autograder node has joined" in str(outcome)
    assert len(_ledger(tmp_path / "out")) == 1  # what was graded is kept; the rest is due next run
    with (tmp_path / "out" / "grades.csv").open(encoding="utf-8") as handle:  # and the class files show it
        assert [r["student"] for r in csv.DictReader(handle)] == _ledger(tmp_path / "out")
    assert (tmp_path / "out" / "report.html").is_file()


def _executed(cluster: Cluster) -> dict[str, int]:
    """Tasks each Dask worker has run, by the kit its node grades with."""
    from distributed import Client

    def count(dask_worker: object) -> tuple[str, int]:
        plugin = dask_worker.plugins["autograder-pool"]  # type: ignore[attr-defined]
        return plugin.kit_root, dask_worker.state.executed_count  # type: ignore[attr-defined]

    with Client(cluster.address, timeout=30, set_as_default=False) as client:
        return dict(client.run(count).values())


def _kit_copy(folder: Path) -> Path:
    shutil.copytree(ROOT / "solutions", folder / "solutions", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "grading.toml", folder / "grading.toml")
    return folder


def _edit_graders(kit_root: Path) -> None:
    params = kit_root / "solutions" / "nn_module" / "graders" / "params.py"
    params.write_text(params.read_text() + "\n# this node's copy of the kit is not the client's\n")


def test_a_node_with_other_graders_is_refused_and_the_batch_goes_on(kit, tmp_path):
    other, changed = _kit_copy(tmp_path / "kit"), _kit_copy(tmp_path / "changed")
    _edit_graders(other)
    mixed = Cluster(tmp_path, kit)
    mixed.start_scheduler()
    mixed.start_node(other)
    try:
        mixed.wait_for(1)
        first, local, second, third = (tmp_path / name for name in ("first", "local", "second", "third"))
        for folder in (first, local, second, third):
            folder.mkdir()
        notes: list[str] = []
        here = grade_batch(load_kit(ROOT), _class(first, {"ada": "solution", "bob": "stub"}), first / "out",
                           options=_options(kit), executor=ClusterExecutor(mixed.address),
                           on_notice=notes.append)
        assert here.graded == 2 and _ledger(first / "out") == ["ada", "bob"]  # none matches: graded here
        assert any("refused: its graders of nn_module differ from this machine's" in n for n in notes), notes
        assert any("grading the 2 left here" in n for n in notes) and here.notices == tuple(notes)
        grade_batch(kit, _class(local, {"ada": "solution", "bob": "stub"}), local / "out",
                    options=_options(kit), jobs=1)
        assert _results(first / "out") == _results(local / "out")

        # Issue #37: a node that registered with the client's graders, whose kit is edited after: it
        # refuses, is dropped and named, and (no node left) its students are graded here, each once.
        mixed.start_node(changed)
        mixed.wait_for(2)
        _edit_graders(changed)
        notes = []
        dropped = grade_batch(load_kit(ROOT), _class(third, {"erin": "solution", "fay": "stub"}),
                              third / "out", options=_options(kit), executor=ClusterExecutor(mixed.address),
                              on_notice=notes.append)
        assert dropped.graded == 2 and _ledger(third / "out") == ["erin", "fay"], notes
        assert any("dropped for this batch" in n and "on the client" in n for n in notes), notes
        assert any("grading the " in n and " left here" in n for n in notes), notes

        mixed.start_node(ROOT)  # a node that matches joins: the batch runs there, never on the other
        mixed.wait_for(3)
        notes = []
        there = grade_batch(load_kit(ROOT), _class(second, {"carol": "solution", "dan": "solution"}),
                            second / "out", options=_options(kit), executor=ClusterExecutor(mixed.address),
                            on_notice=notes.append)
        executed = _executed(mixed)
    finally:
        mixed.stop()
    assert there.graded == 2 and _ledger(second / "out") == ["carol", "dan"]
    assert any("refused" in n for n in notes) and not any("left here" in n for n in notes), notes
    assert any("dropped for this batch" in n for n in notes), notes  # the changed node, dropped again
    assert executed[str(other.resolve())] == 0 and executed[str(ROOT.resolve())] == 2, executed
    assert executed[str(changed.resolve())] >= 1, executed  # refusals only: none of them is a grade


def test_a_submission_too_big_for_a_task_stops_the_batch_first(kit, tmp_path, monkeypatch):
    klass = _class(tmp_path, {"ada": "solution", "bob": "solution"})
    (klass / "bob" / "tinynet.py").write_text("# padding\n" + "x = 1\n" * 150_000)  # under a file's cap
    monkeypatch.setattr(wire, "MAX_REQUEST_BYTES", 500_000)
    with pytest.raises(ClusterError, match=r"class/bob: its files hold .* MB, more than a cluster task"):
        grade_batch(kit, klass, tmp_path / "out", options=_options(kit),
                    executor=ClusterExecutor("tcp://127.0.0.1:9"))
    assert _ledger(tmp_path / "out") == []
