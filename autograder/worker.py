"""The warm worker: imports torch once, then forks one limited child per task to run student code.

Runs inside the sandbox. It speaks JSON lines on stdin/stdout with the grading process and
relays between it and the current task's child. It decides nothing about grades.
"""

from __future__ import annotations

import base64
import ctypes
import json
import os
import resource
import selectors
import shutil
import signal
import socket
import stat
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MAX_LINE = 64 * 1024 * 1024  # bytes of one answer from student code before the task is stopped
PR_SET_DUMPABLE = 4


def _send(out: Any, message: dict[str, Any]) -> None:
    out.write(json.dumps(message).encode() + b"\n")
    out.flush()


def _send_raw_answer(out: Any, raw: bytes) -> None:
    # The child's line is forwarded inside an envelope, never decoded here.
    out.write(b'{"answer":' + raw + b"}\n")
    out.flush()


def _vm_size() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 0


def _make_writable(path: str) -> None:
    try:
        os.chmod(path, stat.S_IRWXU)
    except OSError:
        pass


def _wipe(folder: Path) -> None:
    """Remove everything a task left behind, even files it made read-only."""
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        return
    for entry in list(folder.iterdir()):
        if entry.is_dir() and not entry.is_symlink():
            for root, dirs, _files in os.walk(entry):
                for d in dirs:
                    _make_writable(os.path.join(root, d))
            _make_writable(str(entry))
            shutil.rmtree(entry)
        else:
            entry.unlink()


class Child:
    """The forked process that imports one student file and answers probes."""

    def __init__(self, pid: int, sock: socket.socket, output_fd: int):
        self.pid = pid
        self.sock = sock
        self.output_fd = output_fd
        self.buffer = b""
        self.output = bytearray()
        self.output_dropped = 0


def _child_main(
    sock: socket.socket, out_w: int, task_dir: str, request: dict[str, Any], probes_code: Any
) -> None:
    """In the forked child: limits, then import the student's module and serve probe calls."""
    limits = request["limits"]
    os.setsid()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(out_w, 1)
    os.dup2(out_w, 2)
    keep = sock.fileno()
    os.closerange(3, keep)
    os.closerange(keep + 1, 65536)
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
    sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
    sys.argv = [request["module"] + ".py"]

    from .runtime import TaskRuntime

    runtime = TaskRuntime(task_dir, request["module"], request["probes"], probes_code)
    status = runtime.open()
    stream = sock.makefile("rwb")
    stream.write(json.dumps(status).encode() + b"\n")
    stream.flush()
    from . import codec

    while True:
        line = stream.readline()
        if not line:
            break
        call = json.loads(line)
        answer = runtime.call(call["probe"], codec.decode(json.dumps(call["kwargs"]).encode()), int(call["seed"]))
        stream.write(answer)
        stream.flush()
    os._exit(0)


