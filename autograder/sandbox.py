"""How a worker is started: inside bubblewrap namespaces as an unprivileged uid, or bare for trusted code."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .errors import SandboxUnavailable

PACKAGE_DIR = Path(__file__).resolve().parent
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
}
FIX = (
    "install bubblewrap (as root: apt-get install -y bubblewrap, or run `make setup`), "
    "or pass --no-sandbox to grade trusted code only"
)


@dataclass(frozen=True)
class Launch:
    """The command line and environment of one worker."""

    argv: tuple[str, ...]
    env: dict[str, str]
    sandboxed: bool


def _worker_argv(python: str, sandboxed: bool) -> list[str]:
    # -I: ignore PYTHON* variables, user site and the working directory; -B: no .pyc writes.
    boot = (
        "import sys; sys.path.insert(0, %r); from autograder.worker import main; main()"
        % str(PACKAGE_DIR.parent)
    )
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
    for parent in reversed(path.parents):
        if str(parent) in ("/", "/usr") or parent.is_relative_to("/usr"):
            continue
        args += ["--perms", "0755", "--dir", str(parent)]
    return args + ["--ro-bind", str(path), str(path)]


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
    ]  # fmt: skip
    for path in _read_only_paths():
        argv += _bind_args(path)
    for key, value in SANDBOX_ENV.items():
        argv += ["--setenv", key, value]
    argv += ["--chdir", "/tmp"]
    if os.geteuid() == 0:
        # Root keeps only the capability to change uid, then setpriv drops to the slot's uid
        # for good: no capabilities, no new privileges, no groups.
        argv += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--"]
        argv += [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs",
                 "--inh-caps=-all", "--bounding-set=-all"]  # fmt: skip
    else:
        argv += ["--unshare-user", "--uid", "65534", "--gid", "65534", "--"]
    argv += _worker_argv(sys.executable, sandboxed=True)
    return Launch(tuple(argv), {}, True)


def bare_launch() -> Launch:
    """A worker without isolation, for trusted code (a student's own self-check)."""
    env = {k: v for k, v in SANDBOX_ENV.items() if k != "TMPDIR"}
    env["PATH"] = os.environ.get("PATH", "/usr/bin:/bin")
    return Launch(tuple(_worker_argv(sys.executable, sandboxed=False)), env, False)


def check_available(uid_base: int) -> None:
    """Refuse to grade when isolation does not work here; the message says how to fix it."""
    launch = bwrap_launch(0, uid_base)
    probe = list(launch.argv[: launch.argv.index("-I") - 1]) + ["/usr/bin/true"]
    # Run `true` with the same sandbox arguments in place of the worker.
    try:
        done = subprocess.run(probe, capture_output=True, timeout=30, env=launch.env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxUnavailable(f"the sandbox could not start ({exc}): {FIX}") from None
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip()[:300]
        raise SandboxUnavailable(f"the sandbox could not start ({detail}): {FIX}")
