"""A deadline rush on `autograder serve`: gunicorn workers grading on Dask nodes, beside the single process.

    .venv/bin/python benchmarks/deadline_rush.py [--students 300] [--submissions 600] [--seconds 300]
                                                 [--workers 4] [--nodes 2] [--seed 28] [--only both]

Issue 28's rush: N students send M submissions at times drawn uniformly over T seconds. In one
run, one after the other on the same plan, it puts the rush on
1. `autograder serve --workers 4 --cluster ADDRESS`: gunicorn's gthread workers, the machine's
   grading process sending each submission to a Dask scheduler with `--nodes` local
   `autograder worker --jobs 1` nodes (all on 127.0.0.1, all started and warm before the clock);
2. `autograder serve --jobs NODES`: today's single process (Werkzeug's threaded server, the
   grading queue on its own warm pool with as many grading slots as the nodes have).
Each student launches as a demo student of their own (a session per student) and, per
submission, uploads a zip of the mix benchmarks/grading_speed.py grades, asks for its status as
the student page does (a request that waits until the status changes) and fetches its feedback.
It prints for each: p50/p95/max from the start of the upload to the feedback served, the count of
5xx answers (and of requests that got no answer), whether every submission was graded exactly
once (one ledger row each, none failed), and throughput (graded per second; per node for the
cluster, from the tasks each Dask worker ran). Shrink it for a quick run: --students 30
--submissions 60 --seconds 30.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import random
import re
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from dataclasses import dataclass, field
from http.cookiejar import DefaultCookiePolicy
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from grading_speed import make_batch  # noqa: E402

from autograder.config import load_kit  # noqa: E402
from autograder.errors import SandboxUnavailable  # noqa: E402
from autograder.ledger.signing import KEY_ENV  # noqa: E402
from autograder.sandbox.launch import check_available  # noqa: E402

BIN = Path(sys.executable).parent
SERVING = re.compile(r"serving on (http://127\.0\.0\.1:\d+)")


class Loopback(DefaultCookiePolicy):
    def return_ok_secure(self, cookie: Any, request: Any) -> bool:
        return True  # 127.0.0.1 is a secure origin for browsers: Secure cookies go there over http


class Student(requests.Session):
    def prepare_request(self, request: requests.Request) -> requests.PreparedRequest:
        prepared = super().prepare_request(request)
        prepared.headers.pop("Cookie", None)
        prepared.prepare_cookies(self.cookies)
        return prepared


def zipped(folder: Path, number: int) -> tuple[str, bytes]:
    """The folder as a zip, one file marked with `number`: no two uploads are the same bytes."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for index, path in enumerate(sorted(folder.iterdir())):
            mark = f"\n# upload {number}\n".encode() if index == 0 else b""
            archive.writestr(path.name, path.read_bytes() + mark)
    return f"{folder.name}.zip", buffer.getvalue()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Outcome:
    """What one rush on one server gave."""

    label: str
    latencies: list[float] = field(default_factory=list)
    five_xx: int = 0
    no_answer: int = 0
    problems: list[str] = field(default_factory=list)
    wall: float = 0.0
    once: bool = False
    ledger: str = ""
    per_node: dict[str, int] = field(default_factory=dict)


class Processes:
    """Subprocesses in sessions of their own, each killed as a whole at the end."""

    def __init__(self, logs: Path):
        self.logs = logs
        self.running: list[subprocess.Popen[bytes]] = []

    def spawn(self, command: list[str], log: str) -> subprocess.Popen[bytes]:
        with (self.logs / log).open("ab") as handle:
            process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT,
                                       start_new_session=True)
        self.running.append(process)
        return process

    def stop(self, process: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> None:
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, sig)
            try:
                process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # what it left (its pool's processes)

    def stop_all(self) -> None:
        for process in reversed(self.running):
            self.stop(process, signal.SIGKILL)


