"""What a self-check leaves on the student's machine (nothing) and shows of their output (a capped part).

The checks import the student's files (no `__pycache__` written into their folder), the probes
write temporary files (kept in a private folder, removed after each task) and the student's code
prints (passed on up to OUTPUT_LIMIT characters a task, then a note saying how much was left out).
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from typing import Any, TextIO

OUTPUT_LIMIT = 64 * 1024  # characters of the student's output shown per task


class CappedOutput:
    """stdout and stderr of one task: each write passes on while the task's allowance lasts."""

    def __init__(self, limit: int = OUTPUT_LIMIT):
        self.limit = limit
        self.shown = 0
        self.dropped = 0

    def stream(self, target: TextIO) -> _CappedStream:
        return _CappedStream(target, self)


class _CappedStream(io.TextIOBase):
    def __init__(self, target: TextIO, cap: CappedOutput):
        super().__init__()
        self.target = target
        self.cap = cap

    def write(self, text: Any) -> int:
        text = str(text)
        room = max(self.cap.limit - self.cap.shown, 0)
        if room:
            self.target.write(text[:room])
        self.cap.shown += min(room, len(text))
        self.cap.dropped += max(len(text) - room, 0)
        return len(text)

    def flush(self) -> None:
        with contextlib.suppress(Exception):
            self.target.flush()

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.target, "encoding", None) or "utf-8"


@contextlib.contextmanager
def capped_output(note: Callable[[int, int], str], limit: int = OUTPUT_LIMIT) -> Iterator[CappedOutput]:
    """The student's prints pass on to this process's streams up to `limit` characters; past it,
    `note(dropped, limit)` is printed once, at the end."""
    cap = CappedOutput(limit)
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = cap.stream(saved[0]), cap.stream(saved[1])
    try:
        yield cap
    finally:
        sys.stdout, sys.stderr = saved
        if cap.dropped:
            with contextlib.suppress(Exception):
                print(note(cap.dropped, limit), file=saved[1], flush=True)


@contextlib.contextmanager
def no_bytecode() -> Iterator[None]:
    """Imports write no `__pycache__` (into the student's folder or their checks/) meanwhile."""
    saved = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        yield
    finally:
        sys.dont_write_bytecode = saved


@contextlib.contextmanager
def private_tmp(folder: str | None = None) -> Iterator[str]:
    """Temporary files of the checks and of the student's code go to a private folder: `folder`
    (emptied at the end: its maker removes it), else a new one (removed at the end)."""
    made = folder or tempfile.mkdtemp(prefix="autograder-check-")
    os.makedirs(made, exist_ok=True)
    saved_env, saved_dir = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"] = made
    tempfile.tempdir = made
    try:
        yield made
    finally:
        tempfile.tempdir = saved_dir
        if saved_env is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved_env
        if folder is None:
            shutil.rmtree(made, ignore_errors=True)
        else:
            empty_folder(made)


def empty_folder(folder: str) -> None:
    """Remove what a task left in the private temporary folder (the folder itself stays)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        path = os.path.join(folder, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(path)
