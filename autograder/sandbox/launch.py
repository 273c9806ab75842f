"""How a worker is started: inside bubblewrap namespaces as an unprivileged uid, or bare for trusted code."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from autograder.errors import SandboxUnavailable
from autograder.sandbox.seccomp import seccomp_filter
from autograder.sandbox.uid_lease import leased_uid

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
    return [*args, "--ro-bind", str(path), str(target)]


def bwrap_launch(slot: int, uid_base: int) -> Launch:
    """A worker in fresh mount, PID, network, IPC and UTS namespaces, as uid `uid_base + slot` (or
    the free one uid_lease gives when another grading process holds it)."""
    bwrap = shutil.which("bwrap")
    setpriv = shutil.which("setpriv")
    if bwrap is None or setpriv is None:
        raise SandboxUnavailable(f"bubblewrap (bwrap) or setpriv not found: {FIX}")
    uid = leased_uid(uid_base + slot)
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


def check_available(uid_base: int) -> None:
    """Refuse to grade when isolation does not work here; the message says how to fix it.

    Runs `id -u` with the worker's sandbox arguments, seccomp filter included, and checks that
    it ran as the worker's unprivileged uid.
    """
    launch = bwrap_launch(0, uid_base)
    cut = dataclasses.replace(launch, argv=(*launch.argv[: launch.argv.index("-I") - 1], "/usr/bin/id", "-u"))
    try:
        with spawnable(cut) as (argv, fds):
            done = subprocess.run(  # noqa: S603  bwrap's argv, built above from our constants; no shell
                argv, capture_output=True, timeout=30, env=launch.env, pass_fds=fds)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxUnavailable(f"the sandbox could not start ({exc}): {FIX}") from None
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip()[:300]
        raise SandboxUnavailable(f"the sandbox could not start ({detail}): {FIX}")
    want = str(leased_uid(uid_base)) if os.geteuid() == 0 else "65534"
    if done.stdout.decode("utf-8", "replace").strip() != want:
        raise SandboxUnavailable(f"the sandbox did not switch to uid {want}: {FIX}")
