"""A self-check's run of one task where fork is unavailable or unsafe: a spawned process per run.

Windows has no fork and macOS's system libraries are not safe in a forked child of torch, so
there each run (student_fork.ForkedRun: the first, and one after each stopped call) is a fresh
spawned Python that imports torch off the clock, says it is ready, and only then is timed: the
same clock, channels, whereabouts and budgets as a fork, so a hanging call costs the checks that
need it there as on Linux. AUTOGRADER_START_METHOD=spawn forces this path on Linux (the tests').
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import socket
import sys
import types
from pathlib import Path
from typing import Any

from autograder.grading.student_fork import ForkedRun

READY = b"ready\n"
LOAD_BUDGET = 300.0  # seconds for a spawned run to start and import torch (off the task's clock)


def _spawned(sock: socket.socket, where: socket.socket, out: socket.socket, folder: str, module_name: str,
             probes_source: str) -> None:
    """In the spawned process: its output to the parent, torch warmed, then as a fork serves."""
    from autograder.sandbox.inside.child import serve_calls
    from autograder.sandbox.inside.runtime import TaskRuntime, warm_torch
    from autograder.sandbox.inside.whereabouts import Watchdog

    if sys.platform == "linux":
        from autograder.sandbox.inside.cleanup import PR_SET_PDEATHSIG, prctl

        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # it ends with the check
    if hasattr(os, "setpgid"):
        os.setpgid(0, 0)  # what it starts can be ended with it
    if sys.platform != "win32":  # what C code prints goes there too
        os.dup2(out.fileno(), 1)
        os.dup2(out.fileno(), 2)
        sys.stdout = open(1, "w", buffering=1, closefd=False, errors="backslashreplace")
        sys.stderr = open(2, "w", buffering=1, closefd=False, errors="backslashreplace")
    else:
        sys.stdout = sys.stderr = out.makefile("w", buffering=1, errors="backslashreplace")
    import torch

    torch.set_num_threads(1)  # as graded
    warm_torch()
    sock.sendall(READY)
    runtime = TaskRuntime(folder, module_name, probes_source)
    Watchdog(where, runtime.task_dir, frozenset()).start()
    serve_calls(sock, runtime, runtime.open())


class SpawnedRun(ForkedRun):
    """A task's run in a spawned process (task_runs.Run); a notebook's names cannot cross into it."""

    def _begin(self, folder: Path, module_name: str, probes_source: str, module: types.ModuleType | None
               ) -> tuple[int, socket.socket, socket.socket, Any]:
        sock, child_sock = socket.socketpair()
        where, child_where = socket.socketpair()
        out, child_out = socket.socketpair()
        sys.stdout.flush()
        sys.stderr.flush()
        context = multiprocessing.get_context("spawn")
        self.process = context.Process(target=_spawned, daemon=True, name="autograder-run",
                                       args=(child_sock, child_where, child_out, str(folder), module_name,
                                             probes_source))
        self.process.start()
        for end in (child_sock, child_where, child_out):
            end.close()
        out.setblocking(False)
        sock.settimeout(LOAD_BUDGET)
        said = b""
        with contextlib.suppress(OSError):
            while len(said) < len(READY) and (chunk := sock.recv(len(READY) - len(said))):
                said += chunk
        if said != READY:  # it could not start: its channel's end tells the run so
            self.process.kill()
        sock.settimeout(None)
        assert self.process.pid is not None
        return self.process.pid, sock, where, out

    def _output_chunk(self) -> bytes:
        return bytes(self.out.recv(65536))

    def _close_output(self) -> None:
        self.out.close()

    def _ended(self) -> None:
        self.process.join(1.0)
        code = self.process.exitcode
        if code is None:  # it closed its channel but kept running
            self._lose("protocol")
            return
        crash = {int(s) for s in (signal.SIGSEGV, signal.SIGABRT, signal.SIGILL, signal.SIGFPE)}
        self._lose("exited" if code >= 0 else "crashed" if -code in crash else "killed", reaped=True)

    def _kill(self, reaped: bool) -> None:
        if hasattr(os, "killpg"):
            with contextlib.suppress(OSError):
                os.killpg(self.pid, signal.SIGKILL)
        self.process.kill()
        self.process.join()
