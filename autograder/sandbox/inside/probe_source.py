"""The probes' source as one text: a graders folder's probe files joined, split again in the worker.

A graders folder has its probes in `probes.py`, or in `probes/` one file per task beside shared
helpers (`probes/_shared.py`); all of them fill one namespace, in the order `probe_files` gives
(autograder/references.py): helpers first, so a task's file can use them. Joined, each file's text
follows a line of its own name behind a NUL, a character no Python source can hold, so the split
is exact and each file compiles under its own name (a traceback names `probes/delivery.py:41`).
"""

from __future__ import annotations

_MARK = "\x00"


def join(files: list[tuple[str, str]]) -> str:
    """(name, text) pairs in order as one text; a lone `probes.py` stays as it is."""
    if len(files) == 1 and files[0][0] == "probes.py":
        return files[0][1]
    return "".join(f"{_MARK}{name}\n{text}" for name, text in files)


def split(source: str) -> list[tuple[str, str]]:
    """The (name, text) pairs `join` made."""
    if not source.startswith(_MARK):
        return [("probes.py", source)]
    parts = []
    for part in source.split(_MARK)[1:]:
        name, _, text = part.partition("\n")
        parts.append((name, text))
    return parts
