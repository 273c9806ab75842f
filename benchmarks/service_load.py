"""Load on `autograder serve` over loopback: many students submitting within a minute (issue 16's goal).

    .venv/bin/python benchmarks/service_load.py [--students 30] [--submissions 120] [--seconds 60]
                                                [--jobs 2] [--seed 16]

The server runs in this process (the app, the inbox in a fresh gradebook, one warm pool started
before the clock) and answers on 127.0.0.1 through real HTTP. Each student has a session of their
own (minted with the server's session key, as a launch would set it) and submits at times drawn
uniformly over the window: zips of the mix benchmarks/grading_speed.py grades (reference copies,
some with one catalogued mistake, some with a stub left), so the time measured is the service's and
the grading's, not a hung submission's time limit. For each submission it prints the latency from
the start of its upload to the moment its feedback was served (asking for the status as the student
page does: a request that waits until the status changes), p50/p95/max, the server's own
received -> graded times, and checks that every submission was graded exactly once (one ledger
row each, one attempt, none failed). Goal on a 2-core machine: p95 <= 2 s.
"""

from __future__ import annotations

import argparse
import io
import random
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
import zipfile
from datetime import datetime
from http.cookiejar import DefaultCookiePolicy
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from grading_speed import make_batch  # noqa: E402
from werkzeug.serving import make_server  # noqa: E402

from autograder.config import load_kit  # noqa: E402
from autograder.errors import SandboxUnavailable  # noqa: E402
from autograder.sandbox.launch import check_available  # noqa: E402
from autograder.service.app import build_state, create_app  # noqa: E402
from autograder.service.lti_launch import Launch  # noqa: E402
from autograder.service.server import PathOnlyHandler  # noqa: E402
from autograder.service.settings import Limits, ServiceSettings  # noqa: E402


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--submissions", type=int, default=120)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=16)
    args = parser.parse_args()
    kit = load_kit(ROOT)
    try:
        check_available(kit.sandbox.uid_base)
        sandbox = True
    except SandboxUnavailable:
        sandbox = False
    data = Path(tempfile.mkdtemp(prefix="service-load-"))
    per_minute = max(10, args.submissions)  # the rate limit is not what is measured here
    settings = ServiceSettings(kit, data, demo=True, jobs=args.jobs, sandbox=sandbox,
                               limits=Limits(uploads_per_minute=per_minute))
    started = time.monotonic()
    state = build_state(settings)
    app = create_app(state)
    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=PathOnlyHandler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}"
    up = time.monotonic() - started
    print(f"server up in {up:.1f} s (pool of {args.jobs}, sandbox {sandbox}) at {url}")

    serializer = app.session_interface.get_signing_serializer(app)  # type: ignore[attr-defined]
    assert serializer is not None
    batch = Path(tempfile.mkdtemp(prefix="service-load-batch-"))
    make_batch(batch, 8)
    folders = sorted(batch.iterdir())
    rng = random.Random(args.seed)
    def session_of(who: str) -> tuple[Student, str]:
        launch = Launch(who, f"uid-{who}", who, kit.default_assignment, "en", False)
        session = Student()
        session.cookies.set_policy(Loopback())
        session.cookies.set("autograder_session", serializer.dumps({"launch": launch.as_session()}),
                            domain="127.0.0.1", path="/", secure=True)
        page = session.get(f"{url}/student").text
        return session, page.split('name="csrf-token" content="', 1)[1].split('"', 1)[0]

    students = [session_of(f"student{i:02d}") for i in range(args.students)]
    plan = sorted((rng.uniform(0, args.seconds), i % args.students,
                   zipped(folders[rng.randrange(len(folders))], i)) for i in range(args.submissions))
    latencies: list[float] = []
    problems: list[str] = []
    lock = threading.Lock()

    def one(session: Student, token: str, archive: tuple[str, bytes]) -> float | None:
        """Upload, wait for the grade as the page does, fetch the feedback: the seconds it took."""
        begun = time.monotonic()
        answer = session.post(f"{url}/student/submissions", files=[("files", archive)],
                              headers={"X-CSRFToken": token})
        if answer.status_code != 202:
            with lock:
                problems.append(f"upload refused {answer.status_code}: {answer.text[:120]}")
            return None
        status = answer.json()
        status_url = status["status_url"]
        while status["status"] not in ("graded", "failed"):  # as the page does: wait for news
            status = session.get(f"{url}{status_url}?seen={status['status']}").json()
        if status["status"] != "graded":
            with lock:
                problems.append(f"{status_url}: {status['status']} {status.get('message')}")
            return None
        feedback = session.get(url + status["feedback_url"])
        if feedback.status_code != 200:
            with lock:
                problems.append(f"{status_url}: feedback {feedback.status_code}")
        return time.monotonic() - begun

    # Side by side: first one submission at a time (what this machine gives right now), then the load.
    alone_session = session_of("alone")
    alone_zips = [zipped(folder, -1 - n) for n, folder in enumerate(folders)]
    alone = [t for t in (one(*alone_session, z) for z in alone_zips) if t is not None]

    def submit(at: float, index: int, archive: tuple[str, bytes], t0: float) -> None:
        time.sleep(max(0.0, t0 + at - time.monotonic()))
        took = one(*students[index], archive)
        if took is not None:
            with lock:
                latencies.append(took)

    t0 = time.monotonic()
    threads = [threading.Thread(target=submit, args=(at, i, z, t0)) for at, i, z in plan]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.monotonic() - t0
    server.shutdown()
    state.close()

    db = sqlite3.connect(data / "gradebook.sqlite")
    rows = db.execute("SELECT status, attempts, received_at, graded_at FROM received"
                      " WHERE student LIKE 'student%'").fetchall()
    gradings = db.execute("SELECT COUNT(*) FROM gradings WHERE student LIKE 'student%'").fetchone()[0]
    db.close()
    server_side = [(datetime.fromisoformat(g) - datetime.fromisoformat(r)).total_seconds()
                   for s, _, r, g in rows if s == "graded" and g]
    once = (len(rows) == args.submissions and gradings == args.submissions
            and all(s == "graded" and a == 1 for s, a, _, _ in rows))
    if alone:
        mean = statistics.mean(alone)
        print(f"one at a time ({len(alone)} submissions): p50 {statistics.median(alone):.2f} s, "
              f"mean {mean:.2f} s -> the pool grades about {args.jobs / mean:.1f} a second; the load brings "
              f"{args.submissions / args.seconds:.1f} a second")
    print(f"{args.submissions} submissions from {args.students} students over {args.seconds:g} s "
          f"(all done after {wall:.1f} s)")
    if latencies:
        print(f"upload -> feedback served: p50 {statistics.median(latencies):.2f} s, "
              f"p95 {pct(latencies, 0.95):.2f} s, max {max(latencies):.2f} s  (goal: p95 <= 2 s)")
    if server_side:
        print(f"server received -> graded: p50 {statistics.median(server_side):.2f} s, "
              f"p95 {pct(server_side, 0.95):.2f} s")
    graded = sum(1 for s, *_ in rows if s == "graded")
    retried = sum(1 for _, a, *_ in rows if a != 1)
    print(f"graded exactly once: {'yes' if once else 'NO'} ({len(rows)} received, {gradings} ledger rows, "
          f"{graded} graded, {retried} retried)")
    for problem in problems[:10]:
        print("problem:", problem)
    sys.exit(0 if once and not problems else 1)


if __name__ == "__main__":
    main()
