"""Read a student's submission (a folder or a zip) into file contents, refusing what must not run."""

from __future__ import annotations

import importlib.metadata
import stat
import sys
import zipfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path, PurePosixPath

MAX_FILE_BYTES = 1024 * 1024
MAX_TOTAL_BYTES = 16 * 1024 * 1024
MAX_ZIP_ENTRIES = 2000
NEVER_RUN = {"conftest.py", "sitecustomize.py", "usercustomize.py", "__init__.py", "__main__.py"}


@dataclass(frozen=True)
class Collected:
    """The Python files of a submission that may run, and why others were left out."""

    files: dict[str, bytes]
    notes: tuple[str, ...]
    problem: str = ""  # set when nothing could be read at all (broken zip, empty folder)


@lru_cache(maxsize=1)
def shadowed_names() -> frozenset[str]:
    """Module names a student file must not take: the standard library and installed packages."""
    names = set(sys.stdlib_module_names) | set(sys.builtin_module_names) | {"autograder"}
    for top_level in importlib.metadata.packages_distributions():
        names.add(top_level)
    return frozenset(n.lower() for n in names)


def _refusal(name: str, given: tuple[str, ...]) -> str:
    stem = name.removesuffix(".py")
    if name in given:
        return "the kit always uses its own copy of this given file"
    if name in NEVER_RUN:
        return "files like this could change how grading runs"
    if not name.endswith(".py"):
        return ".pth files are never run"
    if not stem.isidentifier():
        return "the name is not a valid Python module name"
    if stem.lower() in shadowed_names():
        return f"it has the name of the installed module `{stem}`; rename it"
    return ""


def _accept(name: str, data: bytes, given: tuple[str, ...], files: dict[str, bytes], notes: list[str]) -> None:
    if not name.endswith((".py", ".pth")):
        return  # data, notes and notebooks' leftovers are not code to run
    reason = _refusal(name, given)
    if reason:
        notes.append(f"`{name}` was ignored: {reason}.")
        return
    if len(data) > MAX_FILE_BYTES:
        notes.append(f"`{name}` was ignored: it is larger than {MAX_FILE_BYTES // 1024} KB.")
        return
    files[name] = data


def _from_folder(folder: Path, given: tuple[str, ...]) -> Collected:
    entries = sorted(folder.iterdir())
    py = [e for e in entries if e.name.endswith(".py")]
    dirs = [e for e in entries if e.is_dir() and not e.is_symlink() and not e.name.startswith((".", "__"))]
    if not py and len(dirs) == 1:  # a folder inside the folder, as many zips are made
        return _from_folder(dirs[0], given)
    files: dict[str, bytes] = {}
    notes: list[str] = []
    for entry in entries:
        if entry.is_symlink():
            notes.append(f"`{entry.name}` was ignored: links are not followed.")
            continue
        if not entry.is_file():
            continue
        if entry.stat().st_size > MAX_FILE_BYTES:
            if entry.name.endswith(".py"):
                notes.append(f"`{entry.name}` was ignored: it is larger than {MAX_FILE_BYTES // 1024} KB.")
            continue
        _accept(entry.name, entry.read_bytes(), given, files, notes)
    problem = "" if files else "the folder holds no Python files of the assignment"
    return Collected(files, tuple(notes), problem)


def _from_zip(path: Path, given: tuple[str, ...]) -> Collected:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        return Collected({}, (), f"`{path.name}` is not a readable zip file ({exc}); submit a zip of your folder")
    files: dict[str, bytes] = {}
    notes: list[str] = []
    total = 0
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_ZIP_ENTRIES:
            return Collected({}, (), f"`{path.name}` has {len(infos)} entries; submit only your .py files")
        py_infos = [i for i in infos if not i.is_dir() and i.filename.endswith((".py", ".pth"))]
        for info in sorted(py_infos, key=lambda i: i.filename):
            parts = PurePosixPath(info.filename.replace("\\", "/")).parts
            name = parts[-1] if parts else ""
            if info.filename.startswith("/") or ".." in parts:
                notes.append(f"`{info.filename}` was ignored: paths outside the folder are not allowed.")
                continue
            if stat.S_ISLNK(info.external_attr >> 16):
                notes.append(f"`{info.filename}` was ignored: links are not followed.")
                continue
            if parts[0] in ("__MACOSX",) or len(parts) > 3:
                continue
            if info.file_size > MAX_FILE_BYTES or total + info.file_size > MAX_TOTAL_BYTES:
                notes.append(f"`{info.filename}` was ignored: it unpacks to more than {MAX_FILE_BYTES // 1024} KB.")
                continue
            try:
                with archive.open(info) as handle:
                    data = handle.read(MAX_FILE_BYTES + 1)  # never trust the declared size
            except (zipfile.BadZipFile, OSError, RuntimeError, EOFError) as exc:
                notes.append(f"`{info.filename}` could not be unpacked ({exc}).")
                continue
            if len(data) > MAX_FILE_BYTES:
                notes.append(f"`{info.filename}` was ignored: it unpacks to more than {MAX_FILE_BYTES // 1024} KB.")
                continue
            total += len(data)
            if name in files:
                notes.append(f"`{info.filename}` was ignored: another `{name}` came first.")
                continue
            _accept(name, data, given, files, notes)
    problem = "" if files else f"`{path.name}` holds no Python files of the assignment"
    return Collected(files, tuple(notes), problem)


def collect(path: Path, given: tuple[str, ...] = ()) -> Collected:
    """The files of one submission: a folder of .py files, or a .zip of one."""
    if path.is_symlink():
        return Collected({}, (), f"`{path.name}` is a link; submit the folder or zip itself")
    if path.is_dir():
        return _from_folder(path, given)
    if path.suffix.lower() == ".zip":
        return _from_zip(path, given)
    if path.suffix == ".py":
        files: dict[str, bytes] = {}
        notes: list[str] = []
        _accept(path.name, path.read_bytes()[: MAX_FILE_BYTES + 1], given, files, notes)
        return Collected(files, tuple(notes), "" if files else f"`{path.name}` cannot be graded")
    return Collected({}, (), f"`{path.name}` is neither a folder nor a .zip; submit one of those")


def student_name(path: Path) -> str:
    """The student's id as the submission's name (`ada.zip` and `ada/` are both `ada`)."""
    return path.name.removesuffix(".zip").removesuffix(".ipynb") if path.is_file() else path.name
