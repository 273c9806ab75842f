"""The warm worker: imports torch once, then serves every task from a fresh fork of itself.

Runs inside the sandbox (or bare, for trusted code) as three generations of processes:

- the *template* imports torch, then only forks relays, reaps and cleans up. It never reads a
  request, so its memory never holds a student's files, outputs or answers: every task starts
  from the same clean copy of it. Sandboxed, it is PID 1, which no process of the sandbox can
  signal, and its `kill(-1)` reaches every other process of the sandbox.
- a *relay* per submission, forked from the template, speaks with the grading process on
  stdin/stdout (a JSON line per message, raw array bytes after it: see codec): for each task it
  writes the task's files, forks the task's child, checks and relays its answers within the
  task's budget, and kills everything the task started and wipes its files before it answers
  the task's last request. It exits with the submission (or with a task that was lost), so no
  later student's code is ever forked from a process that held an earlier student's files.
- the task's *child*, forked from the relay: limits first, then it imports the one student file
  and runs probes on the inputs the grader sends.

The worker decides nothing about grades.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import tempfile
import time
from typing import Any

from autograder.sandbox.inside.cleanup import (
    CLEANUP_SECONDS,
    PR_SET_CHILD_SUBREAPER,
    PR_SET_DUMPABLE,
    kill_all,
    name_process,
    prctl,
    wipe,
)
from autograder.sandbox.inside.relay import RELAY_DONE, RELAY_FAILED, RELAY_QUIT, RELAY_STUCK, Relay, send

F_SETPIPE_SZ = 1031


# -- the template -------------------------------------------------------------------------------
class Template:
    """The warm, pristine parent: forks one relay per task and cleans up after it."""

    def __init__(self, sandboxed: bool):
        self.sandboxed = sandboxed
        self.pid_namespace = sandboxed and os.getpid() == 1
        self.out = sys.stdout.buffer
        self.compiled: dict[str, Any] = {}
        if sandboxed:  # /tmp (and /dev/shm if writable) are this sandbox's own
            self.scratch = tempfile.gettempdir()
            self.wiped = [self.scratch] + (["/dev/shm"] if os.access("/dev/shm", os.W_OK) else [])
        else:  # trusted code: a private folder
            self.scratch = tempfile.mkdtemp(prefix="autograder-")
            self.wiped = [self.scratch]

    def run(self) -> None:
        name_process(b"ag-worker")
        prctl(PR_SET_CHILD_SUBREAPER, 1)
        # PID 1 ignores signals it has no handler for: no process of the sandbox can stop it.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        try:
            hello = {"ready": True, "pid": os.getpid(), "uid": os.getuid()}
            send(self.out, hello if self.sandboxed else {**hello, "scratch": self.scratch})
            while self._one_task():
                pass
        except OSError:
            pass  # the grader has gone
        finally:
            kill_all(self.pid_namespace, time.monotonic() + CLEANUP_SECONDS)
            if not self.sandboxed:
                wipe(self.scratch, time.monotonic() + CLEANUP_SECONDS)
                try:
                    os.rmdir(self.scratch)
                except OSError:
                    pass

    def _one_task(self) -> bool:
        """Fork a relay, wait for it, clean up after it; False when the worker should stop."""
        probes_r, probes_w = os.pipe()
        try:
            import fcntl

            fcntl.fcntl(probes_w, F_SETPIPE_SZ, 1 << 20)
        except OSError:
            pass
        os.set_blocking(probes_w, False)
        pid = os.fork()
        if pid == 0:
            code = RELAY_FAILED
            relay = None
            try:
                os.close(probes_r)
                relay = Relay(self, probes_w)
                code = relay.serve()
            except BaseException:
                code = RELAY_STUCK if relay is not None and relay.finished else RELAY_FAILED
            finally:
                os._exit(code)
        os.close(probes_w)
        status = self._wait_for(pid)
        self._learn_probes(probes_r)
        code = os.waitstatus_to_exitcode(status)
        # The relay killed and wiped everything already when it ended normally; PID 1 makes sure.
        clean = kill_all(self.pid_namespace, time.monotonic() + CLEANUP_SECONDS)
        if code != RELAY_DONE:
            clean = clean and self._clean_up()
        if code == RELAY_QUIT:
            return False
        if code not in (RELAY_DONE, RELAY_STUCK):
            # The relay died before it could answer (the task's own processes killed it): the
            # grader learns that the task is over; the newline ends any line the relay had begun.
            send(self.out, {"id": None, "lost": "killed", "output": ""}, prefix=b"\n")
        return clean

    def _wait_for(self, pid: int) -> int:
        """The relay's exit status. A relay stopped by the task's processes (SIGSTOP) is killed."""
        while True:
            try:
                reaped, status = os.waitpid(-1, os.WUNTRACED)
            except ChildProcessError:
                return 0
            if reaped != pid:
                continue
            if os.WIFSTOPPED(status):
                os.kill(pid, signal.SIGKILL)
                continue
            return status

    def _learn_probes(self, fd: int) -> None:
        data = bytearray()
        try:
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                data += chunk
        except OSError:
            pass
        finally:
            os.close(fd)
        if data:
            from autograder.sandbox.inside.runtime import compile_probes

            try:
                source = data.decode()
                if len(self.compiled) >= 4:
                    self.compiled.clear()
                self.compiled[source] = compile_probes(source)
            except (UnicodeDecodeError, SyntaxError, ValueError):
                pass

    def _clean_up(self) -> bool:
        """After a relay that could not clean up: wipe in a throw-away process."""
        deadline = time.monotonic() + CLEANUP_SECONDS
        pid = os.fork()
        if pid == 0:  # file names of the task never enter the template's memory
            ok = False
            try:
                ok = all(wipe(folder, deadline) for folder in self.wiped)
            finally:
                os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status) == 0


def prewarm() -> None:
    """Import torch and touch its lazily loaded parts once, so forked children start warm."""
    from autograder.sandbox.inside.runtime import warm_torch

    warm_torch()


MADV_HUGEPAGE = 14
MADV_COLLAPSE = 25
HUGE_PAGE = 1 << 21


def settle() -> int:
    """Make the warm process cheap to fork: returns how many bytes now sit in huge pages.

    Forking copies one page-table entry per 4 KiB page of private memory, and exiting drops
    them again: with torch's ~200 MB that is ~20 ms per process, twice per task. Collapsing
    that memory into 2 MiB pages (where the kernel allows it) makes it 512 times fewer
    entries. Freezing the objects it already holds keeps every child's garbage collector from
    visiting, and so copying, the whole heap.
    """
    import gc

    gc.collect()
    gc.freeze()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        with open("/proc/self/maps") as handle:
            maps = handle.read().splitlines()
    except (OSError, AttributeError):
        return 0
    collapsed = 0
    for line in maps:
        fields = line.split()
        if len(fields) < 5 or not fields[1].startswith("rw") or (len(fields) > 5 and fields[5] != "[heap]"):
            continue  # only private anonymous memory and the malloc heap: not files, not the stack
        low, high = (int(x, 16) for x in fields[0].split("-"))
        start, end = (low + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1), high & ~(HUGE_PAGE - 1)
        if end - start < HUGE_PAGE:
            continue
        libc.madvise(start, end - start, MADV_HUGEPAGE)
        if libc.madvise(start, end - start, MADV_COLLAPSE) == 0:  # refused without THP: no harm
            collapsed += end - start
    return collapsed


def main() -> None:
    sandboxed = "--sandboxed" in sys.argv
    if sandboxed:
        prctl(PR_SET_DUMPABLE, 0)  # no process of the sandbox may ptrace or read our memory
    prewarm()
    # Warm for every child, and loaded before any submission so that the integrity snapshot holds them.
    from autograder.sandbox.inside import integrity, observe, runtime, spies, whereabouts  # noqa: F401

    integrity.keep_for_forks()  # after every watched module is in, before the heap is frozen
    settle()
    Template(sandboxed).run()


if __name__ == "__main__":
    main()
