"""The files of a stored upload, as the instructor's page shows them: names, sizes, text; read, never run.

An upload is a zip (or .py files the page packed into one) or a notebook. Its files are read from
the stored bytes with bounds a hostile archive cannot get past (how many members, how many bytes
of each are shown, how many a download gives), and shown as text the page escapes; a file that is
not text (a NUL byte in it) is named but not shown. A notebook's files are its cells.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass
from typing import Any

MAX_MEMBERS = 200  # files of one upload listed
MAX_SHOWN = 200 * 1024  # bytes of one file shown in the page
MAX_DOWNLOAD = 16 * 1024 * 1024  # bytes of one file a download gives (a zip bomb stops here)


@dataclass(frozen=True)
class UploadFile:
    """One file of an upload: its name, its size, and its text as the page shows it."""

    index: int
    name: str
    size: int
    text: str = ""
    truncated: bool = False  # only the first MAX_SHOWN bytes are shown
    binary: bool = False  # not text: named, not shown
    unreadable: bool = False  # the archive's member could not be read


def _decoded(data: bytes) -> tuple[str, bool, bool]:
    shown = data[:MAX_SHOWN]
    if b"\0" in shown:
        return "", False, True
    return shown.decode("utf-8", errors="replace"), len(data) > MAX_SHOWN, False


def files_of(kind: str, data: bytes) -> list[UploadFile]:
    """The files of an upload (a zip's members, a notebook's cells), at most MAX_MEMBERS."""
    if kind == "ipynb":
        return [_shown(i, name, text.encode("utf-8")) for i, (name, text) in enumerate(_cells(data))]
    found = []
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = [m for m in archive.infolist() if not m.is_dir()][:MAX_MEMBERS]
            for index, member in enumerate(members):
                try:
                    with archive.open(member) as handle:
                        head = handle.read(MAX_SHOWN + 1)
                except Exception:  # noqa: BLE001  an encrypted, truncated or bad member: named, not shown
                    found.append(UploadFile(index, member.filename, member.file_size, unreadable=True))
                    continue
                text, _, binary = _decoded(head)
                found.append(UploadFile(index, member.filename, member.file_size, text,
                                        member.file_size > MAX_SHOWN or len(head) > MAX_SHOWN, binary))
    except Exception:  # noqa: BLE001  not a zip at all (the door refuses those; an old row may hold one)
        return []
    return found


def _shown(index: int, name: str, data: bytes) -> UploadFile:
    text, truncated, binary = _decoded(data)
    return UploadFile(index, name, len(data), text, truncated, binary)


def _cells(data: bytes) -> list[tuple[str, str]]:
    """A notebook's cells as (name, source): `cell 3 (code)`."""
    try:
        notebook = json.loads(data.decode("utf-8-sig"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return []
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        return []
    found = []
    for number, cell in enumerate(cells[:MAX_MEMBERS], start=1):
        if not isinstance(cell, dict):
            continue
        source: Any = cell.get("source", "")
        text = "".join(str(s) for s in source) if isinstance(source, list) else str(source)
        found.append((f"cell {number} ({cell.get('cell_type', '?')})", text))
    return found


def file_bytes(kind: str, data: bytes, index: int) -> tuple[str, bytes] | None:
    """One file of an upload, whole up to MAX_DOWNLOAD bytes: (its name, its bytes); None if absent."""
    if kind == "ipynb":
        cells = _cells(data)
        return (cells[index][0], cells[index][1].encode("utf-8")) if 0 <= index < len(cells) else None
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = [m for m in archive.infolist() if not m.is_dir()][:MAX_MEMBERS]
            if not 0 <= index < len(members):
                return None
            with archive.open(members[index]) as handle:
                return members[index].filename, handle.read(MAX_DOWNLOAD)
    except Exception:  # noqa: BLE001  whatever a malformed archive makes zipfile raise: nothing to download
        return None


def download_name(name: str, fallback: str) -> str:
    """A name a download may carry: the last part of `name`, printable, without path separators."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    cleaned = "".join(ch if ch.isprintable() and ch not in '<>:"|?*' else "_" for ch in base).strip(" .")
    return cleaned[:120] or fallback
