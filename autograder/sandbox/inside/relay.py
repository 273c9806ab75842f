"""The relay, inside the sandbox: one per submission, it speaks with the grader and runs each task's child."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import selectors
import socket
import sys
import tempfile
import time
from typing import Any, BinaryIO, Protocol

from autograder.sandbox import codec
from autograder.sandbox.inside.child import MAX_LINE, Child, Frame, child_main, death_reason
from autograder.sandbox.inside.cleanup import (
    CLEANUP_SECONDS,
    PR_SET_CHILD_SUBREAPER,
    kill_all,
    name_process,
    prctl,
    wipe,
)
from autograder.sandbox.inside.clock import TaskClock
from autograder.sandbox.inside.whereabouts import told_where


class Template(Protocol):
    """What a relay uses of the template it was forked from (server.Template)."""

    out: BinaryIO
    scratch: str
    wiped: list[str]
    compiled: dict[str, Any]
    sandboxed: bool
    pid_namespace: bool

MAX_NAME = 255
WHERE_WAIT = 1.0  # seconds a task past its time has to say where it is, before it is killed
# How a relay ended, as its exit code (the template acts on it).
RELAY_DONE = 0  # it answered its last request and left nothing behind
RELAY_FAILED = 1  # it died before answering (killed by the task's own processes, or a bug)
RELAY_QUIT = 3  # the grader has gone or asked the worker to stop
RELAY_STUCK = 4  # it answered, but could not kill or wipe everything


def send(out: Any, message: dict[str, Any], prefix: bytes = b"") -> None:
    out.write(prefix + json.dumps(message).encode() + b"\n")
    out.flush()


# -- the relay: one task ------------------------------------------------------------------------
class Relay:
    """Serves the tasks of one submission, one after the other, then exits.

    Each task runs in its own child, killed and wiped after it; the relay itself ends with the
    submission (or with a task that was lost), so no student's files outlive their grading in
    any process that a later student's code is forked from."""

    def __init__(self, template: Template, probes_w: int):
        self.template = template
        self.out = template.out
        self.inp = sys.stdin.buffer
        self.probes_w = probes_w
        self.child: Child | None = None
        self.request_id: Any = None
        self.finished = False  # the task's last request was answered (the relay may end)
        self.opened = False
        self.clean = True  # everything the task started is gone (known once it is finished)
        self.budget = 0.0  # seconds of the task's limit left, on its own clock (clock.TaskClock)
        self.cpu_limit = 0.0
        self.output_limit = 65536
        self.cpu: float | None = None  # CPU seconds the task's last child used, once it is reaped

    def serve(self) -> int:
        name_process(b"ag-relay")
        prctl(PR_SET_CHILD_SUBREAPER, 1)  # orphans of the task become ours, to be killed and reaped
        while True:
            line = self.inp.readline()
            if not line:
                self._finish()
                return RELAY_QUIT
            try:
                request = json.loads(line)
            except ValueError:
                continue
            if type(request) is not dict:
                continue
            try:
                payload = self.inp.read(sum(codec.blob_sizes(request))) if codec.BLOBS in request else b""
            except ValueError:
                continue
            self.request_id = request.get("id")
            self.finished = False
            op = request.get("op")
            if op == "open" and not self.opened:
                self.opened = True
                if self._open(request):
                    continue
            elif op == "call" and self.child is not None:
                if self._call(request, line, payload):
                    continue
            elif op == "close":
                output, dropped = self._take_output()
                clean = self._finish()
                self._reply({"closed": True, "output": output, "dropped": dropped, "cpu": self.cpu})
                self.finished = True
                if not clean:
                    return RELAY_STUCK
                self.opened = False  # ready for this student's next task
                continue
            elif op == "end" and not self.opened:
                self._reply({"ended": True})
                self.finished = True
                return RELAY_DONE
            elif op == "quit":
                self._finish()
                return RELAY_QUIT
            else:  # a request out of order (stale after a lost task)
                clean = self._finish()
                self._reply({"lost": "no_task", "detail": "", "output": ""})
                self.finished = True
                return RELAY_DONE if clean else RELAY_STUCK
            return RELAY_DONE if self.clean else RELAY_STUCK  # the task was lost: a fresh relay goes on

    # -- replies -----------------------------------------------------------------------------
    def _reply(self, message: dict[str, Any]) -> None:
        send(self.out, {"id": self.request_id, **message})

    def _reply_raw(self, key: str, frame: Frame) -> None:
        # The child's line was checked to be one JSON object; it is forwarded without re-encoding,
        # with the sizes of its raw part (checked too) where the grader reads them.
        line, _, sizes, payload = frame
        # `left`: the task's own time still unspent, which the grader's session waits on (not wall time).
        head = b'{"id":' + json.dumps(self.request_id).encode()
        head += b',"left":' + json.dumps(self.budget).encode()
        if sizes:
            head += b',"' + codec.BLOBS.encode() + b'":' + json.dumps(sizes).encode()
        self.out.write(head + b',"' + key.encode() + b'":' + line + b"}\n" + payload)
        self.out.flush()

    # -- the task ----------------------------------------------------------------------------
    def _open(self, request: dict[str, Any]) -> bool:
        template = self.template
        work = tempfile.mkdtemp(prefix="task-", dir=template.scratch)
        for name, data in request["files"].items():
            if not name or "/" in name or "\0" in name or name.startswith(".") or len(name) > MAX_NAME:
                continue
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
            fd = os.open(os.path.join(work, name), flags, 0o644)
            with open(fd, "wb") as handle:
                handle.write(base64.b64decode(data))
        limits = request["limits"]
        self.output_limit = int(limits["output_kb"]) * 1024
        self.budget = float(limits["wall"])  # seconds the child may spend working, all calls together
        self.cpu_limit = max(1, int(limits["cpu"]))
        self.cpu = None
        source = request["probes"]
        probes_code = template.compiled.get(source)
        if probes_code is None:  # compile once per worker: tell the template (it never reads requests)
            from autograder.sandbox.inside.runtime import compile_probes

            probes_code = template.compiled[source] = compile_probes(source)
            if self.probes_w >= 0:
                try:
                    os.write(self.probes_w, source.encode())
                except OSError:
                    pass
        if self.probes_w >= 0:
            os.close(self.probes_w)
            self.probes_w = -1
        parent_sock, child_sock = socket.socketpair()
        where_parent, where_child = socket.socketpair()
        out_r, out_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                parent_sock.close()
                where_parent.close()
                os.close(out_r)
                child_main(child_sock, out_w, work, request, probes_code, template.sandboxed, where_child)
            finally:
                os._exit(70)
        child_sock.close()
        where_child.close()
        os.close(out_w)
        os.set_blocking(out_r, False)
        parent_sock.setblocking(False)
        self.child = Child(pid, parent_sock, out_r, where_parent)
        frame = self._await_frame("import")
        if frame is None:
            return False
        if type(frame[1].get("imported")) is not bool or frame[2]:
            self._lost("protocol", "import")
            return False
        self._reply_raw("opened", frame)
        return True

    def _call(self, request: dict[str, Any], line: bytes, payload: bytes) -> bool:
        child = self.child
        assert child is not None
        probe = str(request.get("probe", "?"))
        # The grader's own line goes on as it came (it parsed as one JSON object), not encoded again:
        # the child reads its probe, seed and kwargs, and the sizes of its raw part, from it.
        # One clock from the request to its answer: the child's time is read from the kernel twice a
        # call (at the start and the end), and in between only near the limit (TaskClock.remaining).
        clock = TaskClock(child.pid).start()
        sent = self._send_to_child(line.rstrip(b"\n") + b"\n" + payload, clock)
        if sent is not True:
            self.budget = max(self.budget - clock.charged(), 0.0)
            self._lost(sent or "time_limit", probe, ask=not sent)
            return False
        frame = self._await_frame(probe, clock)
        if frame is None:
            return False
        self._reply_raw("answer", frame)
        return True

    def _send_to_child(self, data: bytes, clock: TaskClock) -> bool | str:
        """Write a request to the child without ever blocking past the task's budget."""
        child = self.child
        assert child is not None
        view = memoryview(data)
        with contextlib.ExitStack() as stack:
            sel: selectors.BaseSelector | None = None  # only once the socket's buffer is full
            while True:
                try:
                    view = view[child.sock.send(view) :]  # non-blocking
                except BlockingIOError:
                    pass
                except OSError:
                    child.sock_open = False
                    return "protocol" if not self._wait_exit(clock) else self._reason()
                if not view:
                    return True
                if sel is None:
                    sel = stack.enter_context(selectors.DefaultSelector())
                    sel.register(child.sock, selectors.EVENT_WRITE)
                while True:
                    remaining = clock.remaining(self.budget)
                    if remaining <= 0:
                        return False
                    if sel.select(timeout=min(remaining, 0.5)):
                        break
                    if child.reap():
                        return self._reason()

    def _await_frame(self, probe: str, clock: TaskClock | None = None) -> Frame | None:
        """Wait for one message from the child within the task's budget, reading its output meanwhile;
        `clock`: the one started when the request was sent (charged here once, at the end)."""
        child = self.child
        assert child is not None
        sel = child.readers
        tick = 1.0 if child.pidfd is not None else 0.05  # without a pidfd, its exit is polled
        # Only the time the child works counts against it, not the grader's own thinking time, nor
        # the time a busy machine kept it waiting for a CPU (clock.TaskClock).
        clock = clock or TaskClock(child.pid).start()
        try:
            while True:
                frame = child.next_frame()
                if isinstance(frame, str):
                    self._lost(frame, probe)
                    return None
                if frame is not None:
                    return frame
                remaining = clock.remaining(self.budget)
                if remaining <= 0:
                    self._lost("time_limit", probe, ask=True)
                    return None
                exited = False
                for key, _ in sel.select(timeout=min(remaining, tick)):
                    if key.data == "output":
                        if not self._drain_output():
                            sel.unregister(child.output_fd)
                    elif key.data == "answer":
                        child.read_answer()
                        if not child.sock_open:
                            sel.unregister(child.sock)
                    else:
                        exited = True
                if exited or (child.pidfd is None and child.reap()):
                    # What it wrote before it ended still counts; then it is gone.
                    while child.sock_open and len(child.buffer) <= MAX_LINE and child.read_answer():
                        pass
                    frame = child.next_frame()
                    if isinstance(frame, str):
                        self._lost(frame, probe)
                        return None
                    if frame is not None:
                        return frame
                    child.reap()
                    self._lost(self._reason(), probe)
                    return None
        finally:
            self.budget = max(self.budget - clock.charged(), 0.0)

    def _drain_output(self) -> bool:
        """Keep the first output_kb of the child's stdout/stderr; False once the pipe is closed."""
        child = self.child
        assert child is not None
        while True:
            try:
                chunk = os.read(child.output_fd, 65536)
            except BlockingIOError:
                return True
            except OSError:
                child.output_open = False
                return False
            if not chunk:
                child.output_open = False
                return False
            room = max(self.output_limit - len(child.output), 0)
            child.output += chunk[:room]
            child.output_dropped += len(chunk) - min(room, len(chunk))

    def _wait_exit(self, clock: TaskClock) -> bool:
        child = self.child
        assert child is not None
        while clock.remaining(self.budget) > 0:
            if child.reap():
                return True
            time.sleep(0.01)
        return False

    def _reason(self) -> str:
        child = self.child
        assert child is not None
        if child.status is None:
            return "protocol"  # it closed its channel but kept running
        status, cpu = child.status
        return death_reason(status, cpu, self.cpu_limit)

    def _take_output(self) -> tuple[str, int]:
        if self.child is None:
            return "", 0
        if self.child.output_open:
            self._drain_output()
        return bytes(self.child.output).decode("utf-8", "replace"), self.child.output_dropped

    def _lost(self, reason: str, probe: str, ask: bool = False) -> None:
        """End the task's child and say why; `ask`: it is still running (its time is up), so it is
        asked where the student's code is before it is killed. A CPU limit's handler said so itself."""
        where = None
        if self.child is not None and self.child.where is not None and (ask or reason == "cpu_limit"):
            where = told_where(self.child.where, WHERE_WAIT if ask else 0.1, ask)
        output, _ = self._take_output()
        self.clean = self._finish()
        self._reply({"lost": reason, "detail": probe, "output": output, "where": where, "cpu": self.cpu})
        self.finished = True

    def _finish(self) -> bool:
        """Kill everything the task started and wipe its files; True when nothing is left."""
        deadline = time.monotonic() + CLEANUP_SECONDS
        if self.child is not None:
            self.child.kill(deadline)  # its end is watched on its pidfd: no polling for the common case
            # Reaped here, before kill_all reaps the rest: its own CPU time (threads included) is
            # reported, so what a task's children used in all can be told (task_runs's bound).
            self.cpu = self.child.status[1] if self.child.reap() and self.child.status else None
        killed = kill_all(self.template.pid_namespace, deadline)
        if self.child is not None:
            self.child.close()
            self.child = None
        wiped = all(wipe(folder, deadline) for folder in self.template.wiped)
        self.clean = killed and wiped
        return self.clean

