"""The grader-side handle on a task's sandboxed worker (the in-process one is sandbox/local.py)."""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass
from typing import Any

from autograder.checks import StoppedAt, StudentCodeError, WorkerLost
from autograder.config import TaskConfig
from autograder.sandbox import codec
from autograder.sandbox.client import (
    CLOSE_BUDGET,
    FAILURES,
    NPROC_LIMIT,
    OUTPUT_LIMIT,
    WorkerProcess,
    clean_error,
    clean_text,
)
from autograder.sandbox.inside.clock import MAX_STRETCH
from autograder.sandbox.local import call_seed, unpack_answer


@dataclass(frozen=True)
class OpenResult:
    """What happened when the student's module was imported."""

    imported: bool
    error: dict[str, str]


class SandboxSession:
    """A TaskSession over a WorkerProcess: one student file imported in a fresh limited child."""

    def __init__(self, worker: WorkerProcess, task: TaskConfig, budget: float | None = None,
                 counter: int = 0):
        """`budget`: seconds of the task's own time this run may use (default: its time limit);
        `counter`: calls the task made before this run (their seeds go on from there)."""
        self.worker = worker
        self.task = task.id
        self.config = task
        self.counter = counter
        self.lost: WorkerLost | None = None
        self.output = ""
        self.opened: OpenResult | None = None
        self.budget = float(task.time_limit if budget is None else budget)
        self.run_budget = self.budget
        self.cpu: float | None = None  # CPU seconds its child used in all, as its relay reaped it

    def open(self, files: dict[str, bytes], probes_source: str) -> OpenResult:
        limits = {
            "cpu": self.config.cpu_limit,
            "wall": self.run_budget,
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
        # A (re)start of the worker is the grader's time, not the task's.
        self.worker.ensure()
        self.worker.limit_task(self.config.memory_mb)
        self.budget = self.run_budget  # worker time left; the grader's own time is free
        reply = self._timed_request(request)
        result = self._opened(reply)
        self.opened = result
        return result

    def _timed_request(self, message: dict[str, Any], payload: bytes = b"") -> dict[str, Any] | None:
        """The relay counts the task's limit on the task's own clock (a busy machine's wait for a CPU
        is not charged: sandbox/inside/clock.py) and says what is left; this process waits at most
        MAX_STRETCH times that in wall time, the bound the relay's clock keeps too."""
        started = time.monotonic()
        reply = self.worker.request(message, self.budget * MAX_STRETCH, payload)
        spent = time.monotonic() - started
        left = reply.get("left") if reply is not None else None
        if type(left) in (int, float) and 0.0 <= left <= self.budget:  # type: ignore[operator]
            self.budget = float(left)  # type: ignore[arg-type]
        else:  # a lost task, or a worker that did not say: the wall time it took
            self.budget = max(self.budget - spent, 0.0)
        return reply

    def _failed(self, where: str) -> WorkerLost:
        return WorkerLost(FAILURES.get(self.worker.failure, "killed"), where)

    def _took(self, reply: dict[str, Any]) -> None:
        cpu = reply.get("cpu")
        if type(cpu) in (int, float) and cpu >= 0:  # type: ignore[operator]
            self.cpu = float(cpu)  # type: ignore[arg-type]

    def _lost_reply(self, reply: dict[str, Any], where: str) -> WorkerLost:
        self.output = clean_text(reply.get("output", ""), OUTPUT_LIMIT)
        self._took(reply)
        detail = reply.get("detail")
        return WorkerLost(clean_text(reply["lost"], 100), clean_text(detail, 200) if detail else where,
                          StoppedAt.from_plain(reply.get("where")))

    def _opened(self, reply: dict[str, Any] | None) -> OpenResult:
        if reply is None:
            self.lost = self._failed("import")
            return OpenResult(False, {})
        if "lost" in reply:
            self.lost = self._lost_reply(reply, "import")
            return OpenResult(False, {})
        status = reply.get("opened")
        if type(status) is dict and "tampered" in status:
            self.lost = WorkerLost("tampered", clean_text(status["tampered"], 300))
            return OpenResult(False, {})
        if type(status) is not dict or type(status.get("imported")) is not bool:
            self.lost = WorkerLost("protocol", "import")
            return OpenResult(False, {})
        if status["imported"]:
            return OpenResult(True, {})
        return OpenResult(False, clean_error(status.get("error")))

    def call(self, probe: str, /, **kwargs: Any) -> Any:
        if self.lost is not None:
            raise self.lost
        if self.opened is None or not self.opened.imported:
            err = self.opened.error if self.opened else {}
            kind = err.get("type", "ImportError")
            raise StudentCodeError("import", kind, err.get("message", ""), err.get("where", ""))
        self.counter += 1
        plain, payload = codec.plain({"kwargs": kwargs})  # arrays travel raw, after the line
        message = {"op": "call", "probe": probe, "seed": call_seed(self.task, probe, self.counter), **plain}
        reply = self._timed_request(message, payload)
        if reply is None:
            self.lost = self._failed(probe)
            raise self.lost
        if "lost" in reply:
            self.lost = self._lost_reply(reply, probe)
            raise self.lost
        answer = reply.get("answer")
        if type(answer) is not dict:
            self.lost = WorkerLost("protocol", probe)
            raise self.lost
        if "error" in answer:
            answer = {**answer, "error": clean_error(answer["error"])}
        if "tampered" in answer:
            self.lost = WorkerLost("tampered", clean_text(answer["tampered"], 300))
            raise self.lost
        return unpack_answer(probe, answer)

    def close(self) -> str:
        """End the task: everything it started is killed; returns its captured output."""
        # A lost task was already ended by the relay; a tampered one is ended here like any other
        # (the relay is sound: it was the task's own process that saw its probes change).
        if self.worker.proc is None or (self.lost is not None and self.lost.reason != "tampered"):
            return self.output
        reply = self.worker.request({"op": "close"}, CLOSE_BUDGET)
        if reply and reply.get("closed") is True:
            self.output = clean_text(reply.get("output", ""), OUTPUT_LIMIT)
            self._took(reply)
            dropped = reply.get("dropped")
            if type(dropped) is int and dropped > 0:
                self.output += f"\n... [{dropped} more bytes of output dropped]"
        return self.output
