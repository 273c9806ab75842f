"""The task's child, forked from the relay inside the sandbox: limits, the student's import, probe calls.

Also the relay's handle on that child (Child) and how its end is named (death_reason).
"""

from __future__ import annotations

import json
import os
import resource
import selectors
import signal
import socket
import sys
import tempfile
import time
from typing import Any

from autograder.sandbox import codec
from autograder.sandbox.inside.cleanup import PR_SET_DUMPABLE, PR_SET_PDEATHSIG, name_process, prctl

CRASH_SIGNALS = {signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT, signal.SIGILL, signal.SIGFPE, signal.SIGSYS}


def _vm_size() -> int:
    with open("/proc/self/status", "rb") as handle:
        for line in handle:
            if line.startswith(b"VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def child_main(
    sock: socket.socket, out_w: int, task_dir: str, request: dict[str, Any], probes_code: Any,
    sandboxed: bool, where: socket.socket | None = None,
) -> None:
    """In the forked child: limits, then import the student's module and serve probe calls; `where`:
    the channel on which it tells where the student's code was when it is stopped (whereabouts)."""
    limits = request["limits"]
    name_process(b"ag-task")
    os.setsid()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(out_w, 1)
    os.dup2(out_w, 2)
    keep = sorted({sock.fileno()} | ({where.fileno()} if where is not None else set()))
    low = 3
    for fd in keep:
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 65536)
    if not sandboxed:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # bare: die with the relay
    # The task's processes are the ones the kernel kills first when the sandbox runs out of memory.
    try:
        prctl(PR_SET_DUMPABLE, 1)  # only a dumpable process may write its own /proc files
        with open("/proc/self/oom_score_adj", "w") as handle:
            handle.write("1000")
    except OSError:
        pass
    finally:
        if sandboxed:
            prctl(PR_SET_DUMPABLE, 0)
    cpu = max(1, int(limits["cpu"]))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    mem = _vm_size() + int(limits["memory_mb"]) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    fsize = int(limits.get("fsize_mb", 64)) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    if limits.get("nproc"):
        resource.setrlimit(resource.RLIMIT_NPROC, (int(limits["nproc"]), int(limits["nproc"])))
    os.chdir(task_dir)
    if not sandboxed:  # bare: temporary files go to the worker's private folder, wiped after the task
        os.environ["TMPDIR"] = os.path.dirname(task_dir)
        tempfile.tempdir = None
    sys.stdout = open(1, "w", buffering=1, closefd=False, errors="backslashreplace")
    sys.stderr = open(2, "w", buffering=1, closefd=False, errors="backslashreplace")
    sys.argv = [request["module"] + ".py"]

    from autograder.sandbox.inside.runtime import TaskRuntime

    runtime = TaskRuntime(task_dir, request["module"], request["probes"], probes_code)
    if where is not None:  # before the import: a hang at import is located too
        from autograder.sandbox.inside.whereabouts import Watchdog

        Watchdog(where, runtime.task_dir).start()
    serve_calls(sock, runtime, runtime.open())


def serve_calls(sock: socket.socket, runtime: Any, status: dict[str, Any]) -> None:
    """Say how the import went, then answer probe calls (a JSON line and its raw part each) until the
    channel closes; then end the process."""
    stream = sock.makefile("rwb")
    stream.write(json.dumps(status).encode() + b"\n")
    stream.flush()
    while True:
        line = stream.readline()
        if not line:
            break
        call, size = codec.parse_header(line)
        kwargs = codec.revive(call, stream.read(size))["kwargs"]
        answer = runtime.call(call["probe"], kwargs, int(call["seed"]))
        stream.write(answer)
        stream.flush()
    os._exit(0)


MAX_LINE = 32 * 1024 * 1024  # bytes of one answer from student code before the task is stopped
Frame = tuple[bytes, dict[str, Any], list[int], bytes]  # a message's line, parsed line, raw sizes, raw part


