"""Grader side of a warm worker: start it, send it requests, and never wait longer than allowed.

Everything that comes back is untrusted: it is parsed as JSON only (never unpickled or run),
bounded in size, matched to the request it answers, and its text is cleaned (invalid Unicode
replaced, long messages clipped) before any of it can reach feedback.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from autograder.errors import WorkerProtocolError
from autograder.sandbox import codec
from autograder.sandbox.cgroup import Cgroup
from autograder.sandbox.launch import Launch, spawnable

STARTUP_TIMEOUT = 120.0
GRACE = 5.0  # seconds past the task's budget before the grader kills the whole sandbox
CLOSE_BUDGET = 15.0  # killing everything a task started and wiping its files
QUIT_WAIT = 5.0  # a bare worker's own cleanup when it is stopped
MAX_REPLY = 48 * 1024 * 1024
NPROC_LIMIT = 64
MESSAGE_LIMIT = 2000  # characters of a student's exception message
OUTPUT_LIMIT = 1024 * 1024  # characters of captured output, whatever the worker claims
# Why the worker gave no usable reply -> the catalogue key the task is failed with.
FAILURES = {"timeout": "time_limit", "died": "killed", "protocol": "protocol"}


def clean_text(value: Any, limit: int | None = None) -> str:
    """Text from the worker made safe for feedback: a str, valid Unicode, and at most `limit` long."""
    text = value if type(value) is str else str(value) if type(value) in (int, float, bool) else ""
    if not text.isascii():
        text = text.encode("utf-8", "replace").decode("utf-8")  # lone surrogates become "?"
    if limit is not None and len(text) > limit:
        text = text[:limit] + f"... [{len(text) - limit} more characters]"
    return text


def _cleaned(value: Any) -> Any:
    kind = type(value)
    if kind is str:
        return clean_text(value)
    if kind is list:
        return [_cleaned(v) for v in value]
    if kind is dict:
        return {clean_text(k): _cleaned(v) for k, v in value.items()}
    return value


def clean_error(err: Any) -> dict[str, str]:
    if type(err) is not dict:
        return {}
    limits = {"type": 200, "message": MESSAGE_LIMIT, "where": 300}
    return {key: clean_text(err.get(key, ""), limit) for key, limit in limits.items() if key in err}


def _private_folder(path: str) -> bool:
    folder = Path(path)
    return folder.parent == Path(tempfile.gettempdir()) and folder.name.startswith("autograder-")


class WorkerProcess:
    """One warm worker (a sandbox with torch imported) serving tasks one at a time."""

    def __init__(self, launch: Launch):
        self.launch = launch
        self.proc: subprocess.Popen[bytes] | None = None
        self.buffer = bytearray()
        self.scanned = 0
        self.starts = 0
        self.next_id = 0
        self.failure = ""  # why the last request got no reply: timeout, died or protocol
        self.sandbox_pid: int | None = None  # host pid of the worker's first process (PID 1 inside)
        self.sandbox_pidfd: int | None = None
        self.cgroup: Cgroup | None = None
        self.scratch: str | None = None  # bare workers: their private folder in this machine's /tmp
        self.ready = False  # it said hello: torch is imported and it serves tasks
        self.launched_pidfd: int | None = None  # the launched process, even where it is not our child
        self.adopted = False  # started by the process this one was forked from (not our child)
        self._selector: tuple[int, selectors.BaseSelector] | None = None  # (made by pid, on stdout)

    def __repr__(self) -> str:
        return f"<worker {self.launch.argv[0]} pid={self.proc.pid if self.proc else None}>"

    # -- process management ---------------------------------------------------------------
    def start(self) -> None:
        self.spawn()
        self.handshake()

    def spawn(self) -> None:
        """Launch the worker without waiting for it: it imports torch while this process goes on."""
        self.stop()
        self.starts += 1
        if self.launch.sandboxed:
            self.cgroup = Cgroup.create(str(self.starts))
        try:
            with spawnable(self.launch) as (argv, fds):
                if self.cgroup is not None:
                    argv = self.cgroup.wrap(tuple(argv))
                self.proc = subprocess.Popen(  # noqa: S603  the sandbox's argv (launch.py), no shell
                    argv,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    env=self.launch.env,
                    start_new_session=True,
                    close_fds=True,
                    pass_fds=fds,
                )
        except OSError as exc:
            if self.cgroup is not None:
                self.cgroup.remove(wait=0.0)
                self.cgroup = None
            raise WorkerProtocolError(f"the worker could not be started ({exc})") from None
        assert self.proc.stdin is not None
        os.set_blocking(self.proc.stdin.fileno(), False)
        self.buffer = bytearray()
        self.scanned = 0
        self.ready = False
        self.adopted = False
        with contextlib.suppress(OSError, AttributeError):
            self.launched_pidfd = os.pidfd_open(self.proc.pid)

    def handshake(self) -> None:
        """Wait until the spawned worker is ready to serve."""
        hello = self._read(time.monotonic() + STARTUP_TIMEOUT, None)
        if hello is None or not hello.get("ready"):
            self.stop(graceful=False)
            raise WorkerProtocolError(
                "the worker did not start: check that `import torch` works in .venv and that the "
                "sandbox can run (autograder doctor)"
            )
        self.sandbox_pid = self._first_process()
        if self.sandbox_pid is not None:
            # A pidfd names this very process: stop() can never signal a recycled pid.
            with contextlib.suppress(OSError, AttributeError):
                self.sandbox_pidfd = os.pidfd_open(self.sandbox_pid)
        scratch = hello.get("scratch")
        if not self.launch.sandboxed and type(scratch) is str and _private_folder(scratch):
            self.scratch = scratch
        if self.cgroup is not None and self.sandbox_pid is not None and self.cgroup.holds(self.sandbox_pid):
            self.cgroup.baseline = self.cgroup.usage()
        elif self.cgroup is not None:
            self.cgroup.remove(wait=0.0)
            self.cgroup = None
        self.ready = True

    def adopt(self) -> None:
        """In a process forked after spawn(): this worker is ours to use now, though not our child."""
        self.adopted = self.proc is not None

    def release(self) -> None:
        """Close this process's ends of a worker that a forked process has adopted (it keeps them).

        The worker stays this process's child: stop() still kills it and collects its exit."""
        if self.proc is not None:
            for stream in (self.proc.stdin, self.proc.stdout):
                if stream:
                    with contextlib.suppress(OSError):
                        stream.close()

    def _alive(self) -> bool:
        assert self.proc is not None
        if not self.adopted or self.launched_pidfd is None:
            return self.proc.poll() is None
        with selectors.DefaultSelector() as sel:  # a process's pidfd turns readable when it ends
            sel.register(self.launched_pidfd, selectors.EVENT_READ)
            return not sel.select(timeout=0)

    def _wait_gone(self, timeout: float | None) -> None:
        """Wait for the launched process to end (and collect it, where it is our child)."""
        assert self.proc is not None
        if not self.adopted or self.launched_pidfd is None:
            if timeout is None:
                self.proc.wait()
            else:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.proc.wait(timeout=timeout)
            return
        with selectors.DefaultSelector() as sel:
            sel.register(self.launched_pidfd, selectors.EVENT_READ)
            sel.select(timeout=timeout)

    def _first_process(self) -> int | None:
        """The worker's own process: bwrap's child when sandboxed, else the process we started."""
        assert self.proc is not None
        if not self.launch.sandboxed:
            return self.proc.pid
        try:
            with open(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children") as handle:
                kids = handle.read().split()
        except OSError:
            return None
        return int(kids[0]) if len(kids) == 1 else None

    def stop(self, graceful: bool = True) -> None:
        """Kill the worker and everything in its sandbox; return once all of it is gone."""
        if self.proc is None:
            return
        if graceful and not self.launch.sandboxed and self._alive():
            # Bare (trusted code): end of input lets the worker kill its task and remove its
            # private folder from the host's /tmp; a sandbox's /tmp vanishes with it anyway.
            with contextlib.suppress(OSError):
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            self._wait_gone(QUIT_WAIT)
        pidfd, self.sandbox_pidfd = self.sandbox_pidfd, None
        if pidfd is not None:
            # PID 1 of the sandbox: when it dies, the kernel kills every process of the sandbox.
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        if self.launched_pidfd is not None:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self.launched_pidfd, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        if not self.adopted:
            self.proc.kill()
        self._wait_gone(None)
        if self.launched_pidfd is not None:
            os.close(self.launched_pidfd)
            self.launched_pidfd = None
        if pidfd is not None:  # gone only once every process of its namespace is gone
            with selectors.DefaultSelector() as sel:
                sel.register(pidfd, selectors.EVENT_READ)
                sel.select(timeout=10.0)
            os.close(pidfd)
        if self._selector is not None:
            self._selector[1].close()
            self._selector = None
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream:
                with contextlib.suppress(OSError):
                    stream.close()
        self.proc = None
        self.ready = False
        self.adopted = False
        self.sandbox_pid = None
        if self.scratch is not None:  # bare: the private folder, if the worker could not remove it
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None

    def ensure(self) -> None:
        if self.proc is None or not self._alive():
            self.start()
        elif not self.ready:
            self.handshake()

    def end_submission(self) -> None:
        """The next task is another student's: the process that served this one's tasks ends."""
        if self.proc is not None and self.ready:
            self.request({"op": "end"}, CLOSE_BUDGET)

    def limit_task(self, memory_mb: int) -> None:
        """Cap the whole sandbox's memory for the next task (where a cgroup holds it)."""
        if self.cgroup is not None:
            self.cgroup.limit_memory(int(memory_mb) * 1024 * 1024)

    # -- transport ------------------------------------------------------------------------
    def _send(self, message: dict[str, Any], deadline: float, payload: bytes = b"") -> bool:
        """Write one request (its line, then its raw part) without ever blocking past the deadline."""
        assert self.proc is not None and self.proc.stdin is not None
        fd = self.proc.stdin.fileno()
        view = memoryview(json.dumps(message).encode() + b"\n" + payload)
        with contextlib.ExitStack() as stack:
            sel: selectors.BaseSelector | None = None  # only once the pipe is full (rarely)
            while True:
                try:
                    view = view[os.write(fd, view) :]  # non-blocking
                except BlockingIOError:
                    pass
                except OSError:
                    self.failure = "died"
                    return False
                if not view:
                    return True
                if sel is None:
                    sel = stack.enter_context(selectors.DefaultSelector())
                    sel.register(fd, selectors.EVENT_WRITE)
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not sel.select(timeout=remaining):
                    self.failure = "timeout"
                    return False

    def _fill(self, fd: int, sel: selectors.BaseSelector, deadline: float) -> bool:
        """Read whatever the worker sent next into the buffer; False (and why) when nothing can come."""
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not sel.select(timeout=remaining):
            self.failure = "timeout"
            return False
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            self.failure = "died"
            return False
        self.buffer += chunk
        return True

    def _reader(self, fd: int) -> selectors.BaseSelector:
        """A selector on the worker's output, kept while the worker lives (made by the process using it)."""
        if self._selector is None or self._selector[0] != os.getpid():
            sel = selectors.DefaultSelector()
            sel.register(fd, selectors.EVENT_READ)
            self._selector = (os.getpid(), sel)
        return self._selector[1]

    def _frame(self, deadline: float) -> tuple[bytes, Any, bytes] | None:
        """The next message: its line, the line parsed (None when it is not JSON), and the raw part
        whose size the line gives."""
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        sel = self._reader(fd)
        while True:
            newline = self.buffer.find(b"\n", self.scanned)
            if newline >= 0:
                break
            self.scanned = len(self.buffer)
            if len(self.buffer) > MAX_REPLY:
                self.failure = "protocol"
                return None
            if not self._fill(fd, sel, deadline):
                return None
        line = bytes(self.buffer[:newline])
        del self.buffer[: newline + 1]
        self.scanned = 0
        try:
            header, size = codec.parse_header(line)
        except (ValueError, RecursionError):
            header, size = None, 0
        if size > MAX_REPLY:
            self.failure = "protocol"
            return None
        while len(self.buffer) < size:
            if not self._fill(fd, sel, deadline):
                return None
        payload = bytes(self.buffer[:size])
        del self.buffer[:size]
        return line, header, payload

    def _read(self, deadline: float, want: int | None) -> dict[str, Any] | None:
        """The reply to request `want`: one JSON object; None if the worker died, lied or ran out of time.

        Replies to earlier requests (left after a lost task) are skipped; a reply without an id
        says that the process serving the current task died before it could answer.
        """
        while True:
            frame = self._frame(deadline)
            if frame is None:
                return None
            line, header, payload = frame
            if not line.strip():
                continue
            try:
                message = codec.revive(header, payload)
            except (ValueError, KeyError, TypeError, RecursionError, MemoryError):
                self.failure = "protocol"
                return None
            if type(message) is not dict:
                self.failure = "protocol"
                return None
            if want is not None and message.get("id") is not None and message.get("id") != want:
                continue
            if b"\\u" not in line and b"\xed" not in line:
                # No escape and no raw surrogate bytes: json made only valid Unicode of this line.
                return message
            cleaned: dict[str, Any] = _cleaned(message)  # a dict cleans to a dict
            return cleaned

    def request(self, message: dict[str, Any], budget: float, payload: bytes = b"") -> dict[str, Any] | None:
        """Send a request and wait for its reply; on silence or nonsense, kill the worker.

        The next request starts a fresh one; `failure` says what went wrong.
        """
        self.ensure()
        self.next_id += 1
        self.failure = ""
        deadline = time.monotonic() + budget + GRACE
        reply = None
        if self._send({**message, "id": self.next_id}, deadline, payload):
            reply = self._read(deadline, self.next_id)
        if reply is None:
            self.stop(graceful=False)  # unresponsive or lying: the next task gets a fresh sandbox
        return reply
