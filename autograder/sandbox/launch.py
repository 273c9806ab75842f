"""How a worker is started: inside bubblewrap namespaces as an unprivileged uid, or bare for trusted code."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import platform
import shutil
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from autograder.errors import SandboxUnavailable

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # the autograder package
TMPFS_BYTES = 256 * 1024 * 1024
SANDBOX_ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/tmp",
    "LANG": "C.UTF-8",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "PYTHONHASHSEED": "0",
    "TMPDIR": "/tmp",
    # malloc asks for 2 MiB pages as it grows: the warm worker is then cheap to fork (worker.settle).
    "GLIBC_TUNABLES": "glibc.malloc.hugetlb=1",
}
FIX = (
    "install bubblewrap (as root: apt-get install -y bubblewrap, or run `make setup`), "
    "or pass --no-sandbox to grade trusted code only"
)


SECCOMP_FD = "{seccomp-fd}"  # in a Launch's argv: replaced by the descriptor the filter is read from


@dataclass(frozen=True)
class Launch:
    """The command line and environment of one worker (and the seccomp filter bwrap loads)."""

    argv: tuple[str, ...]
    env: dict[str, str]
    sandboxed: bool
    seccomp: bytes = b""


@contextlib.contextmanager
def spawnable(launch: Launch) -> Iterator[tuple[list[str], tuple[int, ...]]]:
    """The argv to run and the descriptors to pass: the seccomp filter is handed over in a pipe."""
    if not launch.seccomp:
        yield list(launch.argv), ()
        return
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, launch.seccomp)  # a few hundred bytes: fits in the pipe
        os.close(write_end)
        write_end = -1
        yield [str(read_end) if arg == SECCOMP_FD else arg for arg in launch.argv], (read_end,)
    finally:
        for fd in (read_end, write_end):
            if fd >= 0:
                os.close(fd)


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


RELOCATED = Path("/opt/autograder-host-tmp")


def inside(path: Path) -> Path:
    """Where a host path is seen in the sandbox: the same place, except under /tmp.

    The sandbox's /tmp is its own tmpfs, wiped after every task, so a kit that lives under the
    host's /tmp (a CI clone, pytest's tmp_path) is bound elsewhere instead.
    """
    return RELOCATED / path.relative_to("/tmp") if path.is_relative_to("/tmp") else path


def _worker_argv(python: str, sandboxed: bool) -> list[str]:
    # -I: ignore PYTHON* variables, user site and the working directory; -B: no .pyc writes.
    kit = str(inside(PACKAGE_DIR.parent) if sandboxed else PACKAGE_DIR.parent)
    if sandboxed:
        python = str(inside(Path(python)))
    boot = (f"import sys; sys.path.insert(0, {kit!r}); "
            "from autograder.sandbox.inside.server import main; main()")
    return [python, "-I", "-B", "-c", boot] + (["--sandboxed"] if sandboxed else [])


def _read_only_paths() -> list[Path]:
    """What a worker may read: the Python runtime, the venv, and the engine package. Nothing else."""
    paths = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), PACKAGE_DIR}
    paths |= {Path(p).resolve() for p in sys.path if p and "site-packages" in p and Path(p).is_dir()}
    # Keep only outermost folders, so nested binds are not repeated.
    ordered = sorted(paths, key=lambda p: len(p.parts))
    kept: list[Path] = []
    for p in ordered:
        if not any(p == k or k in p.parents for k in kept):
            kept.append(p)
    return kept


def _bind_args(path: Path) -> list[str]:
    """Create each missing parent world-readable (bwrap would copy e.g. /root's 0700) then bind."""
    args: list[str] = []
    target = inside(path)
    for parent in reversed(target.parents):
        if str(parent) in ("/", "/usr") or parent.is_relative_to("/usr"):
            continue
        args += ["--perms", "0755", "--dir", str(parent)]
    return args + ["--ro-bind", str(path), str(target)]


def bwrap_launch(slot: int, uid_base: int) -> Launch:
    """A worker in fresh mount, PID, network, IPC and UTS namespaces, as uid `uid_base + slot`."""
    bwrap = shutil.which("bwrap")
    setpriv = shutil.which("setpriv")
    if bwrap is None or setpriv is None:
        raise SandboxUnavailable(f"bubblewrap (bwrap) or setpriv not found: {FIX}")
    uid = uid_base + slot
    argv = [
        bwrap,
        "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--die-with-parent", "--new-session", "--as-pid-1", "--clearenv",
        "--hostname", "sandbox",
        "--ro-bind", "/usr", "/usr",
        "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
        "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
        "--proc", "/proc", "--dev", "/dev",
        "--perms", "01777", "--size", str(TMPFS_BYTES), "--tmpfs", "/tmp",
    ]
    for path in _read_only_paths():
        argv += _bind_args(path)
    for key, value in SANDBOX_ENV.items():
        argv += ["--setenv", key, value]
    argv += ["--chdir", "/tmp"]
    program = seccomp_filter()
    if program:
        argv += ["--seccomp", SECCOMP_FD]
    if os.geteuid() == 0:
        # Root keeps only the capability to change uid, then setpriv drops to the slot's uid
        # for good: no capabilities, no new privileges, no groups.
        # (CAP_SETPCAP only lets setpriv empty the bounding set.)
        argv += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
                 "--cap-add", "CAP_SETPCAP", "--"]
        argv += [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs",
                 "--inh-caps=-all", "--bounding-set=-all"]
    else:
        argv += ["--unshare-user", "--uid", "65534", "--gid", "65534", "--"]
    argv += _worker_argv(sys.executable, sandboxed=True)
    return Launch(tuple(argv), {}, True, program)


