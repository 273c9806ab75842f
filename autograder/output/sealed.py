"""OUT/out-files.json: the signed list of every file the kit wrote into OUT, each with its sha256.

`grade` (each student's results.json and feedback pages, grades.csv, report.html, JUnit files,
the similarity files), `adjust` and the exports that write into OUT add what they write as they
write it; `verify` holds OUT against the list, so a file deleted, edited or added by hand is
named. The list is signed with the ledger's key (ledger/signing.py) over all its entries: a list
whose signature does not hold is itself a problem, and a writer never signs its entries again
(they are dropped, so every file they named shows up as unlisted). Only the ledger's own files
(gradebook.sqlite and its journals), the list, its lock and drafts a kill left behind are not listed.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from autograder import atomic
from autograder.ledger import signing
from autograder.ledger.audit import Problem
from autograder.ledger.book import GRADEBOOK_FILE

LIST_FILE = "out-files.json"
LOCK_FILE = ".out-files.lock"
TEXT = "autograder-out-files-1"
UNLISTED = frozenset({LIST_FILE, LOCK_FILE, GRADEBOOK_FILE, *(GRADEBOOK_FILE + s for s in ("-wal", "-shm",
                                                                                               "-journal"))})


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _text(files: dict[str, str]) -> bytes:
    return json.dumps([TEXT, sorted(files.items())], ensure_ascii=False).encode("utf-8")


def read_list(out: Path, key: bytes) -> tuple[dict[str, str] | None, str]:
    """(relative path -> sha256, "") when OUT's list holds under `key`; else (None, why not)."""
    path = out / LIST_FILE
    if not path.is_file():
        return None, "missing"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        files = {str(k): str(v) for k, v in dict(data["files"]).items()}
        signature, kid = str(data["signature"]), str(data.get("key_id", ""))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return None, f"unreadable ({exc})"
    if kid and kid != signing.key_id(key):
        return None, f"signed with key id {kid}, not this key ({signing.key_id(key)})"
    if not signing.matches(key, _text(files), signature):
        return None, "its signature does not hold (the list was edited by hand)"
    return files, ""


@contextmanager
def _locked(out: Path) -> Iterator[None]:
    with (out / LOCK_FILE).open("a") as handle:  # two runs on one OUT add to the list one at a time
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _relative(out: Path, path: Path) -> str:
    return (path if path.is_absolute() else out / path).relative_to(out).as_posix()


def record(out: Path, paths: Iterable[Path], key: bytes, *, replace_under: str = "") -> None:
    """Put `paths` (files in OUT) in its list with their hashes now; a path that no longer exists
    leaves it. `replace_under` (a folder of OUT): its entries not among `paths` leave it too."""
    out = out.resolve()
    named = [_in_out(out, p) for p in paths]
    with _locked(out):
        files, _why = read_list(out, key)
        files = dict(files or {})  # a list that does not hold is never signed again: started afresh
        kept = {_relative(out, p) for p in named}
        if replace_under:
            prefix = replace_under.rstrip("/") + "/"
            files = {k: v for k, v in files.items() if not k.startswith(prefix) or k in kept}
        for path in named:
            if path.is_file():
                files[_relative(out, path)] = sha256_of(path)
            else:
                files.pop(_relative(out, path), None)
        data = {"format": 1, "key_id": signing.key_id(key), "signature": signing.sign(key, _text(files)),
                "files": dict(sorted(files.items()))}
        atomic.write_text(out / LIST_FILE, json.dumps(data, indent=0, ensure_ascii=False) + "\n")


def _in_out(out: Path, path: Path) -> Path:
    """`path` as an absolute path in OUT (resolved): a relative one is taken as the writer gave it,
    from the working folder (`--out graded` gives graded/ada/results.json), else from OUT."""
    if path.is_absolute():
        return path.resolve()
    here = path.resolve()
    return here if here.is_relative_to(out) else (out / path).resolve()


def exists(out: Path) -> bool:
    return (out / LIST_FILE).is_file()


def holds(out: Path, key: bytes, names: Iterable[str]) -> bool:
    """True when OUT's list holds (and signs) each of `names` (paths relative to OUT)."""
    files, _ = read_list(out, key)
    return files is not None and all(name in files for name in names)


def files_on_disk(out: Path) -> set[str]:
    found = set()
    for path in out.rglob("*"):
        if path.is_dir() or (path.parent == out and path.name in UNLISTED):
            continue
        if atomic.DRAFT.fullmatch(path.name):
            continue
        found.add(path.relative_to(out).as_posix())
    return found


def problems(out: Path, key: bytes, *, graded: bool) -> list[Problem]:
    """Each file of OUT that is not as the kit wrote it, by name. `graded`: OUT holds grades (so
    a missing list is a problem, not an OUT that was never written)."""
    files, why = read_list(out, key)
    if files is None:
        if why == "missing" and not graded:
            return []
        if why == "missing":
            why = ("missing: OUT has no signed list of its files (written by a kit before it, or deleted): "
                   "run `autograder grade` on it again to write it")
        return [Problem(LIST_FILE, "", why)]
    found: list[Problem] = []
    for name, digest in sorted(files.items()):
        path = out / name
        if path.is_symlink():  # never followed: the kit writes files, not links
            found.append(Problem(name, "", "replaced by a link: the kit wrote a file here"))
        elif not path.is_file():
            found.append(Problem(name, "", "deleted: the kit wrote it (OUT's signed list holds it)"))
        elif sha256_of(path) != digest:
            found.append(Problem(name, "", "edited after the kit wrote it (not the signed list's sha256)"))
    for name in sorted(files_on_disk(out) - set(files)):
        found.append(Problem(name, "", "not written by the kit (added by hand): not in OUT's signed list"))
    return found
