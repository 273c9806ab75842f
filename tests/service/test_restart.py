"""Nothing accepted is lost: `autograder serve` killed (SIGKILL) right after it accepted an upload,
then started again on the same data folder, grades that upload, once."""

from __future__ import annotations

import os
import signal
import socket
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


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(data: Path, port: int, sandbox: bool, log: Path) -> subprocess.Popen[bytes]:
    command = str(Path(sys.executable).parent / "autograder")
    argv = [command, "serve", "--demo", "--port", str(port), "--data", str(data), "--kit", str(ROOT)]
    argv += [] if sandbox else ["--no-sandbox"]
    with log.open("ab") as handle:
        return subprocess.Popen(argv, stdout=handle, stderr=handle, start_new_session=True)


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
    data, log, port = tmp_path / "data", tmp_path / "serve.log", free_port()
    url = f"http://127.0.0.1:{port}"
    sandbox = sandbox_works(kit)
    browser = Browser()
    server = start(data, port, sandbox, log)
    try:
        wait_up(url, server, browser)
        page = browser.get(f"{url}/demo/student").text
        accepted = upload(browser, url, [example("maya.zip")], page)
        assert accepted.status_code == 202, accepted.text
        stop(server, signal.SIGKILL)  # at once: the grading had no time to finish
        [(row_id, status)] = rows(data)
        assert status in ("queued", "grading") and gradings(data) == 0
        server = start(data, port, sandbox, log)
        wait_up(url, server, browser)
        graded = wait_graded(browser, url, accepted.json()["status_url"], timeout=180)
        assert graded["status"] == "graded" and graded["score"] > 0, graded
        assert rows(data) == [(row_id, "graded")] and gradings(data) == 1
        assert "queued again 1 submissions" in log.read_text() or status == "queued"
    finally:
        stop(server, signal.SIGTERM)
