"""The service's capacity (issue 45): the highest upload rate the production server grades at with p95
<= 2 s from upload to feedback, beside the pool's own batch rate, measured in the same run.

    .venv/bin/python benchmarks/service_capacity.py [--nodes 2] [--workers 4] [--start 0.5] [--step 1.25]
                                                    [--step-seconds 20] [--max-steps 10]
                                                    [--max-submissions 500] [--max-minutes 15]

The server runs as in production: `autograder serve --workers W --cluster ADDRESS` (gunicorn's
gthread workers beside the grading process) sending each submission to a Dask scheduler with
`--nodes` local `autograder worker --jobs 1` nodes, all on 127.0.0.1, all warm before the clock.
Students are demo students (a session each); each submission is a zip of the mix
benchmarks/grading_speed.py grades, uploaded, followed as the student page follows it (a status
request that waits for news) and its feedback page fetched (benchmarks/deadline_rush.py's client).

The ramp: step after step, submissions arrive evenly spaced at a rate that grows by `--step`
from `--start` per second, for `--step-seconds` each, until the step's p95 from upload to feedback
passes `--p95` seconds or any request fails (5xx, no answer, a submission not graded), or the
bounds on steps, submissions and minutes are reached. The capacity is the last step that passed:
its rate and the graded/s it achieved (submissions over first upload to last feedback).
The batch rate: `grade_batch` of the same mix on a warm `GradingPool` with as many grading processes
as the nodes have slots (graded/s; import torch paid before the clock), measured before the server
starts and again after it stops (the spread is shown). For the step at capacity (and the first
that failed) it says where the time went, from the client's clocks and the ledger's: the upload
request, the wait in the queue and on the way to a node, the grading itself (the node's own
time), the news reaching the student's page (long poll) and the feedback page. Goal: capacity >=
90% of the batch rate.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from deadline_rush import (  # noqa: E402
    BIN,
    Processes,
    executed,
    free_port,
    launch,
    pct,
    wait_nodes,
    wait_serving,
    zipped,
)
from grading_speed import make_batch  # noqa: E402

from autograder.config import SandboxConfig, load_kit  # noqa: E402
from autograder.errors import SandboxUnavailable  # noqa: E402
from autograder.ledger.signing import KEY_ENV  # noqa: E402
from autograder.sandbox.launch import check_available  # noqa: E402

MIX = 8  # folders of the mix (grading_speed.make_batch): reference copies, catalogued mistakes, stubs


@dataclass
class Trace:
    """One submission's times, from the client's clock (time.time(), so the ledger's can be compared)."""

    row: int | None = None
    begun: float = 0.0
    uploaded: float = 0.0  # the upload's answer came
    seen: float = 0.0  # the status said graded
    done: float = 0.0  # the feedback page came
    problem: str = ""


@dataclass
class Step:
    rate: float
    traces: list[Trace] = field(default_factory=list)
    wall: float = 0.0
    cpu: dict[str, float] = field(default_factory=dict)  # CPU seconds of each part over the step

    @property
    def latencies(self) -> list[float]:
        return [t.done - t.begun for t in self.traces if not t.problem and t.done]

    @property
    def problems(self) -> list[str]:
        return [t.problem for t in self.traces if t.problem]

    @property
    def graded_per_second(self) -> float:
        ok = [t for t in self.traces if not t.problem and t.done]
        if not ok:
            return 0.0
        return len(ok) / max(max(t.done for t in ok) - min(t.begun for t in ok), 1e-9)

    def passed(self, limit: float) -> bool:
        return not self.problems and bool(self.latencies) and pct(self.latencies, 0.95) <= limit


def follow(url: str, session: Any, token: str, archive: tuple[str, bytes], trace: Trace) -> None:
    """Upload, wait for the grade as the page does, fetch the feedback (every time on the trace)."""
    trace.begun = time.time()
    try:
        answer = session.post(f"{url}/student/submissions", files=[("files", archive)],
                              headers={"X-CSRFToken": token}, timeout=120)
        trace.uploaded = time.time()
        if answer.status_code != 202:
            trace.problem = f"upload answered {answer.status_code}"
            return
        status = answer.json()
        trace.row = int(status["id"])
        while status["status"] not in ("graded", "failed"):
            again = session.get(f"{url}{status['status_url']}?seen={status['status']}", timeout=120)
            if again.status_code != 200:
                trace.problem = f"status answered {again.status_code}"
                return
            status = again.json()
        trace.seen = time.time()
        if status["status"] != "graded" or not status.get("feedback_url"):
            trace.problem = f"submission {status['status']}: {status.get('message', '')}"
            return
        feedback = session.get(url + status["feedback_url"], timeout=120)
        if feedback.status_code != 200:
            trace.problem = f"feedback answered {feedback.status_code}"
            return
        trace.done = time.time()
    except Exception as exc:  # noqa: BLE001  no answer at all: an error of the step
        trace.problem = f"no answer ({type(exc).__name__})"


def run_step(url: str, sessions: list[tuple[Any, str]], folders: list[Path], rate: float,
             seconds: float, first: int) -> Step:
    count = max(4, round(rate * seconds))
    step = Step(rate, [Trace() for _ in range(count)])
    start = time.monotonic() + 0.2

    def one(index: int) -> None:
        time.sleep(max(0.0, start + index / rate - time.monotonic()))
        number = first + index
        session, token = sessions[number % len(sessions)]
        # Marked with its number: never the same files twice (a resubmission of the same files would
        # get the grade it has at once, without grading).
        archive = zipped(folders[number % len(folders)], number)
        follow(url, session, token, archive, step.traces[index])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    step.wall = time.monotonic() - start
    return step


def batch_rate(kit: Any, folder: Path, out: Path, jobs: int, sandboxed: bool) -> float:
    """Graded/s of `grade_batch` over `folder` on a warm pool of `jobs` (the first batch warms it)."""
    from autograder.batch import grade_batch
    from autograder.grading.options import GradeOptions
    from autograder.grading.pool import GradingPool

    with GradingPool(kit, GradeOptions(sandbox=sandboxed), jobs) as pool:
        grade_batch(kit, folder, out / "warm", pool=pool, regrade=True)
        begun = time.perf_counter()
        summary = grade_batch(kit, folder, out / "timed", pool=pool, regrade=True)
        return summary.graded / (time.perf_counter() - begun)


def ledger_times(data: Path, rows: list[int]) -> dict[int, tuple[float, float, float]]:
    """Per row: (received, graded) as epoch seconds and the grading's own seconds (the node's)."""
    db = sqlite3.connect(data / "gradebook.sqlite")
    try:
        found = {}
        for row in rows:
            query = "SELECT received_at, graded_at, result FROM received WHERE id = ?"
            got = db.execute(query, (row,)).fetchone()
            if got is None:
                continue
            received, graded, result = got
            if graded and result:
                seconds = float(json.loads(result).get("execution_time", 0.0))
                found[row] = (datetime.fromisoformat(received).timestamp(),
                                   datetime.fromisoformat(graded).timestamp(), seconds)
        return found
    finally:
        db.close()


def where_time_goes(step: Step, data: Path) -> str:
    traces = [t for t in step.traces if t.row is not None and t.done]
    times = ledger_times(data, [t.row for t in traces if t.row is not None]) if traces else {}
    parts: dict[str, list[float]] = {"upload request": [], "queue and dispatch to a node": [],
                                     "grading (the node's own time)": [], "news to the page (long poll)": [],
                                     "feedback page": []}
    for t in traces:
        if t.row not in times:
            continue
        received, graded, seconds = times[t.row]
        parts["upload request"].append(t.uploaded - t.begun)
        parts["queue and dispatch to a node"].append(max(graded - received - seconds, 0.0))
        parts["grading (the node's own time)"].append(seconds)
        parts["news to the page (long poll)"].append(max(t.seen - graded, 0.0))
        parts["feedback page"].append(t.done - t.seen)
    if not any(parts.values()):
        return "  (no graded submission to look at)"
    if step.cpu:
        graded = max(1, len(step.latencies))
        total_cpu = sum(step.cpu.values())
        cpu = "\n".join(f"  {name:42} {seconds / graded * 1000:7.1f} ms CPU a submission"
                         f" ({seconds / max(total_cpu, 1e-9) * 100:4.1f}%)" for name, seconds in
                         sorted(step.cpu.items(), key=lambda kv: -kv[1]))
        cores = len(os.sched_getaffinity(0))
        cpu = (f"  CPU over the step: {total_cpu:.1f} s in {step.wall:.1f} s of wall time "
               f"({total_cpu / max(step.wall, 1e-9):.2f} of the machine's {cores} cores)\n" + cpu)
    else:
        cpu = ""
    total = sum(statistics.mean(v) for v in parts.values() if v)
    return "\n".join(f"  {name:32} mean {statistics.mean(v):6.3f} s, p95 {pct(v, 0.95):6.3f} s"
                     f"  ({statistics.mean(v) / total * 100:4.1f}% of the mean)"
                     for name, v in parts.items() if v) + ("\n" + cpu if cpu else "")


TICK = os.sysconf("SC_CLK_TCK")


def _processes() -> dict[int, tuple[int, float, str]]:
    """pid -> (parent, CPU seconds of it and of its reaped children, command line) of every process."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            command = Path(f"/proc/{entry}/cmdline").read_bytes().decode("utf-8", "replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after the command, which may hold spaces
        seconds = sum(int(x) for x in fields[11:15]) / TICK  # utime, stime, cutime, cstime
        found[int(entry)] = (int(fields[1]), seconds, command.replace("\0", " "))
    return found


def cpu_by_role(roots: dict[str, int]) -> dict[str, float]:
    """CPU seconds so far of each spawned process's tree, split where it tells most: the service's web
    server and its grading process, each node's own process and the grading below it (its pool and
    sandboxes), the scheduler."""
    table = _processes()
    children: dict[int, list[int]] = {}
    for pid, (parent, _, _) in table.items():
        children.setdefault(parent, []).append(pid)

    def tree(pid: int) -> float:
        return table.get(pid, (0, 0.0, ""))[1] + sum(tree(c) for c in children.get(pid, []))

    roles: dict[str, float] = {}
    for name, root in roots.items():
        if root not in table:
            continue
        if name == "serve":
            for child in children.get(root, []):
                role = "serve: web (gunicorn)" if children.get(child) else "serve: grading process (queue)"
                roles[role] = roles.get(role, 0.0) + tree(child)
            roles["serve: web (gunicorn)"] = roles.get("serve: web (gunicorn)", 0.0) + table[root][1]
        elif name.startswith("node"):
            stack = [root]
            while stack:
                pid = stack.pop()
                if "bwrap" in table[pid][2] or "sandbox.inside.server" in table[pid][2]:
                    role = "nodes: sandboxed workers (student code)"
                    roles[role] = roles.get(role, 0.0) + tree(pid)
                    continue
                role = "nodes: Dask nanny, worker, pool server (judging)"
                roles[role] = roles.get(role, 0.0) + table[pid][1]
                stack += [c for c in children.get(pid, []) if c in table]
        else:
            roles[name] = roles.get(name, 0.0) + tree(root)
    return roles


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--workers", type=int, default=4, help="gunicorn web workers")
    parser.add_argument("--start", type=float, default=1.0, help="the first step's uploads per second")
    parser.add_argument("--step", type=float, default=1.25, help="each rate: the last one's times this")
    parser.add_argument("--step-seconds", type=float, default=20.0)
    parser.add_argument("--p95", type=float, default=2.0, help="seconds from upload to feedback")
    parser.add_argument("--refine", type=int, default=2,
                        help="steps between the last rate that passed and the first that failed")
    parser.add_argument("--max-steps", type=int, default=12)
    parser.add_argument("--max-submissions", type=int, default=500)
    parser.add_argument("--max-minutes", type=float, default=15.0)
    parser.add_argument("--students", type=int, default=60)
    args = parser.parse_args()
    from grading_floor import free_uid_base

    kit = load_kit(ROOT)
    kit = dataclasses.replace(kit, sandbox=SandboxConfig(free_uid_base(63000)))
    try:
        check_available(kit.sandbox.uid_base)
        flags: list[str] = []
        sandboxed = True
    except SandboxUnavailable:
        flags, sandboxed = ["--no-sandbox"], False
    tmp = Path(tempfile.mkdtemp(prefix="service-capacity-"))
    os.environ.setdefault(KEY_ENV, str(tmp / "signing.key"))
    logs = tmp / "logs"
    logs.mkdir()
    batch = tmp / "batch"
    batch.mkdir()
    make_batch(batch, MIX)
    folders = sorted(batch.iterdir())
    timed = tmp / "batch-x3"  # the batch rate over three of each, for a longer, steadier figure
    timed.mkdir()
    for n in range(3):
        for folder in folders:
            shutil.copytree(folder, timed / f"{folder.name}-{n}")
    print(f"mix of {MIX} submissions; {args.nodes} nodes x 1 slot; {args.workers} web workers; "
          f"{'sandboxed' if sandboxed else 'bare'}; {len(os.sched_getaffinity(0))} cores; "
          f"load average {load()}; logs in {logs}", flush=True)
    loads = [load()]
    rates = [batch_rate(kit, timed, tmp / "batch-before", args.nodes, sandboxed)]
    print(f"batch rate before the server: {rates[0]:.2f} graded/s ({args.nodes} grading processes)",
          flush=True)

    kit_flag = ["--kit", str(ROOT)]
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    processes = Processes(logs)
    steps: list[Step] = []
    data = tmp / "data"
    began = time.monotonic()
    try:
        scheduler = [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                     "--no-dashboard"]
        roots = {"scheduler": processes.spawn(scheduler, "scheduler.log").pid}
        for n in range(args.nodes):
            node = [str(BIN / "autograder"), "worker", "--scheduler", address, "--jobs", "1", *kit_flag,
                    "--name", f"node{n}", *flags]
            roots[f"node{n}"] = processes.spawn(node, f"node{n}.log").pid
        wait_nodes(address, args.nodes)
        server = processes.spawn([str(BIN / "autograder"), "serve", "--demo", "--port", "0", *kit_flag,
                                  "--uploads-per-minute", "10000", "--data", str(data), "--workers",
                                  str(args.workers), "--cluster", address, *flags], "serve.log")
        url = wait_serving(server, logs / "serve.log")
        roots["serve"] = server.pid
        sessions = [launch(url, f"c{i:03d}") for i in range(args.students)]
        for i in range(2 * args.nodes):  # every node warm (its graders loaded) before the clock
            warm = Trace()
            follow(url, *sessions[i % len(sessions)], zipped(folders[i % len(folders)], -1 - i), warm)
            if warm.problem:
                raise SystemExit(f"the warm-up failed: {warm.problem} (logs in {logs})")
        before = executed(address)
        rate, sent = args.start, 0
        low: float | None = None  # the highest rate that passed, and the lowest that did not
        high: float | None = None
        refine = args.refine
        while len(steps) < args.max_steps:
            if high is not None:  # between the two: the geometric middle, `--refine` times
                if low is None or refine <= 0:
                    break
                rate, refine = (low * high) ** 0.5, refine - 1
            count = max(4, round(rate * args.step_seconds))
            if sent + count > args.max_submissions or time.monotonic() - began > args.max_minutes * 60:
                print("(stopped at the bounds on submissions or time)")
                break
            cpu_before = cpu_by_role(roots)
            step = run_step(url, sessions, folders, rate, args.step_seconds, sent)
            cpu_after = cpu_by_role(roots)
            step.cpu = {k: cpu_after.get(k, 0.0) - cpu_before.get(k, 0.0) for k in cpu_after}
            sent += len(step.traces)
            steps.append(step)
            lat = step.latencies
            shown = f"p50 {statistics.median(lat):.2f} s, p95 {pct(lat, 0.95):.2f} s, max {max(lat):.2f} s" \
                if lat else "no feedback"
            print(f"step {len(steps)}: {rate:5.2f} uploads/s x {len(step.traces)}: {shown}; "
                  f"{step.graded_per_second:.2f} graded/s; problems {len(step.problems)}; load {load()}",
                  flush=True)
            loads.append(load())
            if step.passed(args.p95):
                low = rate
                if high is None:
                    rate *= args.step
            else:
                high = rate
        after = executed(address)
        per_node = {name: after.get(name, 0) - before.get(name, 0) for name in after}
    finally:
        processes.stop_all()
    rates.append(batch_rate(kit, timed, tmp / "batch-after", args.nodes, sandboxed))
    print(f"batch rate after the server: {rates[1]:.2f} graded/s")
    passed = sorted((s for s in steps if s.passed(args.p95)), key=lambda s: s.rate)
    failed = sorted((s for s in steps if not s.passed(args.p95)), key=lambda s: s.rate)
    print()
    for problem in sorted({p for s in steps for p in s.problems})[:8]:
        print("problem:", problem)
    print(f"submissions per node over the ramp: {per_node}")
    reference = statistics.mean(rates)
    if passed:
        top = passed[-1]
        print(f"\nwhere the time went at capacity ({top.rate:.2f} uploads/s):")
        print(where_time_goes(top, data))
    if failed:
        print(f"\nwhere the time went in the first step past it ({failed[0].rate:.2f} uploads/s):")
        print(where_time_goes(failed[0], data))
    print()
    print(f"batch rate of the pool ({args.nodes} grading processes): mean {reference:.2f} graded/s "
          f"[{min(rates):.2f}, {max(rates):.2f}: before and after the ramp]")
    if passed:
        top = passed[-1]
        got = top.graded_per_second
        print(f"capacity: {top.rate:.2f} uploads/s offered, {got:.2f} graded/s achieved with "
              f"p95 {pct(top.latencies, 0.95):.2f} s <= {args.p95:g} s")
        print(f"capacity / batch rate: {got / reference:.2f} [{got / max(rates):.2f}, {got / min(rates):.2f}]"
              " (goal >= 0.90)")
    else:
        print(f"capacity: below {args.start:.2f} uploads/s (the first step failed)")
    print(f"load average (1, 5, 15 min) at the start and after each step: {'; '.join(loads)}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
