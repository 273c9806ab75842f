"""The seccomp filter denies the same system calls as the hand-built one it replaced, in a real sandbox too.

The unit tests run the generated program on every system call number (a small classic-BPF
interpreter below) and compare what it denies with the names kept as data and with the numbers
the hand-built filter denied; the sandbox tests make the calls with ctypes inside bubblewrap.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import platform
import struct
import subprocess
from pathlib import Path

import pyseccomp
import pytest

from autograder.errors import SandboxUnavailable
from autograder.sandbox import seccomp
from autograder.sandbox.launch import Launch, bwrap_launch, check_available, spawnable

ALLOW, EPERM, ENOSYS = 0x7FFF0000, 0x00050000 | errno.EPERM, 0x00050000 | errno.ENOSYS
X32_BIT = 0x40000000
# What the hand-built filter (before libseccomp) denied: machine -> (clone, clone3, numbers).
TODAY: dict[str, tuple[int, int, set[int]]] = {
    "x86_64": (56, 435, {
        272, 308, 165, 166, 155, 250, 248, 249, 321, 298, 323, 425, 426, 427, 428, 429, 430, 431, 432, 433,
        442, 246, 320, 175, 313, 176, 163, 167, 168, 169,
    }),
    "aarch64": (220, 435, {
        97, 268, 40, 39, 41, 219, 217, 218, 280, 241, 282, 425, 426, 427, 428, 429, 430, 431, 432, 433, 442,
        104, 294, 105, 273, 106, 89, 224, 225, 142,
    }),
}
ORDINARY_CLONES = {  # flags glibc passes for fork() and pthread_create()
    "fork": 0x01200011,  # CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD
    "thread": 0x003D0F00,  # CLONE_VM | FS | FILES | SIGHAND | THREAD | SYSVSEM | SETTLS | PARENT_SETTID | ...
}


def run_bpf(program: bytes, arch: int, nr: int, args: tuple[int, ...] = (0,) * 6) -> int:
    """What a classic-BPF seccomp program returns for one system call (struct seccomp_data)."""
    data = struct.pack("=iIQ6Q", nr, arch, 0, *args)
    insns = [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        if code == 0x20:  # ld [k]
            acc = struct.unpack_from("=I", data, k)[0]
            pc += 1
        elif code == 0x54:  # and #k
            acc &= k
            pc += 1
        elif code == 0x06:  # ret #k
            return k
        elif code == 0x05:  # ja
            pc += 1 + k
        elif code in (0x15, 0x25, 0x35, 0x45):  # jeq, jgt, jge, jset
            hit = {0x15: acc == k, 0x25: acc > k, 0x35: acc >= k, 0x45: bool(acc & k)}[code]
            pc += 1 + (jt if hit else jf)
        else:
            raise AssertionError(f"unexpected instruction {code:#x} at {pc}")


@pytest.mark.parametrize("machine", sorted(seccomp.ARCHES))
def test_the_program_denies_the_names_kept_as_data(machine: str) -> None:
    arch = seccomp.ARCHES[machine]
    program = seccomp.seccomp_filter(machine)
    verdicts = {nr: run_bpf(program, arch, nr) for nr in range(2048)}
    denied = {nr for nr, verdict in verdicts.items() if verdict == EPERM}
    assert {pyseccomp.resolve_syscall(arch, nr).decode() for nr in denied} == set(seccomp.DENIED)
    clone, clone3, today = TODAY[machine]
    assert denied == today
    assert {nr for nr, verdict in verdicts.items() if verdict == ENOSYS} == {clone3}
    assert set(verdicts.values()) == {ALLOW, EPERM, ENOSYS}


@pytest.mark.parametrize("machine", sorted(seccomp.ARCHES))
def test_clone_with_a_namespace_flag_is_denied(machine: str) -> None:
    arch = seccomp.ARCHES[machine]
    program = seccomp.seccomp_filter(machine)
    clone = TODAY[machine][0]
    for name, flag in seccomp.NAMESPACE_FLAGS.items():
        for flags in (flag, flag | ORDINARY_CLONES["fork"], flag | 0xFFFF_FFFF_0000_0000):
            assert run_bpf(program, arch, clone, (flags, 0, 0, 0, 0, 0)) == EPERM, name
    for name, flags in ORDINARY_CLONES.items():
        assert run_bpf(program, arch, clone, (flags, 0, 0, 0, 0, 0)) == ALLOW, name
    assert run_bpf(program, arch, clone, (1 << 40, 0, 0, 0, 0, 0)) == ALLOW  # only the flags' 32 bits count


@pytest.mark.parametrize("machine", sorted(seccomp.ARCHES))
def test_other_abis_are_refused_entirely(machine: str) -> None:
    program = seccomp.seccomp_filter(machine)
    i386, arm, x32 = 0x40000003, 0x40000028, 0x4000003E
    for other in (i386, arm, x32) + tuple(a for m, a in seccomp.ARCHES.items() if m != machine):
        assert {run_bpf(program, other, nr) for nr in (0, 1, 3, 56, 120, 220, 435)} == {EPERM}
    if machine == "x86_64":  # x32 calls carry the native arch and bit 30 in their number
        assert {run_bpf(program, seccomp.ARCHES[machine], nr | X32_BIT) for nr in range(600)} == {EPERM}


def test_unknown_machines_get_no_filter() -> None:
    assert seccomp.seccomp_filter("sparc") == b""


# -- in a real sandbox ------------------------------------------------------------------------
PROBE = r"""
import ctypes, json, os, subprocess, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(nr, *args):
    ctypes.set_errno(0)
    result = libc.syscall(ctypes.c_long(nr), *(ctypes.c_long(a) for a in args))
    return 0 if result >= 0 else ctypes.get_errno()
