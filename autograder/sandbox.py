"""How a worker is started: inside bubblewrap namespaces as an unprivileged uid, or bare for trusted code."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
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
    kit = str(PACKAGE_DIR.parent)
    boot = f"import sys; sys.path.insert(0, {kit!r}); from autograder.worker import main; main()"
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
        # (CAP_SETPCAP only lets setpriv empty the bounding set.)
        argv += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
                 "--cap-add", "CAP_SETPCAP", "--"]  # fmt: skip
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
        script = (
            'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 97; shift; n=$((n-1)); done; '
            'exec "$@"'
        )
        procs = self.procs()
        return ["/bin/sh", "-c", script, "sh", str(len(procs)), *procs, *argv]

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
