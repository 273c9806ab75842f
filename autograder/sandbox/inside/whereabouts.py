"""Where a task's code was when it was stopped: the innermost frame in the student's own files.

Runs in the task's process (the sandbox's child, a self-check's fork), before the student's
module is imported. Two ways to tell, as one JSON line on a channel of its own:

- a watchdog thread, blocked on that channel, answers the process that times the task when it
  asks (just before it kills the task for its time): the main thread's innermost frame in the
  student's files (`sys._current_frames`), read while the main thread runs its loop;
- a SIGXCPU handler tells the same when the CPU limit is reached, then lets SIGXCPU end the
  process as it would have.

What it sends is a display string to whoever reads it (the student's code could write anything
on the channel): the reader checks and caps it. Imports nothing of the kit.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
import threading
from types import FrameType
from typing import Any

ASK = b"?"
CODE_LIMIT = 160  # characters of the line of code
NAME_LIMIT = 120
MAX_LINE_NUMBER = 200_000  # the source line is read only up to here


def _source_line(path: str, number: int) -> str:
    """Line `number` of the file, stripped and cut; "" when it cannot be read."""
    if not 0 < number <= MAX_LINE_NUMBER:
        return ""
    try:
        with open(path, "rb") as handle:
            for at, raw in enumerate(handle, start=1):
                if at == number:
                    text = raw[: 4 * CODE_LIMIT].decode("utf-8", "replace").strip()
                    return text[:CODE_LIMIT]
    except OSError:
        pass
    return ""


def innermost(frame: FrameType | None, task_dir: str,
              cells: frozenset[str] = frozenset()) -> dict[str, Any] | None:
    """{file, line, function, code} of the innermost frame of `frame`'s stack in `task_dir`'s files (or
    in `cells`: the code a notebook's cells defined, shown as "cell", its line read from linecache)."""
    prefixes = (task_dir + "/", task_dir + os.sep)
    depth = 0
    while frame is not None and depth < 100_000:
        code = frame.f_code
        name = code.co_filename
        number = int(frame.f_lineno or 0)
        if type(name) is str and (name.startswith(prefixes) or name in cells):
            if name in cells:
                import linecache

                shown, text = "cell", linecache.getline(name, number).strip()[:CODE_LIMIT]
            else:
                shown, text = os.path.basename(name), _source_line(name, number)
            return {"file": shown[:NAME_LIMIT], "line": number, "function": str(code.co_name)[:NAME_LIMIT],
                    "code": text}
        frame = frame.f_back
        depth += 1
    return None


class Watchdog:
    """Answers "where is the main thread?" on `channel`, from a thread of the task's process."""

    def __init__(self, channel: socket.socket, task_dir: str, cells: frozenset[str] = frozenset()):
        self.channel = channel
        self.task_dir = os.path.realpath(task_dir)
        self.cells = cells
        self.main = threading.get_ident()  # made by the task's main thread, before the student's import

    def start(self) -> Watchdog:
        threading.Thread(target=self._serve, name="autograder-whereabouts", daemon=True).start()
        signal.signal(signal.SIGXCPU, self._on_cpu_limit)
        return self

    def _tell(self, frame: FrameType | None) -> None:
        # A display string is never worth the task's process: whatever goes wrong, nothing is said.
        with contextlib.suppress(Exception):
            where = innermost(frame, self.task_dir, self.cells)
            self.channel.sendall(json.dumps(where).encode() + b"\n")

    def _serve(self) -> None:
        while True:
            try:
                asked = self.channel.recv(64)
            except OSError:
                return
            if not asked:
                return
            self._tell(sys._current_frames().get(self.main))

    def _on_cpu_limit(self, signum: int, frame: FrameType | None) -> None:
        self._tell(frame)
        signal.signal(signal.SIGXCPU, signal.SIG_DFL)  # then the limit ends the process as it would have
        os.kill(os.getpid(), signal.SIGXCPU)


# -- the side that times the task ------------------------------------------------------------
def told_where(channel: socket.socket, wait: float, ask: bool) -> dict[str, Any] | None:
    """The task's last word on where it was: asked for (`ask`), or only what it already said (its
    SIGXCPU handler), waiting at most `wait` seconds; None when it said nothing usable."""
    import selectors
    import time

    deadline = time.monotonic() + wait
    data = bytearray()
    try:
        channel.setblocking(False)
        if ask:
            channel.send(ASK)
        with selectors.DefaultSelector() as sel:
            sel.register(channel, selectors.EVENT_READ)
            while b"\n" not in data and len(data) < 8192:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not sel.select(timeout=remaining):
                    break
                chunk = channel.recv(8192)
                if not chunk:
                    break
                data += chunk
    except OSError:
        pass
    line = bytes(data).split(b"\n", 1)[0] if b"\n" in data else b""
    return checked(line)


def checked(line: bytes) -> dict[str, Any] | None:
    """A where-line as {file, line, function, code} of plain, capped values; None when it is not one."""
    try:
        value = json.loads(line.decode("utf-8", "replace")) if line else None
    except (ValueError, RecursionError):
        return None
    if type(value) is not dict:
        return None
    file, number, function, code = (value.get(k) for k in ("file", "line", "function", "code"))
    if type(file) is not str or type(number) is not int or type(function) is not str or type(code) is not str:
        return None
    return {"file": file[:NAME_LIMIT], "line": max(0, min(number, 10**9)), "function": function[:NAME_LIMIT],
            "code": code[:CODE_LIMIT]}