asked = json.loads(sys.argv[1])
out = {name: call(nr, *args) for name, (nr, args) in asked.items()}
if "fork" in sys.argv[2:]:
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    out["fork"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    seen = []
    thread = threading.Thread(target=seen.append, args=(1,))
    thread.start()
    thread.join()
    out["thread"] = seen == [1]
    out["spawn"] = subprocess.run(["/bin/sh", "-c", "exit 5"]).returncode
print(json.dumps(out))
"""


def _free_uid(first: int = 62400, choices: int = 50) -> int:
    """A uid no process uses now (outside the blocks the hostile suite takes)."""
    used: set[int] = set()
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            lines = status.read_text().splitlines()
            used |= {int(line.split()[1]) for line in lines if line.startswith("Uid:")}
        except (OSError, ValueError, IndexError):
            continue
    return next(uid for uid in range(first, first + choices) if uid not in used)


@pytest.fixture(scope="module")
def sandbox() -> Launch:
    if platform.machine() not in seccomp.ARCHES:
        pytest.skip("no seccomp filter on this machine")
    uid = _free_uid()
    try:
        check_available(uid)
    except SandboxUnavailable as exc:
        pytest.skip(f"no sandbox here: {exc}")
    return bwrap_launch(0, uid)


Calls = dict[str, tuple[int, tuple[int, ...]]]  # name -> (system call number, arguments)


def _run_inside(launch: Launch, calls: Calls, *extra: str) -> dict[str, object]:
    """Run PROBE with the worker's python, in the worker's sandbox (as check_available does)."""
    argv = list(launch.argv[: launch.argv.index("-I")]) + ["-I", "-c", PROBE, json.dumps(calls), *extra]
    if not launch.seccomp and "--seccomp" in argv:  # the control: the same sandbox, no filter
        at = argv.index("--seccomp")
        del argv[at : at + 2]
    cut = dataclasses.replace(launch, argv=tuple(argv))
    with spawnable(cut) as (argv, fds):
        done = subprocess.run(argv, capture_output=True, timeout=60, env=launch.env, pass_fds=fds)
    assert done.returncode == 0, done.stderr.decode()
    result: dict[str, object] = json.loads(done.stdout)
    return result


def _number(name: str) -> int:
    nr: int = pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, name)
    assert nr >= 0, name
    return nr


CLONE_NEWUSER, CLONE_NEWNS, SIGCHLD = 0x10000000, 0x00020000, 17
# Unprivileged calls: without the filter these fail otherwise (bad arguments), or succeed.
UNPRIVILEGED: dict[str, tuple[int, ...]] = {
    "keyctl": (0, -3, 0),  # KEYCTL_GET_KEYRING_ID of the session keyring, do not create
    "add_key": (0, 0, 0, 0, 0),
    "request_key": (0, 0, 0, 0),
    "io_uring_setup": (0, 0),
    "perf_event_open": (0, 0, 0, 0, 0),
    "clone3": (0, 0),
}


def test_the_denied_calls_fail_with_eperm_in_the_sandbox(sandbox: Launch) -> None:
    calls = {name: (_number(name), (0,) * 6) for name in seccomp.DENIED}
    calls["unshare(CLONE_NEWUSER)"] = (_number("unshare"), (CLONE_NEWUSER,))
    calls["unshare(CLONE_NEWNS)"] = (_number("unshare"), (CLONE_NEWNS,))
    calls["clone(CLONE_NEWUSER)"] = (_number("clone"), (CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0))
    calls["clone3"] = (_number("clone3"), (0, 0))
    seen = _run_inside(sandbox, calls, "fork")
    assert {name: seen[name] for name in calls if name != "clone3"} == {
        name: errno.EPERM for name in calls if name != "clone3"
    }
    assert seen["clone3"] == errno.ENOSYS  # so that libc falls back to clone
    # Ordinary processes and threads still start (glibc falls back from clone3 to clone).
    assert (seen["fork"], seen["thread"], seen["spawn"]) == (7, True, 5)


def test_without_the_filter_those_calls_would_not_fail_so(sandbox: Launch) -> None:
    """The control: EPERM above comes from the filter, not from the uid or the dropped capabilities."""
    calls = {name: (_number(name), args) for name, args in UNPRIVILEGED.items()}
    bare = dataclasses.replace(sandbox, seccomp=b"")
    filtered, unfiltered = _run_inside(sandbox, calls), _run_inside(bare, calls)
    assert filtered == {**{name: errno.EPERM for name in UNPRIVILEGED}, "clone3": errno.ENOSYS}
    assert unfiltered["clone3"] in (errno.EFAULT, errno.EINVAL)
    assert any(unfiltered[name] != errno.EPERM for name in UNPRIVILEGED if name != "clone3"), unfiltered


def test_the_filter_is_built_once_per_process() -> None:
    assert seccomp.seccomp_filter() is seccomp.seccomp_filter()
