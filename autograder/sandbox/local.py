"""Probes run in this very process: trusted code, or a student's own check on their own machine.

Imports nothing that needs Linux, the sandbox or a subprocess: `autograder check` runs this on
Windows and macOS too.
"""

from __future__ import annotations

import types
import zlib
from pathlib import Path
from typing import Any

from autograder.checks import StudentCodeError, WorkerLost
from autograder.sandbox import codec
from autograder.sandbox.inside.runtime import TaskRuntime


def call_seed(task: str, probe: str, counter: int) -> int:
    """Seed for one probe call: fixed by task, probe and call order, so regrading repeats."""
    return zlib.crc32(f"{task}:{probe}:{counter}".encode())


def unpack_answer(probe: str, answer: Any) -> Any:
    """Turn a worker's decoded answer into a value, or raise what the student's code raised."""
    if type(answer) is not dict:
        raise StudentCodeError(probe, "BadAnswer", "the worker sent something that is not an answer")
    if "value" in answer:
        return answer["value"]
    if "kit_error" in answer:
        raise RuntimeError(f"probe {probe!r}: {answer['kit_error']}")
    if "tampered" in answer:  # the worker saw the submission change its probes: nothing it says counts
        raise WorkerLost("tampered", str(answer["tampered"])[:300])
    err = answer.get("error") or {}
    raise StudentCodeError(
        probe, str(err.get("type", "Error")), str(err.get("message", "")), str(err.get("where", ""))
    )


class InProcessSession:
    """Runs probes in this very process. Trusted code only (reference solutions, debugging)."""

    def __init__(self, task: str, task_dir: Path, module_name: str, probes_source: str,
                 module: types.ModuleType | None = None):
        """`module`: probe this module (a notebook's names) instead of importing task_dir's file."""
        self.task = task
        self.runtime = TaskRuntime(str(task_dir), module_name, probes_source)
        self.status = self.runtime.open() if module is None else self.runtime.adopt(module)
        self.counter = 0

    def call(self, probe: str, /, **kwargs: Any) -> Any:
        if "tampered" in self.status:
            raise WorkerLost("tampered", str(self.status["tampered"]))
        if not self.status.get("imported"):
            err = self.status.get("error", {})
            raise StudentCodeError("import", err.get("type", "ImportError"), err.get("message", ""))
        self.counter += 1
        args = codec.decode(codec.encode(kwargs))  # same round trip as the sandbox
        answer = self.runtime.call(probe, args, call_seed(self.task, probe, self.counter))
        return unpack_answer(probe, codec.decode(answer))
