"""Cleaning up after a task, inside the sandbox: kill every process it started, wipe its files."""

from __future__ import annotations

import ctypes
import os
import signal
import stat
import time
from typing import Any

CLEANUP_SECONDS = 10.0  # killing and wiping after a task; past this the whole sandbox is given up
# prctl options: the subreaper makes every orphan of a task ours (so kill_all reaches it); the
# other two keep the sandbox's processes from tracing one another or outliving their parent.
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_NAME = 15
PR_SET_CHILD_SUBREAPER = 36
_libc: Any = None


def prctl(option: int, value: int) -> int:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return int(_libc.prctl(option, value, 0, 0, 0))


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
    pause = 0.0002  # a killed process is gone in a few milliseconds: look again soon, then less often
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
        time.sleep(pause)
        pause = min(pause * 2, 0.002)


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



def name_process(name: bytes) -> None:
    """This process's name as ps, top and perf show it (at most 15 bytes): which part of the worker it
    is, so that an admin (or a profile) tells the relays and the tasks' children from the rest."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    _libc.prctl(PR_SET_NAME, ctypes.c_char_p(name[:15]), 0, 0, 0)