def wait_serving(process: subprocess.Popen[bytes], log: Path, timeout: float = 900.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server stopped: {log.read_text(errors='replace')[-2000:]}")
        found = SERVING.search(log.read_text(errors="replace"))
        if found:
            with contextlib.suppress(OSError):
                if requests.get(found[1] + "/health", timeout=5).status_code == 200:
                    return found[1]
        time.sleep(0.3)
    raise SystemExit(f"the server did not come up in {timeout:.0f} s")


def wait_nodes(address: str, count: int, timeout: float = 900.0) -> None:
    from distributed import Client

    deadline = time.monotonic() + timeout
    with Client(address, timeout=60, set_as_default=False) as client:
        while len(client.scheduler_info(n_workers=-1)["workers"]) < count:
            if time.monotonic() > deadline:
                raise SystemExit(f"{count} nodes did not join {address} in {timeout:.0f} s")
            time.sleep(0.5)


def executed(address: str) -> dict[str, int]:
    """Tasks each Dask worker ran so far, by its name."""
    from distributed import Client

    def count(dask_worker: Any) -> tuple[str, int]:
        return str(dask_worker.name), int(dask_worker.state.executed_count)

    with Client(address, timeout=60, set_as_default=False) as client:
        return dict(client.run(count).values())


def warm_up(url: str, archive: tuple[str, bytes]) -> None:
    """One submission before the clock: the pools (and the nodes' graders) warm, as a course's server's."""
    session, token = launch(url, "warm-up")
    rush_one(url, session, token, archive, Outcome("warm-up"), threading.Lock())


def launch(url: str, who: str) -> tuple[Student, str]:
    session = Student()
    session.cookies.set_policy(Loopback())
    page = session.get(f"{url}/demo/student", params={"as": who}).text
    return session, page.split('name="csrf-token" content="', 1)[1].split('"', 1)[0]


def rush_one(url: str, session: Student, token: str, archive: tuple[str, bytes], outcome: Outcome,
             lock: threading.Lock) -> None:
    """Upload, wait for the grade as the page does, fetch the feedback; the seconds it took."""
    begun = time.monotonic()

    def asked(method: str, path: str, **kwargs: Any) -> requests.Response | None:
        try:
            answer = session.request(method, url + path, timeout=300, **kwargs)
        except requests.RequestException as exc:
            with lock:
                outcome.no_answer += 1
                outcome.problems.append(f"{path}: {type(exc).__name__}")
            return None
        if answer.status_code >= 500:
            with lock:
                outcome.five_xx += 1
                outcome.problems.append(f"{path}: {answer.status_code}")
        return answer

    answer = asked("POST", "/student/submissions", files=[("files", archive)], headers={"X-CSRFToken": token})
    if answer is None or answer.status_code != 202:
        if answer is not None:
            with lock:
                outcome.problems.append(f"upload refused {answer.status_code}: {answer.text[:120]}")
        return
    status = answer.json()
    status_url = status["status_url"]
    while status["status"] not in ("graded", "failed"):  # as the page does: wait for news
        again = asked("GET", f"{status_url}?seen={status['status']}")
        if again is None or again.status_code != 200:
            time.sleep(1.0)
            continue
        status = again.json()
    if status["status"] != "graded":
        with lock:
            outcome.problems.append(f"{status_url}: {status['status']} {status.get('message')}")
        return
    feedback = asked("GET", status["feedback_url"])
    if feedback is not None and feedback.status_code == 200:
        with lock:
            outcome.latencies.append(time.monotonic() - begun)


def rush(url: str, label: str, plan: list[tuple[float, int, tuple[str, bytes]]], students: int) -> Outcome:
    outcome = Outcome(label)
    lock = threading.Lock()
    sessions = [launch(url, f"s{i:03d}") for i in range(students)]

    def submit(at: float, index: int, archive: tuple[str, bytes], t0: float) -> None:
        time.sleep(max(0.0, t0 + at - time.monotonic()))
        rush_one(url, *sessions[index], archive, outcome, lock)

    t0 = time.monotonic()
    threads = [threading.Thread(target=submit, args=(at, i, z, t0)) for at, i, z in plan]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    outcome.wall = time.monotonic() - t0
    return outcome


def check_ledger(data: Path, outcome: Outcome, submissions: int) -> None:
    db = sqlite3.connect(data / "gradebook.sqlite")
    try:
        rows = db.execute("SELECT status, attempts FROM received WHERE student LIKE 'demo-s%'").fetchall()
        gradings = db.execute("SELECT COUNT(*) FROM gradings WHERE student LIKE 'demo-s%'").fetchone()[0]
    finally:
        db.close()
    graded = sum(1 for s, _ in rows if s == "graded")
    retried = sum(1 for _, a in rows if a != 1)
    outcome.once = len(rows) == submissions == gradings == graded
    outcome.ledger = (f"{len(rows)} received, {gradings} ledger rows, {graded} graded, {retried} taken again")


def report(outcome: Outcome, submissions: int) -> None:
    print(f"\n== {outcome.label}")
    if outcome.latencies:
        values = outcome.latencies
        print(f"upload -> feedback: p50 {statistics.median(values):.2f} s, p95 {pct(values, 0.95):.2f} s, "
              f"max {max(values):.2f} s  ({len(values)} of {submissions} with feedback)")
    print(f"5xx answers: {outcome.five_xx}, requests with no answer: {outcome.no_answer}  (goal: 0)")
    print(f"graded exactly once: {'yes' if outcome.once else 'NO'} ({outcome.ledger})")
    print(f"throughput: {submissions / outcome.wall:.2f} graded/s over {outcome.wall:.1f} s, first upload "
          "to last feedback")
    for node, tasks in sorted(outcome.per_node.items()):
        print(f"  node {node}: {tasks} submissions, {tasks / outcome.wall:.2f}/s")
    for problem in outcome.problems[:8]:
        print("  problem:", problem)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--submissions", type=int, default=600)
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--only", choices=["both", "cluster", "single"], default="both")
    args = parser.parse_args()
    kit = load_kit(ROOT)
    try:
        check_available(kit.sandbox.uid_base)
        flags: list[str] = []
    except SandboxUnavailable:
        flags = ["--no-sandbox"]
    tmp = Path(tempfile.mkdtemp(prefix="deadline-rush-"))
    os.environ.setdefault(KEY_ENV, str(tmp / "signing.key"))
    logs = tmp / "logs"
    logs.mkdir()
    batch = tmp / "batch"
    batch.mkdir()
    make_batch(batch, 8)
    folders = sorted(batch.iterdir())
    rng = random.Random(args.seed)
    plan = sorted((rng.uniform(0, args.seconds), i % args.students,
                   zipped(folders[rng.randrange(len(folders))], i)) for i in range(args.submissions))
    print(f"{args.submissions} submissions from {args.students} students over {args.seconds:g} s; "
          f"{'bare' if flags else 'sandboxed'}; {len(os.sched_getaffinity(0))} cores, load average "
          f"{os.getloadavg()[0]:.1f}; logs in {logs}")
    serve = [str(BIN / "autograder"), "serve", "--demo", "--port", "0", "--kit", str(ROOT),
             "--uploads-per-minute", str(max(10, args.submissions)), *flags]
    processes = Processes(logs)
    outcomes: list[Outcome] = []
    try:
        if args.only in ("both", "cluster"):
            port = free_port()
            address = f"tcp://127.0.0.1:{port}"
            processes.spawn([str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                             "--no-dashboard"], "scheduler.log")
            for n in range(args.nodes):
                processes.spawn([str(BIN / "autograder"), "worker", "--scheduler", address, "--jobs", "1",
                                 "--kit", str(ROOT), "--name", f"node{n}", *flags], f"node{n}.log")
            wait_nodes(address, args.nodes)
            data = tmp / "cluster-data"
            server = processes.spawn([*serve, "--data", str(data), "--workers", str(args.workers),
                                      "--cluster", address], "serve-workers.log")
            url = wait_serving(server, logs / "serve-workers.log")
            warm_up(url, zipped(folders[0], -1))
            before = executed(address)
            label = f"serve --workers {args.workers} --cluster ({args.nodes} local nodes x 1 slot)"
            outcome = rush(url, label, plan, args.students)
            after = executed(address)
            outcome.per_node = {name: after.get(name, 0) - before.get(name, 0) for name in after}
            processes.stop(server)
            check_ledger(data, outcome, args.submissions)
            outcomes.append(outcome)
        if args.only in ("both", "single"):
            data = tmp / "single-data"
            server = processes.spawn([*serve, "--data", str(data), "--jobs", str(args.nodes)],
                                     "serve-single.log")
            url = wait_serving(server, logs / "serve-single.log")
            warm_up(url, zipped(folders[0], -1))
            outcome = rush(url, f"serve (one process, a pool of {args.nodes})", plan, args.students)
            processes.stop(server)
            check_ledger(data, outcome, args.submissions)
            outcomes.append(outcome)
    finally:
        processes.stop_all()
    for outcome in outcomes:
        report(outcome, args.submissions)
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")
    sys.exit(0 if all(o.once and not o.five_xx for o in outcomes) else 1)


if __name__ == "__main__":
    main()
