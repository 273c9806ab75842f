"""Files written whole or not at all: a draft beside the file, then a rename (no half file on a full disk)."""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

DRAFT = re.compile(r"\..+\.[0-9]+\.partial")  # a draft's name: what a kill can leave behind, never read
FULL = (errno.ENOSPC, errno.EDQUOT)


def draft_of(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.partial")


def write_bytes(path: Path, data: bytes) -> Path:
    """Write `data` to `path` through a draft: a reader sees the old file or the new one, never half."""
    draft = draft_of(path)
    try:
        with open(draft, "wb") as handle:
            handle.write(data)
        os.replace(draft, path)
    except BaseException:
        draft.unlink(missing_ok=True)  # a full disk (or a stop) leaves nothing half-written
        raise
    return path


def write_text(path: Path, text: str) -> Path:
    return write_bytes(path, text.encode("utf-8"))


def disk_full(exc: BaseException) -> bool:
    """True when `exc` says the disk (or the user's quota) is full, from the OS or from SQLite."""
    if isinstance(exc, OSError) and exc.errno in FULL:
        return True
    text = str(exc).lower()
    return type(exc).__name__ == "OperationalError" and "disk is full" in text
