"""Grade one batch on the local pool and on Dask with 1 and 2 nodes, in one run; print the ratios.

    .venv/bin/python benchmarks/cluster_speed.py [--students 80] [--repeat 1]

1. the local engine: `grade_batch` on a warm `GradingPool` with one job;
2. Dask, one `autograder worker --jobs 1` node (a scheduler and the node on 127.0.0.1);
3. Dask, two such nodes (on a scheduler of their own).
Every batch starts from an empty OUT (all students due) and is timed from the call to
`grade_batch` to its return; pools and nodes are warm before (their start is not what is
compared); with --repeat the three alternate and the medians are compared. Goals (issue 15):
2 nodes >= 1.7x the throughput of 1; Dask's overhead over the local pool with as many slots
<= 10%. Here all nodes share this machine's cores, so the 2-vs-1 ratio is bounded by the free
cores; the core count and the load average are printed with it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from grading_speed import make_batch  # noqa: E402

from autograder.batch import grade_batch  # noqa: E402
from autograder.cluster.client import ClusterExecutor  # noqa: E402
from autograder.config import load_kit  # noqa: E402
from autograder.errors import SandboxUnavailable  # noqa: E402
from autograder.grading.options import GradeOptions  # noqa: E402
from autograder.grading.pool import GradingPool  # noqa: E402
from autograder.ledger.signing import KEY_ENV  # noqa: E402
from autograder.sandbox.launch import check_available  # noqa: E402

BIN = Path(sys.executable).parent


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _nodes_ready(address: str, count: int, timeout: float = 600.0) -> None:
    from distributed import Client

    deadline = time.monotonic() + timeout
    with Client(address, timeout=60, set_as_default=False) as client:
        while len(client.scheduler_info(n_workers=-1)["workers"]) < count:
            if time.monotonic() > deadline:
                raise SystemExit(f"{count} nodes did not join {address} in {timeout:.0f} s")
            time.sleep(0.5)


def _timed(kit, batch: Path, out: Path, **kwargs) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    summary = grade_batch(kit, batch, out, **kwargs)
    seconds = time.perf_counter() - started
    assert summary.graded == len(list(batch.iterdir())), summary.describe()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=80)
    parser.add_argument("--repeat", type=int, default=1, help="rounds of the three, interleaved; medians")
    args = parser.parse_args()
    kit = load_kit(ROOT)
    try:
        check_available(kit.sandbox.uid_base)
        sandboxed = True
    except SandboxUnavailable:
        sandboxed = False
    options = GradeOptions(sandbox=sandboxed)
    tmp = Path(tempfile.mkdtemp(prefix="cluster-speed-"))
    os.environ.setdefault(KEY_ENV, str(tmp / "signing.key"))
    batch = tmp / "batch"
    batch.mkdir()
    make_batch(batch, args.students)
    print(f"{args.students} submissions, {'sandboxed' if sandboxed else 'bare'}, "
          f"{len(os.sched_getaffinity(0))} cores on this machine, load average {os.getloadavg()[0]:.1f}")
    logs = tmp / "logs"
    logs.mkdir()
    processes: list[subprocess.Popen[bytes]] = []

    def spawn(command: list[str], log: str) -> None:
        with (logs / log).open("ab") as handle:
            processes.append(subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT,
                                              start_new_session=True))

    def cluster(nodes: int) -> str:
        """A scheduler of its own with `nodes` nodes of one slot, all warm."""
        port = _port()
        address = f"tcp://127.0.0.1:{port}"
        spawn([str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
              f"scheduler{port}.log")
        node = [str(BIN / "autograder"), "worker", "--scheduler", address, "--jobs", "1", "--kit", str(ROOT)]
        for n in range(nodes):
            spawn(node + ([] if sandboxed else ["--no-sandbox"]), f"node{port}-{n}.log")
        _nodes_ready(address, nodes)
        return address

    times: dict[str, list[float]] = {"local": [], "dask1": [], "dask2": []}
    try:
        one, two = cluster(1), cluster(2)
        with GradingPool(kit, options, 1) as pool:
            _timed(kit, batch, tmp / "warm-up", options=options, pool=pool)
            for round_ in range(args.repeat):
                # Interleaved, so that the load of this shared machine falls on all three alike.
                times["local"].append(_timed(kit, batch, tmp / f"local{round_}", options=options, pool=pool))
                times["dask1"].append(_timed(kit, batch, tmp / f"dask1-{round_}", options=options,
                                             executor=ClusterExecutor(one)))
                times["dask2"].append(_timed(kit, batch, tmp / f"dask2-{round_}", options=options,
                                             executor=ClusterExecutor(two)))
                print(f"round {round_ + 1}: " + ", ".join(f"{k} {v[-1]:.1f} s" for k, v in times.items()),
                      flush=True)
    finally:
        for process in processes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    local, dask1, dask2 = (statistics.median(times[k]) for k in ("local", "dask1", "dask2"))
    for label, seconds in (("local pool, 1 job", local), ("Dask, 1 node x 1 slot", dask1),
                           ("Dask, 2 nodes x 1 slot", dask2)):
        print(f"{label + ':':26s}{seconds:7.1f} s  {args.students / seconds:5.2f} submissions/s")
    print(f"throughput, 2 nodes vs 1: {dask1 / dask2:5.2f}x  (goal >= 1.7x)")
    overhead = (dask1 / local - 1) * 100
    print(f"Dask overhead over the local pool (1 slot each): {overhead:+5.1f}%  (goal <= 10%)")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
