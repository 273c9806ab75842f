"""The warm worker: imports torch once, then serves every task from a fresh fork of itself.

Runs inside the sandbox (or bare, for trusted code) as three generations of processes:

- the *template* imports torch, then only forks relays, reaps and cleans up. It never reads a
  request, so its memory never holds a student's files, outputs or answers: every task starts
  from the same clean copy of it. Sandboxed, it is PID 1, which no process of the sandbox can
  signal, and its `kill(-1)` reaches every other process of the sandbox.
- a *relay* per submission, forked from the template, speaks with the grading process on
  stdin/stdout (a JSON line per message, raw array bytes after it: see codec): for each task it
  writes the task's files, forks the task's child, checks and relays its answers within the
  task's budget, and kills everything the task started and wipes its files before it answers
  the task's last request. It exits with the submission (or with a task that was lost), so no
  later student's code is ever forked from a process that held an earlier student's files.
- the task's *child*, forked from the relay: limits first, then it imports the one student file
  and runs probes on the inputs the grader sends.

The worker decides nothing about grades.
"""

from __future__ import annotations

import base64
import contextlib
import ctypes
import json
import os
import resource
import selectors
import signal
import socket
import stat
import sys
import tempfile
import time
from typing import Any

from autograder.sandbox import codec

MAX_LINE = 32 * 1024 * 1024  # bytes of one answer from student code before the task is stopped
MAX_NAME = 255
CLEANUP_SECONDS = 10.0  # killing and wiping after a task; past this the whole sandbox is given up
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
F_SETPIPE_SZ = 1031
# How a relay ended, as its exit code (the template acts on it).
RELAY_DONE = 0  # it answered its last request and left nothing behind
RELAY_FAILED = 1  # it died before answering (killed by the task's own processes, or a bug)
RELAY_QUIT = 3  # the grader has gone or asked the worker to stop
RELAY_STUCK = 4  # it answered, but could not kill or wipe everything
CRASH_SIGNALS = {signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT, signal.SIGILL, signal.SIGFPE, signal.SIGSYS}
_libc: Any = None
Frame = tuple[bytes, dict[str, Any], list[int], bytes]  # a message's line, parsed line, raw sizes, raw part


def _prctl(option: int, value: int) -> int:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return int(_libc.prctl(option, value, 0, 0, 0))


def _send(out: Any, message: dict[str, Any], prefix: bytes = b"") -> None:
    out.write(prefix + json.dumps(message).encode() + b"\n")
    out.flush()


