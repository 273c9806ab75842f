"""What an upload must be to be accepted: a zip, a notebook or .py files, holding a file of the assignment.

Everything here runs before the upload is stored. An upload that could not be graded at all (an
empty or broken zip, a notebook with no code the grader can use, no file of the assignment's
tasks) is refused with a message naming the student's own file: nothing is queued, and the grade
the student has stays. The file the grader reads is named as the student named it, so its notes do too.
"""

from __future__ import annotations

import io
import json
import tempfile
import zipfile
from pathlib import Path

from werkzeug.datastructures import FileStorage

from autograder.config import Assignment
from autograder.submissions.collect import MAX_ZIP_ENTRIES, collect
from autograder.submissions.files import shown

MAX_SPOOL_NAME = 160  # bytes: far below a file system's 255, with room for the suffix


class UploadProblem(Exception):
    """An upload refused before it is stored; the message is the student's to read."""

    def __init__(self, message: str, status: int = 400, parts: list[list[str]] | None = None):
        super().__init__(message)
        self.status = status
        self.parts = parts  # the message as text and time segments, when it names a moment


def pack_upload(files: list[FileStorage], t: dict[str, str], max_files: int) -> tuple[str, str, bytes]:
    """(file name, kind, bytes) of an upload: one zip, one notebook, or .py files packed into a zip."""
    chosen = [f for f in files if f.filename]
    if not chosen:
        raise UploadProblem(t["empty"])
    if len(chosen) > max_files:
        raise UploadProblem(t["too_many"].format(count=len(chosen), limit=max_files))
    names = [(f.filename or "").replace("\\", "/").rsplit("/", 1)[-1] for f in chosen]
    kinds = []
    for name in names:
        lower = name.lower()
        if lower.endswith(".zip"):
            kinds.append("zip")
        elif lower.endswith(".ipynb"):
            kinds.append("ipynb")
        elif lower.endswith(".py"):
            kinds.append("py")
        else:
            raise UploadProblem(t["wrong_kind"].format(name=shown(name)))
    if len(chosen) == 1 and kinds[0] in ("zip", "ipynb"):
        return names[0], kinds[0], chosen[0].read()
    if set(kinds) != {"py"}:
        raise UploadProblem(t["mixed"])
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, upload in zip(names, chosen, strict=True):
            archive.writestr(name, upload.read())
    label = names[0] if len(names) == 1 else f"{len(names)} files ({', '.join(sorted(names))[:120]})"
    return label, "zip", buffer.getvalue()


def spool_name(filename: str, kind: str) -> str:
    """The name the grader's copy of an upload gets: the student's own, where it is one file of
    that kind (its notes then name it); `files.zip` for .py files the page packed."""
    suffix = f".{kind}"
    name = "".join("_" if ch in "/\\\0" or not ch.isprintable() else ch for ch in filename).strip()
    if not name.lower().endswith(suffix) or name in (suffix, "") or name.startswith("."):
        return f"files{suffix}"
    stem = name[: -len(suffix)]
    while len((stem + suffix).encode("utf-8")) > MAX_SPOOL_NAME:
        stem = stem[:-1]
    return stem + suffix


def refusal(filename: str, kind: str, data: bytes, assignment: Assignment, t: dict[str, str]) -> str | None:
    """Why this upload cannot be graded (in the page's language), or None when it can."""
    with tempfile.TemporaryDirectory(prefix="autograder-door-") as folder:
        path = Path(folder) / spool_name(filename, kind)
        path.write_bytes(data)
        collected = collect(path, assignment.given, assignment)  # what the grader will read, read now
    task_files = [task.file for task in assignment.tasks]
    if set(collected.files) & set(task_files):
        return None
    name = shown(filename)
    if kind == "zip" and not _readable_zip(data):
        return t["broken_zip"].format(name=name)
    entries = _zip_entries(data) if kind == "zip" else 0
    if entries > MAX_ZIP_ENTRIES:  # collect refused it whole: say so, not that it holds no task file
        return t["zip_too_many_entries"].format(name=name, count=entries, limit=MAX_ZIP_ENTRIES)
    if kind == "ipynb" and not _readable_notebook(data):
        return t["broken_notebook"].format(name=name)
    key = "no_notebook_code" if kind == "ipynb" else "no_task_files"
    return t[key].format(name=name, files=", ".join(task_files))


def _zip_entries(data: bytes) -> int:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return len(archive.infolist())


def _readable_zip(data: bytes) -> bool:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            archive.infolist()
    except Exception:  # noqa: BLE001  BadZipFile, and whatever a malformed archive makes zipfile raise
        return False
    return True


def _readable_notebook(data: bytes) -> bool:
    try:
        notebook = json.loads(data.decode("utf-8-sig"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return False
    return isinstance(notebook, dict) and isinstance(notebook.get("cells"), list)
