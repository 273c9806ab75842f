"""The seccomp filter bwrap loads into every sandbox (host side): the system calls a task is refused."""

from __future__ import annotations

import platform
import struct

# -- seccomp: the few system calls a task never needs and the kernel would rather not see --------
# Namespaces (a user namespace would give the task "root" over its own mounts), the kernel
# keyring (not namespaced), and interfaces with a long record of kernel bugs. Everything else
# is allowed: the uid, the namespaces and the rlimits are the sandbox, this only narrows it.
# machine -> (seccomp audit arch, clone, clone3, denied system call numbers)
_SYSCALLS: dict[str, tuple[int, int, int, tuple[int, ...]]] = {
    "x86_64": (0xC000003E, 56, 435, (
        272, 308, 165, 166, 155, 250, 248, 249, 321, 298, 323, 425, 426, 427, 428, 429, 430, 431, 432, 433,
        442, 246, 320, 175, 313, 176, 163, 167, 168, 169,
    )),
    "aarch64": (0xC00000B7, 220, 435, (
        97, 268, 40, 39, 41, 219, 217, 218, 280, 241, 282, 425, 426, 427, 428, 429, 430, 431, 432, 433, 442,
        104, 294, 105, 273, 106, 89, 224, 225, 142,
    )),
}
_NAMESPACE_FLAGS = 0x7E020000  # CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
_X32_BIT = 0x40000000


def seccomp_filter(machine: str | None = None) -> bytes:
    """A classic-BPF seccomp program (as bwrap --seccomp reads it), or b"" on other machines.

    Denied calls fail with EPERM; clone3 fails with ENOSYS so that libc falls back to clone, whose
    flags a filter can see; clone with a namespace flag fails with EPERM; other ABIs (i386, x32)
    are refused entirely.
    """
    table = _SYSCALLS.get(machine or platform.machine())
    if table is None:
        return b""
    arch, clone, clone3, deny = table
    ld, jeq, jset, ret = 0x20, 0x15, 0x45, 0x06
    allow, eperm, enosys = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38
    # Layout: header, one jeq per denied call, clone3, clone, allow, clone-flags check, deny, enosys.
    deny_at = 5 + len(deny) + 2 + 1 + 3  # index of the "deny" return
    program: list[tuple[int, int, int, int]] = [
        (ld, 0, 0, 4),  # architecture
        (jeq, 1, 0, arch),
        (ret, 0, 0, eperm),
        (ld, 0, 0, 0),  # system call number
    ]
    if arch == 0xC000003E:
        program.append((jset, deny_at - 5, 0, _X32_BIT))
    else:
        program.append((jeq, 0, 0, 0))  # keep the layout: a jump of 0
    for index, number in enumerate(deny):
        here = 5 + index
        program.append((jeq, deny_at - here - 1, 0, number))
    here = len(program)
    program.append((jeq, deny_at + 1 - here - 1, 0, clone3))
    here = len(program)
    program.append((jeq, 1, 0, clone))
    program.append((ret, 0, 0, allow))
    program.append((ld, 0, 0, 16))  # clone's flags (low half of the first argument)
    program.append((jset, 1, 0, _NAMESPACE_FLAGS))
    program.append((ret, 0, 0, allow))
    assert len(program) == deny_at
    program.append((ret, 0, 0, eperm))
    program.append((ret, 0, 0, enosys))
    return b"".join(struct.pack("=HBBI", *insn) for insn in program)