def _vm_size() -> int:
    with open("/proc/self/status", "rb") as handle:
        for line in handle:
            if line.startswith(b"VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


# -- cleaning up -------------------------------------------------------------------------------
def _descendants(root: int) -> list[int]:
    """Every live process below `root`, from /proc (used where there is no PID namespace)."""
    found: list[int] = []
    stack = [root]
    while stack:
        pid = stack.pop()
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as handle:
                    kids = [int(k) for k in handle.read().split()]
            except (OSError, ValueError):
                continue
            found += kids
            stack += kids
    return found


def kill_all(pid_namespace: bool, deadline: float) -> bool:
    """SIGKILL every process this one started, directly or not, and reap them; True when none is left.

    In the sandbox's PID namespace `kill(-1)` reaches every process but PID 1 and the caller,
    daemons that left their session included; the caller is a subreaper, so every orphan is its
    child and "no child left" means "nothing left".
    """
    while True:
        if pid_namespace:
            try:
                os.kill(-1, signal.SIGKILL)
            except ProcessLookupError:
                pass
        else:
            for pid in _descendants(os.getpid()):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return True
            if pid == 0:
                break
        if time.monotonic() > deadline:
            return False
        time.sleep(0.002)


def _names(fd: int) -> list[str]:
    try:
        return os.listdir(fd)
    except OSError:
        return []


def wipe(folder: str, deadline: float) -> bool:
    """Delete everything inside `folder`, whatever its modes, never following a link; True when empty.

    Iterative and fd-relative, so neither deep trees nor odd permissions nor names stop it.
    """
    try:
        top = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return False
    stack: list[tuple[int, str, list[str]]] = [(top, "", _names(top))]
    try:
        while stack:
            if time.monotonic() > deadline:
                return False
            fd, _, names = stack[-1]
            if not names:
                stack.pop()
                os.close(fd)
                if stack:
                    try:
                        os.rmdir(_, dir_fd=stack[-1][0])
                    except OSError:
                        pass
                continue
            name = names.pop()
            try:
                os.unlink(name, dir_fd=fd)
                continue
            except FileNotFoundError:
                continue
            except OSError:
                pass  # a directory, most likely
            try:
                os.rmdir(name, dir_fd=fd)
                continue
            except FileNotFoundError:
                continue
            except OSError:
                pass  # not empty, or not searchable
            try:
                if not stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                    continue
                os.chmod(name, stat.S_IRWXU, dir_fd=fd)  # a directory (checked above), not a link
                sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError:
                continue
            stack.append((sub, name, _names(sub)))
    finally:
        for fd, _, _ in stack:
            os.close(fd)
    try:
        return not os.listdir(folder)
    except OSError:
        return False


# -- the task's child ---------------------------------------------------------------------------
def _child_main(
    sock: socket.socket, out_w: int, task_dir: str, request: dict[str, Any], probes_code: Any, sandboxed: bool
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
    if not sandboxed:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # bare: die with the relay
    # The task's processes are the ones the kernel kills first when the sandbox runs out of memory.
    try:
        _prctl(PR_SET_DUMPABLE, 1)  # only a dumpable process may write its own /proc files
        with open("/proc/self/oom_score_adj", "w") as handle:
            handle.write("1000")
    except OSError:
        pass
    finally:
        if sandboxed:
            _prctl(PR_SET_DUMPABLE, 0)
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
    sys.stdout = open(1, "w", buffering=1, closefd=False, errors="backslashreplace")  # noqa: SIM115
    sys.stderr = open(2, "w", buffering=1, closefd=False, errors="backslashreplace")  # noqa: SIM115
    sys.argv = [request["module"] + ".py"]

    from autograder.sandbox.inside.runtime import TaskRuntime

    runtime = TaskRuntime(task_dir, request["module"], request["probes"], probes_code)
    status = runtime.open()
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


class Child:
    """The relay's handle on the task's child: its pid, channel, output pipe and exit."""

    def __init__(self, pid: int, sock: socket.socket, output_fd: int):
        self.pid = pid
        self.sock = sock
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

    def close(self) -> None:
        self.readers.close()
        self.sock.close()
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
        self.budget = 0.0
        self.cpu_limit = 0.0
        self.output_limit = 65536

    def serve(self) -> int:
        _prctl(PR_SET_CHILD_SUBREAPER, 1)  # orphans of the task become ours, to be killed and reaped
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
                if self._call(request, payload):
                    continue
            elif op == "close":
                output, dropped = self._take_output()
                clean = self._finish()
                self._reply({"closed": True, "output": output, "dropped": dropped})
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
        _send(self.out, {"id": self.request_id, **message})

    def _reply_raw(self, key: str, frame: Frame) -> None:
        # The child's line was checked to be one JSON object; it is forwarded without re-encoding,
        # with the sizes of its raw part (checked too) where the grader reads them.
        line, _, sizes, payload = frame
        head = b'{"id":' + json.dumps(self.request_id).encode()
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
        out_r, out_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                parent_sock.close()
                os.close(out_r)
                _child_main(child_sock, out_w, work, request, probes_code, template.sandboxed)
            finally:
                os._exit(70)
        child_sock.close()
        os.close(out_w)
        os.set_blocking(out_r, False)
        parent_sock.setblocking(False)
        self.child = Child(pid, parent_sock, out_r)
        frame = self._await_frame("import")
        if frame is None:
            return False
        if type(frame[1].get("imported")) is not bool or frame[2]:
            self._lost("protocol", "import")
            return False
        self._reply_raw("opened", frame)
        return True

    def _call(self, request: dict[str, Any], payload: bytes) -> bool:
        child = self.child
        assert child is not None
        probe = str(request.get("probe", "?"))
        call = {key: request.get(key) for key in ("probe", "kwargs", "seed", codec.BLOBS) if key in request}
        started = time.monotonic()
        sent = self._send_to_child(json.dumps(call).encode() + b"\n" + payload, started + self.budget)
        self.budget = max(self.budget - (time.monotonic() - started), 0.0)
        if sent is not True:
            self._lost(sent or "time_limit", probe)
            return False
        frame = self._await_frame(probe)
        if frame is None:
            return False
        self._reply_raw("answer", frame)
        return True

    def _send_to_child(self, data: bytes, deadline: float) -> bool | str:
        """Write a request to the child without ever blocking past the deadline."""
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
                    return "protocol" if not self._wait_exit(deadline) else self._reason()
                if not view:
                    return True
                if sel is None:
                    sel = stack.enter_context(selectors.DefaultSelector())
                    sel.register(child.sock, selectors.EVENT_WRITE)
                while True:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return False
                    if sel.select(timeout=min(remaining, 0.5)):
                        break
                    if child.reap():
                        return self._reason()

    def _await_frame(self, probe: str) -> Frame | None:
        """Wait for one message from the child within the task's budget, reading its output meanwhile."""
        child = self.child
        assert child is not None
        sel = child.readers
        tick = 1.0 if child.pidfd is not None else 0.05  # without a pidfd, its exit is polled
        # Only the time the child works counts against it, not the grader's own thinking time.
        deadline = time.monotonic() + self.budget
        try:
            while True:
                frame = self._next_frame()
                if isinstance(frame, str):
                    self._lost(frame, probe)
                    return None
                if frame is not None:
                    return frame
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self._lost("time_limit", probe)
                    return None
                exited = False
                for key, _ in sel.select(timeout=min(remaining, tick)):
                    if key.data == "output":
                        if not self._drain_output():
                            sel.unregister(child.output_fd)
                    elif key.data == "answer":
                        self._read_answer()
                        if not child.sock_open:
                            sel.unregister(child.sock)
                    else:
                        exited = True
                if exited or (child.pidfd is None and child.reap()):
                    # What it wrote before it ended still counts; then it is gone.
                    while child.sock_open and len(child.buffer) <= MAX_LINE and self._read_answer():
                        pass
                    frame = self._next_frame()
                    if isinstance(frame, str):
                        self._lost(frame, probe)
                        return None
                    if frame is not None:
                        return frame
                    child.reap()
                    self._lost(self._reason(), probe)
                    return None
        finally:
            self.budget = max(deadline - time.monotonic(), 0.0)

    def _next_frame(self) -> Frame | str | None:
        """The child's next whole message; None while it is incomplete; a reason when it is unusable."""
        child = self.child
        assert child is not None
        if child.header is None:
            newline = child.buffer.find(b"\n", child.scanned)
            if newline < 0:
                child.scanned = len(child.buffer)
                return "answer_too_large" if len(child.buffer) > MAX_LINE else None
            line = bytes(child.buffer[:newline])
            del child.buffer[: newline + 1]
            child.scanned = 0
            try:
                header, size = codec.parse_header(line)
            except ValueError:
                return "protocol"
            if type(header) is not dict:
                return "protocol"
            if size + len(line) > MAX_LINE:
                return "answer_too_large"
            child.header = (line, header, codec.blob_sizes(header))
        line, header, sizes = child.header
        size = sum(sizes)
        if len(child.buffer) < size:
            return None
        payload = bytes(child.buffer[:size])
        del child.buffer[:size]
        child.header = None
        return line, header, sizes, payload

    def _read_answer(self) -> bool:
        """Read what the child sent; False when nothing more is there now (or ever: sock_open)."""
        child = self.child
        assert child is not None
        try:
            chunk = child.sock.recv(1 << 20)
        except BlockingIOError:
            return False
        except OSError:
            chunk = b""
        if not chunk:
            child.sock_open = False
            return False
        child.buffer += chunk
        return True

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

    def _wait_exit(self, deadline: float) -> bool:
        child = self.child
        assert child is not None
        while time.monotonic() < deadline:
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

    def _lost(self, reason: str, probe: str) -> None:
        output, _ = self._take_output()
        self.clean = self._finish()
        self._reply({"lost": reason, "detail": probe, "output": output})
        self.finished = True

    def _finish(self) -> bool:
        """Kill everything the task started and wipe its files; True when nothing is left."""
        deadline = time.monotonic() + CLEANUP_SECONDS
        killed = kill_all(self.template.pid_namespace, deadline)
        if self.child is not None:
            self.child.close()
            self.child = None
        wiped = all(wipe(folder, deadline) for folder in self.template.wiped)
        self.clean = killed and wiped
        return self.clean


# -- the template -------------------------------------------------------------------------------
class Template:
    """The warm, pristine parent: forks one relay per task and cleans up after it."""

    def __init__(self, sandboxed: bool):
        self.sandboxed = sandboxed
        self.pid_namespace = sandboxed and os.getpid() == 1
        self.out = sys.stdout.buffer
        self.compiled: dict[str, Any] = {}
        if sandboxed:  # /tmp (and /dev/shm if writable) are this sandbox's own
            self.scratch = tempfile.gettempdir()
            self.wiped = [self.scratch] + (["/dev/shm"] if os.access("/dev/shm", os.W_OK) else [])
        else:  # trusted code: a private folder
            self.scratch = tempfile.mkdtemp(prefix="autograder-")
            self.wiped = [self.scratch]

    def run(self) -> None:
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        # PID 1 ignores signals it has no handler for: no process of the sandbox can stop it.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        try:
            hello = {"ready": True, "pid": os.getpid(), "uid": os.getuid()}
            _send(self.out, hello if self.sandboxed else {**hello, "scratch": self.scratch})
            while self._one_task():
                pass
        except OSError:
            pass  # the grader has gone
        finally:
            kill_all(self.pid_namespace, time.monotonic() + CLEANUP_SECONDS)
            if not self.sandboxed:
                wipe(self.scratch, time.monotonic() + CLEANUP_SECONDS)
                try:
                    os.rmdir(self.scratch)
                except OSError:
                    pass

    def _one_task(self) -> bool:
        """Fork a relay, wait for it, clean up after it; False when the worker should stop."""
        probes_r, probes_w = os.pipe()
        try:
            import fcntl

            fcntl.fcntl(probes_w, F_SETPIPE_SZ, 1 << 20)
        except OSError:
            pass
        os.set_blocking(probes_w, False)
        pid = os.fork()
        if pid == 0:
            code = RELAY_FAILED
            relay = None
            try:
                os.close(probes_r)
                relay = Relay(self, probes_w)
                code = relay.serve()
            except BaseException:
                code = RELAY_STUCK if relay is not None and relay.finished else RELAY_FAILED
            finally:
                os._exit(code)
        os.close(probes_w)
        status = self._wait_for(pid)
        self._learn_probes(probes_r)
        code = os.waitstatus_to_exitcode(status)
        # The relay killed and wiped everything already when it ended normally; PID 1 makes sure.
        clean = kill_all(self.pid_namespace, time.monotonic() + CLEANUP_SECONDS)
        if code != RELAY_DONE:
            clean = clean and self._clean_up()
        if code == RELAY_QUIT:
            return False
        if code not in (RELAY_DONE, RELAY_STUCK):
            # The relay died before it could answer (the task's own processes killed it): the
            # grader learns that the task is over; the newline ends any line the relay had begun.
            _send(self.out, {"id": None, "lost": "killed", "output": ""}, prefix=b"\n")
        return clean

    def _wait_for(self, pid: int) -> int:
        """The relay's exit status. A relay stopped by the task's processes (SIGSTOP) is killed."""
        while True:
            try:
                reaped, status = os.waitpid(-1, os.WUNTRACED)
            except ChildProcessError:
                return 0
            if reaped != pid:
                continue
            if os.WIFSTOPPED(status):
                os.kill(pid, signal.SIGKILL)
                continue
            return status

    def _learn_probes(self, fd: int) -> None:
        data = bytearray()
        try:
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                data += chunk
        except OSError:
            pass
        finally:
            os.close(fd)
        if data:
            from autograder.sandbox.inside.runtime import compile_probes

            try:
                source = data.decode()
                if len(self.compiled) >= 4:
                    self.compiled.clear()
                self.compiled[source] = compile_probes(source)
            except (UnicodeDecodeError, SyntaxError, ValueError):
                pass

    def _clean_up(self) -> bool:
        """After a relay that could not clean up: wipe in a throw-away process."""
        deadline = time.monotonic() + CLEANUP_SECONDS
        pid = os.fork()
        if pid == 0:  # file names of the task never enter the template's memory
            ok = False
            try:
                ok = all(wipe(folder, deadline) for folder in self.wiped)
            finally:
                os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status) == 0


def prewarm() -> None:
    """Import torch and touch its lazily loaded parts once, so forked children start warm."""
    import numpy
    import torch

    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # a process that already ran parallel work (the grading process) keeps its own
        pass
    # The first optimizer step and the first save/load import large parts of torch lazily
    # (seconds); paying that here, once, keeps every task's child fast.
    import io

    import torch.nn.functional as F
    import torch.optim  # noqa: F401

    layer = torch.nn.Linear(2, 2)
    for optimizer in (torch.optim.Adam(layer.parameters()), torch.optim.SGD(layer.parameters(), lr=0.1)):
        optimizer.zero_grad()
        F.cross_entropy(layer(torch.zeros(1, 2)), torch.zeros(1, dtype=torch.long)).backward()
        optimizer.step()
    buffer = io.BytesIO()
    torch.save(layer.state_dict(), buffer)
    buffer.seek(0)
    torch.load(buffer, weights_only=True)
    numpy.random.default_rng(0).random(2)


MADV_HUGEPAGE = 14
MADV_COLLAPSE = 25
HUGE_PAGE = 1 << 21


def settle() -> int:
    """Make the warm process cheap to fork: returns how many bytes now sit in huge pages.

    Forking copies one page-table entry per 4 KiB page of private memory, and exiting drops
    them again: with torch's ~200 MB that is ~20 ms per process, twice per task. Collapsing
    that memory into 2 MiB pages (where the kernel allows it) makes it 512 times fewer
    entries. Freezing the objects it already holds keeps every child's garbage collector from
    visiting, and so copying, the whole heap.
    """
    import gc

    gc.collect()
    gc.freeze()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        with open("/proc/self/maps") as handle:
            maps = handle.read().splitlines()
    except (OSError, AttributeError):
        return 0
    collapsed = 0
    for line in maps:
        fields = line.split()
        if len(fields) < 5 or not fields[1].startswith("rw") or (len(fields) > 5 and fields[5] != "[heap]"):
            continue  # only private anonymous memory and the malloc heap: not files, not the stack
        low, high = (int(x, 16) for x in fields[0].split("-"))
        start, end = (low + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1), high & ~(HUGE_PAGE - 1)
        if end - start < HUGE_PAGE:
            continue
        libc.madvise(start, end - start, MADV_HUGEPAGE)
        if libc.madvise(start, end - start, MADV_COLLAPSE) == 0:  # refused without THP: no harm
            collapsed += end - start
    return collapsed


def main() -> None:
    sandboxed = "--sandboxed" in sys.argv
    if sandboxed:
        _prctl(PR_SET_DUMPABLE, 0)  # no process of the sandbox may ptrace or read our memory
    prewarm()
    from autograder.sandbox.inside import runtime  # noqa: F401  (warm for every child)

    settle()
    Template(sandboxed).run()


if __name__ == "__main__":
    main()