class Child:
    """The relay's handle on the task's child: its pid, channel, output pipe and exit."""

    def __init__(self, pid: int, sock: socket.socket, output_fd: int, where: socket.socket | None = None):
        self.pid = pid
        self.sock = sock
        self.where = where  # where the student's code was, asked before it is killed (whereabouts)
        self.output_fd = output_fd
        self.pidfd: int | None = None
        try:
            self.pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):
            pass  # old kernel: its exit is noticed by polling
        self.buffer = bytearray()
        self.scanned = 0  # bytes of buffer already searched for a newline
        self.header: tuple[bytes, Any, list[int]] | None = None  # a line whose raw part is awaited
        self.sock_open = True
        self.output_open = True
        self.output = bytearray()
        self.output_dropped = 0
        self.status: tuple[int, float] | None = None  # (wait status, CPU seconds) once reaped
        # Kept for the whole task (a selector per wait costs more than most answers take).
        self.readers = selectors.DefaultSelector()
        self.readers.register(sock, selectors.EVENT_READ, "answer")
        self.readers.register(output_fd, selectors.EVENT_READ, "output")
        if self.pidfd is not None:
            self.readers.register(self.pidfd, selectors.EVENT_READ, "exit")

    def reap(self) -> bool:
        """Collect the child's exit status if it has exited."""
        if self.status is not None:
            return True
        try:
            pid, status, usage = os.wait4(self.pid, os.WNOHANG)
        except ChildProcessError:
            self.status = (0, 0.0)
            return True
        if pid == 0:
            return False
        self.status = (status, usage.ru_utime + usage.ru_stime)
        return True

    def next_frame(self) -> Frame | str | None:
        """The child's next whole message; None while it is incomplete; a reason when it is unusable."""
        if self.header is None:
            newline = self.buffer.find(b"\n", self.scanned)
            if newline < 0:
                self.scanned = len(self.buffer)
                return "answer_too_large" if len(self.buffer) > MAX_LINE else None
            line = bytes(self.buffer[:newline])
            del self.buffer[: newline + 1]
            self.scanned = 0
            try:
                header, size = codec.parse_header(line)
            except ValueError:
                return "protocol"
            if type(header) is not dict:
                return "protocol"
            if size + len(line) > MAX_LINE:
                return "answer_too_large"
            self.header = (line, header, codec.blob_sizes(header))
        line, header, sizes = self.header
        size = sum(sizes)
        if len(self.buffer) < size:
            return None
        payload = bytes(self.buffer[:size])
        del self.buffer[:size]
        self.header = None
        return line, header, sizes, payload

    def read_answer(self) -> bool:
        """Read what the child sent; False when nothing more is there now (or ever: sock_open)."""
        try:
            chunk = self.sock.recv(1 << 20)
        except BlockingIOError:
            return False
        except OSError:
            chunk = b""
        if not chunk:
            self.sock_open = False
            return False
        self.buffer += chunk
        return True

    def kill(self, deadline: float) -> None:
        """SIGKILL the child (by its pidfd: never a recycled pid) and wait, until `deadline` at most,
        for it to have exited; kill_all then ends and reaps whatever else the task started."""
        if self.pidfd is None or self.status is not None:
            return
        try:
            signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
        except OSError:
            return
        with selectors.DefaultSelector() as sel:  # a pidfd turns readable once its process has exited
            sel.register(self.pidfd, selectors.EVENT_READ)
            sel.select(timeout=max(deadline - time.monotonic(), 0.0))

    def close(self) -> None:
        self.readers.close()
        self.sock.close()
        if self.where is not None:
            self.where.close()
        for fd in (self.output_fd, self.pidfd):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass


def death_reason(status: int, cpu_seconds: float, cpu_limit: float) -> str:
    """The catalogue key for how the task's child ended."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu_seconds >= cpu_limit - 0.05):
            return "cpu_limit"
        if sig in CRASH_SIGNALS:
            return "crashed"
        return "killed"  # by the kernel for memory, or by the task's own processes
    return "exited"

