"""Nothing accepted is lost: `autograder serve` killed (SIGKILL) right after it accepted an upload,
then started again on the same data folder, grades that upload, once."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from browser import Browser
from conftest import ROOT, sandbox_works
from served import example, upload, wait_graded

from autograder.config import Kit

SERVING = re.compile(rb"serving on (http://127\.0\.0\.1:\d+)")


def start(data: Path, sandbox: bool, log: Path) -> tuple[subprocess.Popen[bytes], int]:
    """The server on a port it binds itself (0: the system's choice, no port to race for), and where
    its log stood when it started (its own "serving on URL" line comes after)."""
    command = str(Path(sys.executable).parent / "autograder")
    argv = [command, "serve", "--demo", "--port", "0", "--data", str(data), "--kit", str(ROOT)]
    argv += [] if sandbox else ["--no-sandbox"]
    offset = log.stat().st_size if log.exists() else 0
    with log.open("ab") as handle:
        return subprocess.Popen(argv, stdout=handle, stderr=handle, start_new_session=True), offset


def served_url(log: Path, offset: int, server: subprocess.Popen[bytes]) -> str:
    """The address this server says it serves on (its line of the log after `offset`)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert server.poll() is None, "the server stopped"
        found = SERVING.search(log.read_bytes()[offset:])
        if found:
            return found.group(1).decode()
        time.sleep(0.2)
    raise AssertionError(f"the server said no address in 120 s: {log.read_text(errors='replace')[-2000:]}")


def wait_up(url: str, server: subprocess.Popen[bytes], browser: Browser) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert server.poll() is None, "the server stopped"
        try:
            browser.get(f"{url}/demo", timeout=2)
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError("the server did not come up in 120 s")


def rows(data: Path) -> list[tuple[int, str]]:
    db = sqlite3.connect(data / "gradebook.sqlite")
    try:
        return [(int(r[0]), str(r[1])) for r in db.execute("SELECT id, status FROM received ORDER BY id")]
    finally:
        db.close()


def gradings(data: Path) -> int:
    db = sqlite3.connect(data / "gradebook.sqlite")
    try:
        return int(db.execute("SELECT COUNT(*) FROM gradings WHERE student = 'demo-student'").fetchone()[0])
    finally:
        db.close()


def stop(server: subprocess.Popen[bytes], sig: int) -> None:
    if server.poll() is None:
        os.killpg(server.pid, sig)  # its own session: the server and every worker it started
        server.wait(timeout=30)


@pytest.mark.slow
def test_an_upload_accepted_before_a_kill_is_graded_after_a_restart(kit: Kit, tmp_path: Path):
    data, log = tmp_path / "data", tmp_path / "serve.log"
    sandbox = sandbox_works(kit)
    browser = Browser()
    server, offset = start(data, sandbox, log)
    try:
        url = served_url(log, offset, server)
        wait_up(url, server, browser)
        page = browser.get(f"{url}/demo/student").text
        accepted = upload(browser, url, [example("maya.zip")], page)
        assert accepted.status_code == 202, accepted.text
        stop(server, signal.SIGKILL)  # at once: the grading had no time to finish
        [(row_id, status)] = rows(data)
        assert status in ("queued", "grading") and gradings(data) == 0
        server, offset = start(data, sandbox, log)
        url = served_url(log, offset, server)  # another port: the same data, the same submission
        wait_up(url, server, browser)
        graded = wait_graded(browser, url, accepted.json()["status_url"], timeout=180)
        assert graded["status"] == "graded" and graded["score"] > 0, graded
        assert rows(data) == [(row_id, "graded")] and gradings(data) == 1
        assert "queued again 1 submissions" in log.read_text() or status == "queued"
    finally:
        stop(server, signal.SIGTERM)
