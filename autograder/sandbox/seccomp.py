"""The seccomp filter bwrap loads into every sandbox (host side): libseccomp makes it from call names."""

from __future__ import annotations

import errno
import functools
import platform
import tempfile
from typing import Any

from autograder.errors import SandboxUnavailable

# The few system calls a task never needs and the kernel would rather not see. Everything else
# is allowed: the uid, the namespaces and the rlimits are the sandbox, this only narrows it.
DENIED: tuple[str, ...] = (
    # Namespaces and mounts: a user namespace would give the task "root" over its own mounts.
    "unshare", "setns", "mount", "umount2", "pivot_root",
    "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    # The kernel keyring: not namespaced, so shared with the host.
    "keyctl", "add_key", "request_key",
    # Interfaces with a long record of kernel bugs.
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    # The machine's own business.
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "acct", "swapon", "swapoff", "reboot",
)
# clone3 takes its flags in memory, which a filter cannot read: it fails with ENOSYS, so libc
# falls back to clone, whose flags are an argument the filter checks.
NOT_IMPLEMENTED: tuple[str, ...] = ("clone3",)
# clone with any of these fails with EPERM (one rule each: the rules of a call are or-ed).
NAMESPACE_FLAGS: dict[str, int] = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
# machine -> libseccomp's token for its native ABI (the kernel's AUDIT_ARCH_*). Other ABIs of the
# same machine (i386 and x32 on x86_64) are not added: their calls get the bad-arch action.
ARCHES: dict[str, int] = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
FIX = "install libseccomp (as root: apt-get install -y libseccomp2, or run `make setup`)"


def _bindings() -> Any:
    """pyseccomp, imported on first use: it loads libseccomp.so.2, which bare grading never needs."""
    try:
        import pyseccomp
    except (ImportError, RuntimeError, OSError) as exc:
        raise SandboxUnavailable(f"libseccomp could not be loaded ({exc}): {FIX}") from None
    return pyseccomp


def seccomp_filter(machine: str | None = None) -> bytes:
    """The classic-BPF seccomp program bwrap --seccomp reads, or b"" on machines it does not cover.

    Denied calls fail with EPERM; clone3 fails with ENOSYS; clone with a namespace flag fails
    with EPERM; other ABIs (i386, x32) are refused entirely (EPERM); everything else is allowed.
    """
    return _program(machine or platform.machine())


@functools.cache  # the same bytes for every worker started: libseccomp runs once per process
def _program(machine: str) -> bytes:
    arch = ARCHES.get(machine)
    if arch is None:
        return b""
    seccomp = _bindings()
    eperm, enosys = seccomp.ERRNO(errno.EPERM), seccomp.ERRNO(errno.ENOSYS)
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    rules.set_attr(seccomp.Attr.ACT_BADARCH, eperm)
    if arch != seccomp.system_arch():  # another machine's program (tests): its ABI instead of ours
        rules.add_arch(arch)
        rules.remove_arch(seccomp.Arch.NATIVE)
    # Names are resolved on this machine and translated by libseccomp to the filter's ABI; an
    # old libseccomp that does not know a name must not leave it allowed without a word.
    for name in DENIED + NOT_IMPLEMENTED + ("clone",):
        if seccomp.resolve_syscall(seccomp.Arch.NATIVE, name) == -1:  # __NR_SCMP_ERROR
            raise SandboxUnavailable(f"this libseccomp does not know the system call {name}: {FIX}")
    for name in DENIED:
        rules.add_rule(eperm, name)
    for name in NOT_IMPLEMENTED:
        rules.add_rule(enosys, name)
    for flag in NAMESPACE_FLAGS.values():
        rules.add_rule(eperm, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    with tempfile.TemporaryFile() as handle:  # libseccomp writes to a descriptor
        rules.export_bpf(handle)
        handle.seek(0)
        return handle.read()
