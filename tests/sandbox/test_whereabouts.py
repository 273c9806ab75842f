"""Where a stopped task's code was: the innermost frame in the student's file, asked or told at SIGXCPU."""

from __future__ import annotations

import importlib.util
import os
import resource
import signal
import socket
import sys
from pathlib import Path

import pytest

from autograder.checks import StoppedAt
from autograder.sandbox.inside.whereabouts import Watchdog, checked, innermost, told_where

STUDENT = '''def helper(callback):
    value = 1
    return callback()


def train(callback):
    return helper(callback)


def spin():
    n = 0
    while True:
        n += 1
'''


def _load(folder: Path):
    (folder / "student.py").write_text(STUDENT, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("student_whereabouts", folder / "student.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_innermost_frame_in_the_students_files_with_its_line(tmp_path: Path):
    module = _load(tmp_path)
    frame = module.train(lambda: sys._getframe())  # a frame of this (kit) file, called from student code
    where = innermost(frame, str(tmp_path))
    assert where == {"file": "student.py", "line": 3, "function": "helper", "code": "return callback()"}
    assert innermost(sys._getframe(), str(tmp_path)) is None  # no student frame on this stack


def _spin_in_fork(folder: Path, cpu_limit: int = 0) -> tuple[int, socket.socket]:
    module = _load(folder)
    parent, child = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        try:
            parent.close()
            Watchdog(child, str(folder)).start()
            if cpu_limit:
                resource.setrlimit(resource.RLIMIT_CPU, (cpu_limit, cpu_limit + 1))
            module.spin()
        finally:
            os._exit(70)
    child.close()
    return pid, parent


@pytest.mark.skipif(sys.platform != "linux", reason="the sandbox's children are Linux processes")
def test_a_running_loop_says_where_it_is_when_asked(tmp_path: Path):
    pid, channel = _spin_in_fork(tmp_path)
    try:
        for _ in range(100):  # until the fork is in the student's loop (before, it is in no student frame)
            where = told_where(channel, 5.0, ask=True)
            if where is not None:
                break
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        channel.close()
    assert where is not None and where["file"] == "student.py" and where["function"] == "spin"
    assert where["line"] in (12, 13) and where["code"] in ("while True:", "n += 1")


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_CPU and SIGXCPU")
def test_the_cpu_limit_tells_where_then_ends_the_process_as_before(tmp_path: Path):
    pid, channel = _spin_in_fork(tmp_path, cpu_limit=1)
    _, status = os.waitpid(pid, 0)
    where = told_where(channel, 1.0, ask=False)
    channel.close()
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU  # still the CPU limit's death
    assert where is not None and where["function"] == "spin" and where["line"] in (12, 13)


def test_what_a_process_says_is_checked_capped_and_escaped():
    assert checked(b"") is None and checked(b"[1]") is None and checked(b'{"file": 3}') is None
    assert checked(b'{"file": "a.py", "line": "9", "function": "f", "code": ""}') is None
    long = checked(('{"file": "a.py", "line": 7, "function": "f", "code": "%s"}' % ("x" * 5000)).encode())
    assert long is not None and len(long["code"]) <= 160
    hostile = {"file": "a.py", "line": 7, "function": "f`\n<b>", "code": "x = `1`\x1b[31m"}
    shown = StoppedAt.from_plain(hostile)
    assert shown is not None and "`" not in shown.function + shown.code and "\n" not in shown.function
    assert "\x1b" not in shown.code and shown.place == "a.py:7"
    assert StoppedAt.from_plain({"file": "", "line": 7, "function": "f", "code": ""}) is None
    assert StoppedAt.from_plain({"file": "a.py", "line": True, "function": "f", "code": ""}) is None
