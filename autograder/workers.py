"""Grader side of a warm worker: start it, send it requests, and never wait longer than allowed."""

from __future__ import annotations

import base64
import json
import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Any

from . import codec
from .checks import StudentCodeError, WorkerLost
from .config import TaskConfig
from .errors import WorkerProtocolError
from .sandbox import Launch
from .session import call_seed, unpack_answer

STARTUP_TIMEOUT = 120.0
GRACE = 5.0  # seconds past the task's budget before the grader kills the whole sandbox
MAX_REPLY = 96 * 1024 * 1024
NPROC_LIMIT = 64


@dataclass(frozen=True)
class OpenResult:
    """What happened when the student's module was imported."""

    imported: bool
    error: dict[str, str]


class WorkerProcess:
    """One warm worker (a sandbox with torch imported) serving tasks one at a time."""

    def __init__(self, launch: Launch):
        self.launch = launch
        self.proc: subprocess.Popen[bytes] | None = None
        self.buffer = b""
        self.starts = 0

    # -- process management ---------------------------------------------------------------
    def start(self) -> None:
        self.stop()
        self.starts += 1
        self.proc = subprocess.Popen(
            self.launch.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=self.launch.env,
            start_new_session=True,
            close_fds=True,
        )
        self.buffer = b""
        hello = self._read(time.monotonic() + STARTUP_TIMEOUT)
        if hello is None or not hello.get("ready"):
            self.stop()
            raise WorkerProtocolError(
                "the worker did not start: check that `import torch` works in .venv and that the "
                "sandbox can run (autograder doctor)"
            )

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream:
                stream.close()
        self.proc = None

    def ensure(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            self.start()

    # -- transport ------------------------------------------------------------------------
    def _send(self, message: dict[str, Any]) -> bool:
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(message).encode() + b"\n")
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def _read(self, deadline: float) -> dict[str, Any] | None:
        """One JSON line from the worker, or None if it died, lied about framing or ran out of time."""
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self.buffer:
                if len(self.buffer) > MAX_REPLY:
                    return None
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not sel.select(timeout=remaining):
                    return None
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return None
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            message = codec.decode(line)
        except (ValueError, KeyError, TypeError):
            return None
        return message if type(message) is dict else None

    def request(self, message: dict[str, Any], budget: float) -> dict[str, Any] | None:
        """Send a request and wait for its reply; on silence, kill and restart the worker."""
        self.ensure()
        if not self._send(message):
            self.stop()
            return None
        reply = self._read(time.monotonic() + budget + GRACE)
        if reply is None:
            self.stop()  # the next task gets a fresh sandbox
        return reply


class SandboxSession:
    """A TaskSession over a WorkerProcess: one student file imported in a fresh limited child."""

    def __init__(self, worker: WorkerProcess, task: TaskConfig):
        self.worker = worker
        self.task = task.id
        self.config = task
        self.counter = 0
        self.lost: WorkerLost | None = None
        self.output = ""
        self.opened: OpenResult | None = None

    def open(self, files: dict[str, bytes], probes_source: str) -> OpenResult:
        limits = {
            "cpu": self.config.cpu_limit,
            "wall": self.config.time_limit,
            "memory_mb": self.config.memory_mb,
            "output_kb": self.config.output_kb,
            "nproc": NPROC_LIMIT if self.worker.launch.sandboxed else 0,
        }
        request = {
            "op": "open",
            "task": self.task,
            "module": self.config.module,
            "files": {name: base64.b64encode(data).decode() for name, data in sorted(files.items())},
            "probes": probes_source,
            "limits": limits,
        }
        self.deadline = time.monotonic() + self.config.time_limit
        reply = self.worker.request(request, self.config.time_limit)
        result = self._opened(reply)
        self.opened = result
        return result

    def _opened(self, reply: dict[str, Any] | None) -> OpenResult:
        if reply is None:
            self.lost = WorkerLost("time_limit", "import")
            return OpenResult(False, {})
        if "lost" in reply:
            self.lost = WorkerLost(str(reply["lost"]), "import")
            self.output = str(reply.get("output", ""))
            return OpenResult(False, {})
        status = reply.get("opened")
        if type(status) is not dict:
            self.lost = WorkerLost("protocol", "import")
            return OpenResult(False, {})
        if status.get("imported") is True:
            return OpenResult(True, {})
        err = status.get("error") if type(status.get("error")) is dict else {}
        return OpenResult(False, {k: str(v) for k, v in err.items()})

    def call(self, probe: str, /, **kwargs: Any) -> Any:
        if self.lost is not None:
            raise self.lost
        if self.opened is None or not self.opened.imported:
            err = self.opened.error if self.opened else {}
            raise StudentCodeError("import", err.get("type", "ImportError"), err.get("message", ""), err.get("where", ""))
        self.counter += 1
        message = {
            "op": "call",
            "probe": probe,
            "kwargs": json.loads(codec.encode(kwargs)),
            "seed": call_seed(self.task, probe, self.counter),
        }
        budget = max(self.deadline - time.monotonic(), 0.0)
        reply = self.worker.request(message, budget)
        if reply is None:
            self.lost = WorkerLost("time_limit", probe)
            raise self.lost
        if "lost" in reply:
            self.output = str(reply.get("output", ""))
            self.lost = WorkerLost(str(reply["lost"]), str(reply.get("detail", probe)))
            raise self.lost
        if "answer" not in reply:
            self.lost = WorkerLost("protocol", probe)
            raise self.lost
        return unpack_answer(probe, reply["answer"])

    def close(self) -> str:
        """End the task: everything it started is killed; returns its captured output."""
        if self.worker.proc is None or self.lost is not None:
            return self.output
        reply = self.worker.request({"op": "close"}, 10.0)
        if reply and reply.get("closed"):
            self.output = str(reply.get("output", ""))
            if reply.get("dropped"):
                self.output += f"\n... [{reply['dropped']} more bytes of output dropped]"
        return self.output
