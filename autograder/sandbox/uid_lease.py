"""Which uid a sandboxed worker runs as: its slot's, unless another grading process holds that one."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

# Where root's grading processes hold their uids: in /run (root's own), never a folder others can
# write, so nobody can take or fake a lease.
LEASES = Path("/run/autograder-uids")
# Another process's workers move by whole thousands: the service's language pools already use
# uid_base + 100 * k for themselves (service.queue.UID_STRIDE).
STRIDE = 1000
TRIES = 30

_held: dict[int, tuple[int, int]] = {}  # wanted uid -> (uid this process holds for it, lock fd)


def leased_uid(wanted: int) -> int:
    """The uid a worker that wants `wanted` runs as: `wanted` itself unless another process on this
    machine holds it (two graders sharing a uid would share its process limit, RLIMIT_NPROC, and
    one's fork bomb would starve the other), else the next free one STRIDE apart.

    The lease is an flock held until this process ends (the kernel drops it then, however it
    ends); a process asking again for the same uid gets the one it holds."""
    if wanted in _held:
        return _held[wanted][0]
    if os.geteuid() != 0:
        return wanted  # unprivileged workers run as 65534 in a user namespace of their own
    try:
        LEASES.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        return wanted
    for k in range(TRIES):
        uid = wanted + k * STRIDE
        try:
            fd = os.open(LEASES / str(uid), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError:
            return wanted
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # held by another process, or by this one for another slot
            os.close(fd)
            continue
        _held[wanted] = (uid, fd)
        return uid
    return wanted  # every lease taken: share, as before leases existed
