"""Read a student's submission (a folder, a zip or a notebook) into files, refusing what must not run."""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path, PurePosixPath

from autograder.config import Assignment
from autograder.submissions.files import (
    MAX_FILE_BYTES,
    MAX_TOTAL_BYTES,
    Collected,
    accept,
    read_regular,
    shown,
)
from autograder.submissions.notebook import collect_notebook

MAX_ZIP_ENTRIES = 2000
MAX_NESTING = 4  # folders inside folders before the files (as zips of a folder are made)


def _from_folder(folder: Path, given: tuple[str, ...], depth: int = 0) -> Collected:
    entries = sorted(folder.iterdir())
    py = [e for e in entries if e.name.endswith(".py")]
    dirs = [e for e in entries if e.is_dir() and not e.is_symlink() and not e.name.startswith((".", "__"))]
    if not py and len(dirs) == 1 and depth < MAX_NESTING:  # a folder inside the folder, as many zips are made
        return _from_folder(dirs[0], given, depth + 1)
    files: dict[str, bytes] = {}
    notes: list[str] = []
    for entry in entries:
        if entry.is_symlink():
            notes.append(f"`{shown(entry.name)}` was ignored: links are not followed.")
            continue
        if not entry.name.endswith((".py", ".pth")) or not entry.is_file():
            continue
        data = read_regular(entry, MAX_FILE_BYTES + 1)
        if data is None:
            continue
        if len(data) > MAX_FILE_BYTES:
            notes.append(f"`{shown(entry.name)}` was ignored: it is larger than {MAX_FILE_BYTES // 1024} KB.")
            continue
        accept(entry.name, data, given, files, notes)
    problem = "" if files else "the folder holds no Python files of the assignment"
    return Collected(files, tuple(notes), problem)


def _from_zip(path: Path, given: tuple[str, ...]) -> Collected:
    try:
        archive = zipfile.ZipFile(path)
    except Exception as exc:  # noqa: BLE001  BadZipFile, OSError, whatever a bad archive makes zipfile raise
        problem = f"`{shown(path.name)}` is not a readable zip file ({shown(str(exc))})"
        return Collected({}, (), problem + "; submit a zip of your folder")
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
            quoted = f"`{shown(info.filename)}`"
            if info.filename.startswith("/") or ".." in parts:
                notes.append(f"{quoted} was ignored: paths outside the folder are not allowed.")
                continue
            if stat.S_ISLNK(info.external_attr >> 16):
                notes.append(f"{quoted} was ignored: links are not followed.")
                continue
            if parts[0] in ("__MACOSX",) or len(parts) > 3:
                continue
            too_big = f"{quoted} was ignored: it unpacks to more than {MAX_FILE_BYTES // 1024} KB."
            if info.file_size > MAX_FILE_BYTES or total + info.file_size > MAX_TOTAL_BYTES:
                notes.append(too_big)
                continue
            try:
                with archive.open(info) as handle:
                    data = handle.read(MAX_FILE_BYTES + 1)  # never trust the declared size
            except Exception as exc:  # noqa: BLE001  corrupt data (zlib.error), encryption, odd compression
                notes.append(f"{quoted} could not be unpacked ({shown(str(exc))}).")
                continue
            if len(data) > MAX_FILE_BYTES or total + len(data) > MAX_TOTAL_BYTES:
                notes.append(too_big)
                continue
            total += len(data)
            if name in files:
                notes.append(f"{quoted} was ignored: another `{shown(name)}` came first.")
                continue
            accept(name, data, given, files, notes)
    problem = "" if files else f"`{shown(path.name)}` holds no Python files of the assignment"
    return Collected(files, tuple(notes), problem)


def collect(path: Path, given: tuple[str, ...] = (), assignment: Assignment | None = None) -> Collected:
    """The files of one submission: a folder of .py files, a .zip of one, or a notebook.

    Never raises for anything in the submission: what cannot be read becomes a note or a problem.
    """
    try:
        if path.suffix.lower() == ".ipynb" and not path.is_dir():
            return collect_notebook(path, given, assignment)
        return _collect(path, given)
    except (OSError, RecursionError, ValueError) as exc:
        return Collected({}, (), f"`{shown(path.name)}` could not be read ({shown(str(exc))})")


def _collect(path: Path, given: tuple[str, ...]) -> Collected:
    if path.is_symlink():
        return Collected({}, (), f"`{shown(path.name)}` is a link; submit the folder or zip itself")
    if path.is_dir():
        return _from_folder(path, given)
    if path.suffix.lower() == ".zip":
        return _from_zip(path, given)
    if path.suffix == ".py":
        files: dict[str, bytes] = {}
        notes: list[str] = []
        accept(path.name, read_regular(path, MAX_FILE_BYTES + 1) or b"", given, files, notes)
        return Collected(files, tuple(notes), "" if files else f"`{shown(path.name)}` cannot be graded")
    return Collected(
        {}, (), f"`{shown(path.name)}` is neither a folder, a .zip nor a notebook; submit one of those"
    )
