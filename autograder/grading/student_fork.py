"""A self-check's run of one task on Linux: the student's file (or a notebook's names) in a fork of this
process, answering the probe calls that the checks, here, make; timed on its own clock.

It is the sandbox's run (sandbox/session.py with its relay) without the sandbox: the same budget
(a run may use what TaskRuns gives it, import included; only the time the fork works counts, not
the checks' own time in this process), the same child (sandbox/inside/child.serve_calls), the same
whereabouts before a stopped fork is killed. So a self-check and a grade lose the same calls and
give the same verdicts; the student's machine is trusted, so there are no limits but time.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import selectors
import signal
import socket
import sys
import time
import types
from pathlib import Path
from typing import Any

from autograder.checks import StoppedAt, StudentCodeError, WorkerLost
from autograder.sandbox import codec
from autograder.sandbox.inside.child import death_reason
from autograder.sandbox.inside.clock import TaskClock
from autograder.sandbox.local import call_seed, unpack_answer

TICK = 0.25  # how often the waiting process looks at the run's clock again
WHERE_WAIT = 1.0  # seconds a fork past its time has to say where it is, before it is killed
MAX_LINE = 64 * 1024 * 1024


def _cells(module: types.ModuleType | None) -> frozenset[str]:
    """The files (a notebook's cells) the code of a notebook's names was compiled from."""
    if module is None:
        return frozenset()
    found: set[str] = set()
    for value in list(vars(module).values()):
        inside = list(vars(value).values()) if isinstance(value, type) else [value]
        found.update(f.__code__.co_filename for f in inside if isinstance(f, types.FunctionType))
    return frozenset(found)


def _serve(sock: socket.socket, where: socket.socket, out_w: int, folder: str, module_name: str,
           probes_source: str, module: types.ModuleType | None) -> None:
    """In the fork: its output to the parent, the whereabouts watchdog, the import, then the calls."""
    from autograder.sandbox.inside.child import serve_calls
    from autograder.sandbox.inside.cleanup import PR_SET_PDEATHSIG, prctl
    from autograder.sandbox.inside.runtime import TaskRuntime
    from autograder.sandbox.inside.whereabouts import Watchdog

    os.setpgid(0, 0)  # what it starts can be ended with it
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # and it ends with this process
    os.dup2(out_w, 1)
    os.dup2(out_w, 2)
    os.close(out_w)
    sys.stdout = open(1, "w", buffering=1, closefd=False, errors="backslashreplace")
    sys.stderr = open(2, "w", buffering=1, closefd=False, errors="backslashreplace")
    import torch

    torch.set_num_threads(1)  # as graded
    runtime = TaskRuntime(folder, module_name, probes_source)
    Watchdog(where, runtime.task_dir, _cells(module)).start()
    serve_calls(sock, runtime, runtime.adopt(module) if module is not None else runtime.open())


class ForkedRun:
    """One run of a task's probes in a fork (task_runs.Run), opened when it is made."""

    def __init__(self, task: str, folder: Path, module_name: str, probes_source: str,
                 module: types.ModuleType | None, budget: float, counter: int = 0):
        self.task = task
        self.counter = counter
        self.budget = self.run_budget = float(budget)
        self.lost: WorkerLost | None = None
        self.status: dict[str, Any] = {}
        self.buffer = bytearray()
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        pid, sock, where, out_r = self._begin(folder, module_name, probes_source, module)
        self.pid, self.sock, self.where, self.out = pid, sock, where, out_r
        self.open = True
        sock.setblocking(False)
        self.readers = selectors.DefaultSelector()
        self.readers.register(sock, selectors.EVENT_READ, "answer")
        self.readers.register(out_r, selectors.EVENT_READ, "output")
        frame = self._await()
        if frame is not None:
            try:
                status = codec.decode(frame)
            except ValueError:
                status = None
            if type(status) is dict and "tampered" in status:
                self._lose("tampered", detail=str(status["tampered"])[:300])
            elif type(status) is dict and type(status.get("imported")) is bool:
                self.status = status
            else:
                self._lose("protocol")

    def _begin(self, folder: Path, module_name: str, probes_source: str, module: types.ModuleType | None
               ) -> tuple[int, socket.socket, socket.socket, Any]:
        """Start the run's process: its pid, call and whereabouts channels, and output (a pipe's fd)."""
        sock, child_sock = socket.socketpair()
        where, child_where = socket.socketpair()
        out_r, out_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the run's process
            try:
                sock.close()
                where.close()
                os.close(out_r)
                _serve(child_sock, child_where, out_w, str(folder), module_name, probes_source, module)
            finally:
                os._exit(70)
        child_sock.close()
        child_where.close()
        os.close(out_w)
        os.set_blocking(out_r, False)
        return pid, sock, where, out_r

    def _output_chunk(self) -> bytes:
        return os.read(self.out, 65536)

    def _close_output(self) -> None:
        os.close(self.out)

    # -- calls ----------------------------------------------------------------------------------
    def call(self, probe: str, /, **kwargs: Any) -> Any:
        if self.lost is not None:
            raise self.lost
        if not self.status.get("imported"):
            err = self.status.get("error", {})
            raise StudentCodeError("import", err.get("type", "ImportError"), err.get("message", ""),
                                   err.get("where", ""))
        self.counter += 1
        plain, payload = codec.plain({"kwargs": kwargs})
        import json

        line = json.dumps({"probe": probe, "seed": call_seed(self.task, probe, self.counter), **plain})
        if not self._send(line.encode() + b"\n" + payload):
            assert self.lost is not None
            raise self.lost
        frame = self._await()
        if frame is None:
            assert self.lost is not None
            raise self.lost
        try:
            answer = codec.decode(frame)
        except ValueError:
            self._lose("protocol")
            raise self.lost from None  # type: ignore[misc]
        if type(answer) is dict and "tampered" in answer:
            self._lose("tampered", detail=str(answer["tampered"])[:300])
            raise self.lost  # type: ignore[misc]
        return unpack_answer(probe, answer)

    def _send(self, data: bytes) -> bool:
        """Write a call to the fork without ever waiting past its budget."""
        view = memoryview(data)
        clock = TaskClock(self.pid).start()
        try:
            with selectors.DefaultSelector() as sel:
                sel.register(self.sock, selectors.EVENT_WRITE)
                while view:
                    try:
                        view = view[self.sock.send(view):]
                        continue
                    except BlockingIOError:
                        pass
                    except OSError:
                        self._ended()
                        return False
                    remaining = clock.remaining(self.budget)
                    if remaining <= 0:
                        self._lose("time_limit", ask=True)
                        return False
                    sel.select(timeout=min(remaining, TICK))
        finally:
            self.budget = max(self.budget - clock.charged(), 0.0)
        return True

    def _await(self) -> bytes | None:
        """The fork's next whole message within its budget, showing its output meanwhile."""
        clock = TaskClock(self.pid).start()
        try:
            while True:
                frame = self._next_frame()
                if frame is not None:
                    return frame if self.lost is None else None
                remaining = clock.remaining(self.budget)
                if remaining <= 0:
                    self._lose("time_limit", ask=True)
                    return None
                for key, _ in self.readers.select(timeout=min(remaining, TICK)):
                    if key.data == "output":
                        self._show_output()
                    elif not self._read():
                        frame = self._next_frame()
                        if frame is not None and self.lost is None:
                            return frame
                        self._ended()
                        return None
        finally:
            self.budget = max(self.budget - clock.charged(), 0.0)

    def _next_frame(self) -> bytes | None:
        newline = self.buffer.find(b"\n")
        if newline < 0:
            if len(self.buffer) > MAX_LINE:
                self._lose("answer_too_large")
                return b""
            return None
        try:
            _, size = codec.parse_header(bytes(self.buffer[:newline]))
        except ValueError:
            self._lose("protocol")
            return b""
        if size > MAX_LINE:
            self._lose("answer_too_large")
            return b""
        if len(self.buffer) < newline + 1 + size:
            return None
        frame = bytes(self.buffer[: newline + 1 + size])
        del self.buffer[: newline + 1 + size]
        return frame

    def _read(self) -> bool:
        try:
            chunk = self.sock.recv(1 << 20)
        except BlockingIOError:
            return True
        except OSError:
            chunk = b""
        self.buffer += chunk
        return bool(chunk)

    def _show_output(self) -> None:
        """What the fork printed, passed on to this process's stdout (a self-check caps it there)."""
        while True:
            try:
                chunk = self._output_chunk()
            except (BlockingIOError, OSError):
                return
            if not chunk:
                with contextlib.suppress(KeyError):
                    self.readers.unregister(self.out)
                return
            text = self.decoder.decode(chunk)
            if text:
                sys.stdout.write(text)

    # -- its end --------------------------------------------------------------------------------
    def _ended(self) -> None:
        """The fork closed its channel: it ended (or is about to); why, from its exit status."""
        status = self._exit_status()
        if status is None:  # it closed its channel but kept running
            self._lose("protocol")
            return
        self._lose(death_reason(status[0], status[1], float("inf")), reaped=True)

    def _exit_status(self) -> tuple[int, float] | None:
        deadline = time.monotonic() + 1.0
        status = None
        while time.monotonic() < deadline:
            with contextlib.suppress(ChildProcessError):
                pid, code, usage = os.wait4(self.pid, os.WNOHANG)
                if pid:
                    status = (code, usage.ru_utime + usage.ru_stime)
                    break
            time.sleep(0.01)
        return status

    def _kill(self, reaped: bool) -> None:
        for kill in (os.killpg, os.kill):
            with contextlib.suppress(OSError):
                kill(self.pid, signal.SIGKILL)
        if not reaped:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)

    def _lose(self, reason: str, ask: bool = False, detail: str = "", reaped: bool = False) -> None:
        if self.lost is not None:
            return
        where = None
        if ask:
            from autograder.sandbox.inside.whereabouts import told_where

            where = told_where(self.where, WHERE_WAIT, ask=True)
        self.lost = WorkerLost(reason, detail, StoppedAt.from_plain(where))
        self._finish(reaped)

    def _finish(self, reaped: bool = False) -> None:
        if not self.open:
            return
        self.open = False
        self._kill(reaped)
        self._show_output()
        self.readers.close()
        for closing in (self.sock.close, self.where.close, self._close_output):
            with contextlib.suppress(OSError):
                closing()
        tail = self.decoder.decode(b"", final=True)
        if tail:
            sys.stdout.write(tail)

    def close(self) -> str:
        """End the run; its output was shown as it came."""
        self._finish()
        return ""
