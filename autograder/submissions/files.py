"""What every submission reader shares: the limits, the result, and which files may run."""

from __future__ import annotations

import importlib.metadata
import os
import stat
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

MAX_FILE_BYTES = 1024 * 1024
MAX_TOTAL_BYTES = 16 * 1024 * 1024
MAX_SHOWN_NAME = 120  # characters of a file name quoted in a note
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


def shown(name: str) -> str:
    """A file name as notes quote it: valid Unicode (undecodable bytes replaced), clipped."""
    text = os.fsencode(name).decode("utf-8", "replace") if isinstance(name, str) else str(name)
    text = "".join(ch if ch.isprintable() else "?" for ch in text)
    return text if len(text) <= MAX_SHOWN_NAME else text[:MAX_SHOWN_NAME] + "..."


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


def accept(
    name: str, data: bytes, given: tuple[str, ...], files: dict[str, bytes], notes: list[str]
) -> None:
    """Add the file to `files` when it may run; otherwise `notes` says why (data files: silently)."""
    if not name.endswith((".py", ".pth")):
        return  # data, notes and notebooks' leftovers are not code to run
    if name in given:
        return  # handing back the given data.py is normal: the kit's own copy is used, silently
    reason = _refusal(name, given)
    if reason:
        notes.append(f"`{shown(name)}` was ignored: {reason}.")
        return
    if len(data) > MAX_FILE_BYTES:
        notes.append(f"`{shown(name)}` was ignored: it is larger than {MAX_FILE_BYTES // 1024} KB.")
        return
    files[name] = data


def read_regular(path: Path, limit: int) -> bytes | None:
    """At most `limit` bytes of a regular file, never through a link (None for anything else)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with open(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return handle.read(limit)