class Zygote:
    """The warm parent. Forks, limits and reaps task children; wipes their files."""

    def __init__(self, sandboxed: bool):
        self.sandboxed = sandboxed
        self.out = sys.stdout.buffer
        self.inp = sys.stdin.buffer
        self.child: Child | None = None
        self.deadline = 0.0
        self.output_limit = 65536
        # Sandboxed, /tmp and /dev/shm are this sandbox's own and are wiped after every task;
        # unsandboxed (trusted code), only a private folder is.
        self.scratch = Path(tempfile.mkdtemp(prefix="autograder-"))
        self.wiped = [Path(tempfile.gettempdir()), Path("/dev/shm")] if sandboxed else [self.scratch]
        self.work: Path | None = None
        self.compiled: dict[str, Any] = {}

    # -- task lifecycle -------------------------------------------------------------------
    def open_task(self, request: dict[str, Any]) -> None:
        self.close_task()
        work = Path(tempfile.mkdtemp(prefix="task-", dir=self.scratch))
        self.work = work
        for name, data in request["files"].items():
            if "/" in name or name.startswith("."):
                continue
            (work / name).write_bytes(base64.b64decode(data))
        limits = request["limits"]
        self.output_limit = int(limits["output_kb"]) * 1024
        self.deadline = time.monotonic() + float(limits["wall"])
        probes_code = self.compiled.get(request["probes"])
        if probes_code is None:  # the same probes come with every task: compile them once
            from .runtime import compile_probes

            probes_code = self.compiled[request["probes"]] = compile_probes(request["probes"])
        parent_sock, child_sock = socket.socketpair()
        out_r, out_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                parent_sock.close()
                os.close(out_r)
                _child_main(child_sock, out_w, str(work), request, probes_code)
            finally:
                os._exit(70)
        child_sock.close()
        os.close(out_w)
        os.set_blocking(out_r, False)
        self.child = Child(pid, parent_sock, out_r)
        line = self._await_line("import")
        if line is not None:
            self.out.write(b'{"opened":' + line + b"}\n")
            self.out.flush()

    def call(self, request: dict[str, Any]) -> None:
        if self.child is None:
            _send(self.out, {"lost": "no_task", "detail": ""})
            return
        payload = {"probe": request["probe"], "kwargs": request["kwargs"], "seed": request["seed"]}
        try:
            self.child.sock.sendall(json.dumps(payload).encode() + b"\n")
        except OSError:
            self._lost("exited", request["probe"])
            return
        line = self._await_line(request["probe"])
        if line is not None:
            _send_raw_answer(self.out, line)

    def close_task(self, reply: bool = False) -> None:
        output, dropped = b"", 0
        if self.child is not None:
            self._drain_output()
            output, dropped = bytes(self.child.output), self.child.output_dropped
            self._kill_everything()
            self.child.sock.close()
            os.close(self.child.output_fd)
            self.child = None
        if self.work is not None:
            for folder in self.wiped:
                _wipe(folder)
            self.scratch.mkdir(exist_ok=True)
            self.work = None
        if reply:
            _send(
                self.out,
                {"closed": True, "output": output.decode("utf-8", "replace"), "dropped": dropped},
            )

    # -- relaying ------------------------------------------------------------------------
    def _drain_output(self) -> None:
        child = self.child
        assert child is not None
        while True:
            try:
                chunk = os.read(child.output_fd, 65536)
            except BlockingIOError:
                return
            except OSError:
                return
            if not chunk:
                return
            room = self.output_limit - len(child.output)
            child.output += chunk[: max(room, 0)]
            child.output_dropped += max(len(chunk) - max(room, 0), 0)

    def _await_line(self, probe: str) -> bytes | None:
        """Wait for one line from the child within the task's wall budget, reading its output."""
        child = self.child
        assert child is not None
        sel = selectors.DefaultSelector()
        sel.register(child.sock, selectors.EVENT_READ, "answer")
        sel.register(child.output_fd, selectors.EVENT_READ, "output")
        try:
            while True:
                newline = child.buffer.find(b"\n")
                if newline >= 0:
                    line, child.buffer = child.buffer[:newline], child.buffer[newline + 1 :]
                    return line
                if len(child.buffer) > MAX_LINE:
                    self._lost("answer_too_large", probe)
                    return None
                remaining = self.deadline - time.monotonic()
                if remaining <= 0:
                    self._lost("time_limit", probe)
                    return None
                for key, _ in sel.select(timeout=min(remaining, 1.0)):
                    if key.data == "output":
                        self._drain_output()
                        continue
                    chunk = child.sock.recv(1 << 20)
                    if not chunk:
                        self._lost(self._death_reason(), probe)
                        return None
                    child.buffer += chunk
        finally:
            sel.close()

    def _death_reason(self) -> str:
        child = self.child
        assert child is not None
        try:
            _, status = os.waitpid(child.pid, 0)
        except ChildProcessError:
            return "exited"
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            if sig in (signal.SIGXCPU, signal.SIGKILL):
                return "cpu_limit"
            return "crashed" if sig in (signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT) else "killed"
        return "exited"

    def _lost(self, reason: str, probe: str) -> None:
        child = self.child
        assert child is not None
        self._drain_output()
        output = bytes(child.output).decode("utf-8", "replace")
        self.close_task()
        _send(self.out, {"lost": reason, "detail": probe, "output": output})

    def _kill_everything(self) -> None:
        """SIGKILL the task child and everything it started."""
        child = self.child
        assert child is not None
        if self.sandboxed and os.getpid() == 1:
            # PID 1 of the sandbox's namespace: kill(-1) reaches every other process in it,
            # including daemons that left the child's session.
            try:
                os.kill(-1, signal.SIGKILL)
            except ProcessLookupError:
                pass
        else:
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        while True:
            try:
                pid, _ = os.waitpid(-1, 0)
            except ChildProcessError:
                break

    # -- main loop -----------------------------------------------------------------------
    def serve(self) -> None:
        while True:
            line = self.inp.readline()
            if not line:
                self.close_task()
                return
            request = json.loads(line)
            op = request.get("op")
            if op == "open":
                self.open_task(request)
            elif op == "call":
                self.call(request)
            elif op == "close":
                self.close_task(reply=True)
            elif op == "quit":
                self.close_task()
                return


def _prewarm() -> None:
    import numpy
    import torch

    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    import torch.nn.functional  # noqa: F401
    import torch.optim  # noqa: F401

    # The first optimizer step and the first save/load import large parts of torch lazily
    # (seconds); paying that here, once, keeps every task's child fast.
    import io

    layer = torch.nn.Linear(2, 2)
    for optimizer in (torch.optim.Adam(layer.parameters()), torch.optim.SGD(layer.parameters(), lr=0.1)):
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(layer(torch.zeros(1, 2)), torch.zeros(1, dtype=torch.long)).backward()
        optimizer.step()
    buffer = io.BytesIO()
    torch.save(layer.state_dict(), buffer)
    buffer.seek(0)
    torch.load(buffer, weights_only=True)
    numpy.random.default_rng(0).random(2)


def main() -> None:
    sandboxed = "--sandboxed" in sys.argv
    if sandboxed:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # children may not ptrace or read our memory
    _prewarm()
    zygote = Zygote(sandboxed)
    _send(zygote.out, {"ready": True, "pid": os.getpid(), "uid": os.getuid()})
    zygote.serve()


if __name__ == "__main__":
    main()
