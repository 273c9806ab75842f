#!/usr/bin/env python3
"""The setup cache: a finished .venv kept once per set of install inputs, so that a fresh clone's setup
(CI's, a second checkout's) makes its .venv in seconds instead of installing everything again.

    venv_cache.py restore VENV INPUT...   make VENV (which must not exist) from the cache: exit 0,
                                          or exit 1 when the cache holds none for these inputs
    venv_cache.py save VENV INPUT...      keep VENV (a finished install) for these inputs

The key is the SHA-256 of the Python that runs this (its version and real path) and of each INPUT
file's name and bytes (pyproject.toml, constraints.txt, scripts/setup, tests/lms_openedx's
requirements when that step ran): an edit to any of them misses and installs as before. What is
kept is the venv less the kit itself (its editable install points at one clone; setup installs it
again, without its dependencies, after a restore). Files are hard links where the cache and the
venv share a file system (pip replaces files and never writes into them, so a link is as good as a
copy), else copies; the venv's own paths in bin/ and pyvenv.cfg are rewritten to the new place.
Where: $AUTOGRADER_SETUP_CACHE, else ~/.cache/torch-autograder/venvs ("0" turns it off). The two
newest keys are kept. Standard library only: it runs before the venv exists.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

KEEP = 2  # keys kept: the newest, and the one before (a branch that still uses it)
ORIGIN = "venv-cache-origin"  # the file in a kept venv that names the path it was made at


def cache_root() -> Path | None:
    where = os.environ.get("AUTOGRADER_SETUP_CACHE", "")
    if where == "0":
        return None
    if where:
        return Path(where)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "torch-autograder" / "venvs"


def key(inputs: list[str]) -> str:
    digest = hashlib.sha256()
    digest.update(f"{sys.version}\n{os.path.realpath(sys.executable)}\n".encode())
    for name in inputs:
        digest.update(f"{name}\n".encode())
        digest.update(Path(name).read_bytes())
    return digest.hexdigest()[:32]


def _link_or_copy(source: str, dest: str) -> None:
    try:
        os.link(source, dest, follow_symlinks=False)
    except OSError:
        shutil.copy2(source, dest, follow_symlinks=False)


def _clone(source: Path, dest: Path) -> None:
    """`dest`: a tree like `source`, its files linked (or copied), its symlinks kept as they are."""
    shutil.copytree(source, dest, symlinks=True, copy_function=_link_or_copy)


def _is_kit(path: Path) -> bool:
    """A file of the kit's own editable install (it names one clone)."""
    name = path.name
    return name.startswith(("__editable__.torch_autograder", "__editable___torch_autograder",
                            "torch_autograder-"))


def _left_out(venv: Path, folder: Path, name: str) -> bool:
    """Not kept: the kit's own install and command, and setup's stamps (setup makes them anew)."""
    return (_is_kit(folder / name) or (folder == venv / "bin" and name == "autograder")
            or (folder == venv and name.startswith(".")))


def _repoint(venv: Path, old: str) -> None:
    """The venv's own absolute path, `old`, replaced by where it is now in bin/ and pyvenv.cfg (a new
    file each: a link to the cache is never written into)."""
    new = str(venv.resolve())
    for path in [*(venv / "bin").iterdir(), venv / "pyvenv.cfg"]:
        if path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        if old.encode() not in data:
            continue
        mode = path.stat().st_mode
        fresh = path.with_name(path.name + ".venv-cache")
        fresh.write_bytes(data.replace(old.encode(), new.encode()))
        fresh.chmod(mode)
        fresh.replace(path)


def restore(venv: Path, inputs: list[str]) -> bool:
    root = cache_root()
    if root is None or venv.exists():
        return False
    kept = root / key(inputs)
    if not (kept / ORIGIN).is_file():
        return False
    old = (kept / ORIGIN).read_text(encoding="utf-8").strip()
    partial = venv.with_name(venv.name + ".restoring")
    shutil.rmtree(partial, ignore_errors=True)
    _clone(kept, partial)
    (partial / ORIGIN).unlink()
    partial.rename(venv)
    _repoint(venv, old)
    os.utime(kept)  # the newest in use: the last to be pruned
    print(f"setup: .venv made from the setup cache ({kept})")
    return True


def save(venv: Path, inputs: list[str]) -> None:
    root = cache_root()
    if root is None:
        return
    kept = root / key(inputs)
    if (kept / ORIGIN).is_file():
        return
    root.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=".saving-", dir=root))
    try:
        tree = building / "venv"
        shutil.copytree(venv, tree, symlinks=True, copy_function=_link_or_copy,
                        ignore=lambda folder, names: [n for n in names if _left_out(venv, Path(folder), n)])
        (tree / ORIGIN).write_text(str(venv.resolve()) + "\n", encoding="utf-8")
        try:
            tree.rename(kept)  # atomic: a setup running beside this one sees all of it or nothing
        except OSError:
            pass  # another setup kept the same inputs first
    finally:
        shutil.rmtree(building, ignore_errors=True)
    others = sorted((p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")),
                    key=lambda p: p.stat().st_mtime, reverse=True)
    for old in others[KEEP:]:
        shutil.rmtree(old, ignore_errors=True)


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[0] not in ("restore", "save"):
        print(__doc__, file=sys.stderr)
        return 2
    verb, venv, inputs = argv[0], Path(argv[1]), argv[2:]
    if verb == "restore":
        return 0 if restore(venv, inputs) else 1
    save(venv, inputs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
