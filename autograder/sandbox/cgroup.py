"""The cgroup(s) of one sandbox (host side): one memory and process budget for all its processes."""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograder.sandbox.launch import TMPFS_BYTES

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