def bare_launch() -> Launch:
    """A worker without isolation, for trusted code (a student's own self-check)."""
    env = {k: v for k, v in SANDBOX_ENV.items() if k != "TMPDIR"}
    env["PATH"] = os.environ.get("PATH", "/usr/bin:/bin")
    return Launch(tuple(_worker_argv(sys.executable, sandboxed=False)), env, False)


# -- cgroups: one memory and process budget for a whole sandbox --------------------------------
CGROUP_PREFIX = "autograder-"
SANDBOX_PIDS = 160  # tasks (threads included) in one sandbox: worker, relay, child and what it starts
MEMORY_SLACK = 512 * 1024 * 1024


def _own_cgroups() -> dict[str, Path]:
    """The folders of this process's own cgroups where it could make a child for `memory` and `pids`.

    cgroup v1 hierarchies (one per controller), or a v2 hierarchy whose subtree already
    delegates both controllers; nothing elsewhere (then rlimits alone hold the limits).
    """
    try:
        own = Path("/proc/self/cgroup").read_text().splitlines()
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return {}
    mounted: dict[str, tuple[str, str]] = {}  # controller (or "" for v2) -> (mount root, mount point)
    for line in mounts:
        left, _, right = line.partition(" - ")
        fields, rest = left.split(), right.split()
        if len(fields) < 5 or len(rest) < 3:
            continue
        if rest[0] == "cgroup":
            for option in rest[2].split(","):
                mounted.setdefault(option, (fields[3], fields[4]))
        elif rest[0] == "cgroup2":
            mounted.setdefault("", (fields[3], fields[4]))
    found: dict[str, Path] = {}
    for line in own:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        names = parts[1].split(",") if parts[1] else [""]
        for name in names:
            if name not in mounted or name not in ("memory", "pids", ""):
                continue
            root, point = mounted[name]
            relative = os.path.relpath(parts[2], root) if parts[2].startswith(root) else None
            if relative is None or relative.startswith(".."):
                continue
            folder = Path(point) / relative
            if name:
                found[name] = folder.resolve()
                continue
            try:  # v2: only where both controllers are already delegated to our children
                delegated = (folder / "cgroup.subtree_control").read_text().split()
            except OSError:
                continue
            if {"memory", "pids"} <= set(delegated):
                found.setdefault("memory", folder.resolve())
                found.setdefault("pids", folder.resolve())
    return found


