"""`autograder serve --workers 2` from a real LTI 1.3 platform: gunicorn started and stopped by the test.

login -> launch -> upload -> feedback -> the AGS score, through two gthread workers; the grade is
recorded by the machine's grading process (its claim names it), a process beside gunicorn's
master, never by a web worker; a page's long poll answered by a worker sees the grade the grading
process recorded; SIGTERM stops them all, with exit code 0. A grading process killed under `serve`
is replaced, and what was uploaded meanwhile is graded once, by the new one.
"""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from browser import Browser
from conftest import ROOT, sandbox_works
from lms import Lms, Person, launched, wait_for_score, write_platform_toml
from lti_platform import LocalPlatform
from served import example, upload

from autograder.config import Kit

SERVING = re.compile(r"serving on (http://127\.0\.0\.1:\d+)")
GRADING = re.compile(r"grading process (\d+) grades the inbox")


def children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        found.update(int(c) for c in (task / "children").read_text().split())
    return found


class Gunicorn:
    """`autograder serve --workers N` as a subprocess in its own session; its URL read from its log."""

    def __init__(self, argv: list[str], log: Path):
        self.log = log
        with log.open("ab") as handle:
            self.process = subprocess.Popen(argv, stdout=handle, stderr=subprocess.STDOUT,
                                            start_new_session=True)
        self.url = ""

    def wait_up(self, timeout: float = 300.0) -> str:
        """The URL once /health answers (port 0: gunicorn binds a free one and the log names it)."""
        browser = Browser()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.log.read_text(errors="replace")[-3000:]
            found = SERVING.search(self.log.read_text(errors="replace"))
            if found:
                try:
                    if browser.get(found[1] + "/health", timeout=5).status_code == 200:
                        self.url = found[1]
                        return self.url
                except OSError:
                    pass
            time.sleep(0.2)
        raise AssertionError(f"serve did not come up in {timeout} s: {self.log.read_text()[-3000:]}")

    def stop(self) -> int:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                return self.process.wait(timeout=180)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
        return self.process.wait()


def serve_argv(data: Path, kit: Kit, *extra: str) -> list[str]:
    command = str(Path(sys.executable).parent / "autograder")
    argv = [command, "serve", "--port", "0", "--data", str(data), "--kit", str(ROOT), *extra]
    return argv + ([] if sandbox_works(kit) else ["--no-sandbox"])


def status_until_graded(browser: Browser, url: str, status_url: str,
                        timeout: float = 600.0) -> dict[str, Any]:
    """Ask as the page's script does: each request waits (long poll) until the status moves on."""
    deadline = time.monotonic() + timeout
    seen = ""
    while time.monotonic() < deadline:
        data: dict[str, Any] = browser.get(f"{url}{status_url}?seen={seen}", timeout=60).json()
        if data["status"] in ("graded", "failed"):
            return data
        seen = data["status"]
    raise AssertionError(f"{status_url} not graded in {timeout} s")


def test_launch_upload_feedback_and_score_through_two_workers_graded_by_the_grading_process(
        kit: Kit, platform: LocalPlatform, tool_key: tuple[Path, dict[str, Any]], tmp_path: Path):
    toml = write_platform_toml(tmp_path, platform, tool_key[0])
    server = Gunicorn(serve_argv(tmp_path / "data", kit, "--workers", "2", "--threads", "4",
                                 "--platform", str(toml)), tmp_path / "serve.log")
    try:
        url = server.wait_up()
        lms = Lms(platform, url, platform.add_lineitem("nn.Module", 100.0))
        browser, page = launched(lms, Person("uid-ayesha-9", "ayesha"))
        assert "Submit your work" in page and "ayesha" in page
        answer = upload(browser, url, [example("ayesha.zip")], page)
        assert answer.status_code == 202, answer.text
        body = answer.json()
        graded = status_until_graded(browser, url, body["status_url"])
        assert graded["status"] == "graded" and graded["score"] is not None
        feedback = browser.get(url + graded["feedback_url"])
        assert feedback.status_code == 200 and "ayesha" in feedback.text
        listed = browser.get(f"{url}/student/submissions.json").json()
        assert [s["status"] for s in listed["submissions"]] == ["graded"]
        score = wait_for_score(platform, lms.lineitem, "uid-ayesha-9", graded["score"])
        assert score["gradingProgress"] == "FullyGraded"

        web = {browser.get(f"{url}/health").json()["pid"] for _ in range(20)}
        db = sqlite3.connect(tmp_path / "data" / "gradebook.sqlite")
        try:
            [(pid,)] = db.execute("SELECT pid FROM grading_claims WHERE row_id = ?", (body["id"],)).fetchall()
            [(ledger_rows,)] = db.execute("SELECT COUNT(*) FROM gradings WHERE student = 'ayesha'").fetchall()
        finally:
            db.close()
        beside = children(server.process.pid)  # gunicorn's master and the grading process, side by side
        [master] = [c for c in beside if web <= children(c)]
        assert ledger_rows == 1 and len(children(master)) == 2  # its two workers answered every request
        assert pid in beside and pid != master and pid not in children(master)  # grading: no web worker
    finally:
        code = server.stop()
    log = server.log.read_text(errors="replace")
    assert code == 0, log[-3000:]
    assert "POST /student/submissions 202" in log and "id_token" not in log  # paths only, never a query


def grading_pids(log: Path) -> list[int]:
    """The grading processes `serve` started so far, as each names itself in the log."""
    return [int(pid) for pid in GRADING.findall(log.read_text(errors="replace"))]


def test_a_grading_process_killed_under_serve_is_replaced_and_the_upload_graded_once(kit: Kit,
                                                                                     tmp_path: Path):
    data = tmp_path / "data"
    server = Gunicorn(serve_argv(data, kit, "--workers", "1", "--demo"), tmp_path / "serve.log")
    try:
        url = server.wait_up()
        deadline = time.monotonic() + 300
        while not grading_pids(server.log) and time.monotonic() < deadline:
            time.sleep(0.2)
        [killed] = grading_pids(server.log)
        assert killed in children(server.process.pid)  # beside gunicorn's master
        os.kill(killed, signal.SIGKILL)
        browser = Browser()
        page = browser.get(f"{url}/demo/student").text
        answer = upload(browser, url, [example("maya.zip")], page)  # kept while no grading process runs
        assert answer.status_code == 202, answer.text
        graded = status_until_graded(browser, url, answer.json()["status_url"])
        assert graded["status"] == "graded" and graded["score"] > 0, graded
        db = sqlite3.connect(data / "gradebook.sqlite")
        try:
            [(pid,)] = db.execute("SELECT pid FROM grading_claims").fetchall()
            [(rows,)] = db.execute("SELECT COUNT(*) FROM gradings").fetchall()
        finally:
            db.close()
        assert grading_pids(server.log) == [killed, pid] and pid in children(server.process.pid)
        assert rows == 1 and "stopped (exit -9): starting another" in server.log.read_text()
    finally:
        assert server.stop() == 0, server.log.read_text(errors="replace")[-3000:]