@dataclass
class Cgroup:
    """The cgroup(s) one sandbox runs in: memory and process count of all its processes together.

    rlimits hold per process; this holds for the sum (a fork swarm of big allocations), and for
    every process of the sandbox whatever its uid. Made by root only, best effort: where the
    machine offers no writable cgroup, `create` returns None and the rlimits still hold.
    """

    folders: dict[str, Path]  # controller -> this sandbox's cgroup folder
    baseline: int = 0  # bytes in use once the worker is warm
    v2: bool = field(default=False)

    @classmethod
    def create(cls, tag: str) -> Cgroup | None:
        if os.geteuid() != 0:
            return None
        parents = _own_cgroups()
        if "memory" not in parents or "pids" not in parents:
            return None
        _remove_stale(set(parents.values()))
        name = f"{CGROUP_PREFIX}{os.getpid()}-{tag}"
        folders: dict[str, Path] = {}
        made = cls(folders, v2=parents["memory"] == parents["pids"])
        try:
            for controller, parent in parents.items():
                if controller not in ("memory", "pids"):
                    continue
                folder = parent / name
                if folder not in folders.values():
                    folder.mkdir(exist_ok=True)
                folders[controller] = folder
            (folders["pids"] / "pids.max").write_text(str(SANDBOX_PIDS))
        except OSError:
            made.remove()
            return None
        return made

    def procs(self) -> list[str]:
        return sorted({str(folder / "cgroup.procs") for folder in self.folders.values()})

    def wrap(self, argv: tuple[str, ...]) -> list[str]:
        """`argv` started inside this cgroup: a shell joins it, then execs the command."""
        # Best effort: should joining fail, the worker still starts (its rlimits hold) and
        # `holds` tells the caller that the cgroup does not.
        script = (
            'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ 2>/dev/null > "$1"; shift; n=$((n-1)); done; '
            'exec "$@"'
        )
        procs = self.procs()
        return ["/bin/sh", "-c", script, "sh", str(len(procs)), *procs, *argv]

    def holds(self, pid: int) -> bool:
        """Is `pid` in every one of this sandbox's cgroups?"""
        try:
            members = [(folder / "cgroup.procs").read_text().split() for folder in self.folders.values()]
        except OSError:
            return False
        return bool(members) and all(str(pid) in procs for procs in members)

    def usage(self) -> int:
        name = "memory.current" if self.v2 else "memory.usage_in_bytes"
        try:
            return int((self.folders["memory"] / name).read_text())
        except (OSError, ValueError, KeyError):
            return 0

    def limit_memory(self, task_bytes: int) -> None:
        """All processes of the sandbox together: the warm worker, the task's limit, /tmp, a margin."""
        limit = self.baseline + task_bytes + TMPFS_BYTES + MEMORY_SLACK
        name = "memory.max" if self.v2 else "memory.limit_in_bytes"
        with contextlib.suppress(OSError, KeyError):
            (self.folders["memory"] / name).write_text(str(limit))

    def remove(self, wait: float = 5.0) -> None:
        deadline = time.monotonic() + wait
        for folder in set(self.folders.values()):
            while True:
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.02)
        self.folders = {}


def _remove_stale(parents: set[Path]) -> None:
    """Remove cgroups left by graders that were killed (empty ones only)."""
    for parent in parents:
        try:
            entries = list(parent.glob(CGROUP_PREFIX + "*"))
        except OSError:
            continue
        for folder in entries:
            owner = folder.name.removeprefix(CGROUP_PREFIX).split("-")[0]
            if owner.isdigit() and not Path(f"/proc/{owner}").exists():
                with contextlib.suppress(OSError):
                    folder.rmdir()


def check_available(uid_base: int) -> None:
    """Refuse to grade when isolation does not work here; the message says how to fix it.

    Runs `id -u` with the worker's sandbox arguments, seccomp filter included, and checks that
    it ran as the worker's unprivileged uid.
    """
    launch = bwrap_launch(0, uid_base)
    cut = dataclasses.replace(launch, argv=launch.argv[: launch.argv.index("-I") - 1] + ("/usr/bin/id", "-u"))
    try:
        with spawnable(cut) as (argv, fds):
            done = subprocess.run(argv, capture_output=True, timeout=30, env=launch.env, pass_fds=fds)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxUnavailable(f"the sandbox could not start ({exc}): {FIX}") from None
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip()[:300]
        raise SandboxUnavailable(f"the sandbox could not start ({detail}): {FIX}")
    want = str(uid_base) if os.geteuid() == 0 else "65534"
    if done.stdout.decode("utf-8", "replace").strip() != want:
        raise SandboxUnavailable(f"the sandbox did not switch to uid {want}: {FIX}")
