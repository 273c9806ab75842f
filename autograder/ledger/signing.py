"""Signing: the HMAC key kept outside the repository, its id, and the canonical text of a grade.

Every results.json, grades.csv row and gradebook row carries the signature of its assignment,
student, total, maximum, each check's points, submission digest and grader digest; the ledger's
log (log.py) signs its entries with the same key, each naming the key's id, so `verify` can say
which key a ledger expects when another one is given.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Iterable, Mapping
from pathlib import Path

from autograder.errors import ConfigError
from autograder.grading.results import SubmissionResult

KEY_ENV = "AUTOGRADER_SIGNING_KEY"  # path of the key file
DEFAULT_KEY = Path("~/.config/torch-autograder/signing.key")
SCHEME = "hmac-sha256"
GRADE_TEXT = "autograder-grade-2"  # 1 signed task totals only; 2 every check's points


def key_path(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    return Path(env.get(KEY_ENV) or DEFAULT_KEY).expanduser()


def load_key(kit_root: Path | None = None, *, create: bool = True) -> bytes:
    """The signing key: $AUTOGRADER_SIGNING_KEY (a file path), else ~/.config/torch-autograder/
    signing.key, made on first use (0600). Refused inside the kit, where it could be committed."""
    path = key_path()
    if kit_root is not None and path.resolve().is_relative_to(Path(kit_root).resolve()):
        raise ConfigError(f"{path}: the signing key lies inside the kit's folder, where it could be "
                          f"committed; point {KEY_ENV} at a file outside the repository")
    if not path.is_file():
        if not create:
            raise ConfigError(f"{path}: no signing key here (set {KEY_ENV} to the key that signed "
                              "these grades)")
        path.parent.mkdir(parents=True, exist_ok=True)
        draft = path.with_name(f".{path.name}.{os.getpid()}.new")
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_hex(32) + "\n")
        try:  # whole or not at all; two runs making it at once both use the first one's
            os.link(draft, path)
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    try:
        key = path.read_bytes().strip()
    except OSError as exc:
        raise ConfigError(f"cannot read the signing key {path}: {exc.strerror or exc}") from None
    if len(key) < 32:
        raise ConfigError(f"{path}: the signing key is shorter than 32 bytes; remove it to make a new one")
    return key


def key_id(key: bytes) -> str:
    """The key's public name: 16 hex digits of a hash of it, written into every entry it signs."""
    return hashlib.sha256(b"autograder-key-id\0" + key).hexdigest()[:16]


def key_for(expected: str | None, kit_root: Path | None = None) -> bytes:
    """The key for a ledger signed with key id `expected` (None: nothing signed yet, so a key is
    made on first use). A missing or other key is refused, naming the id the ledger expects:
    grades signed with a new key could never be checked against the ones signed before."""
    path = key_path()
    if expected and not path.is_file():
        raise ConfigError(f"{path}: no signing key here, but this ledger is signed with key id {expected}: "
                          f"set {KEY_ENV}=/path/to/that key (a new key would sign grades that verify "
                          "could never hold against the earlier ones)")
    key = load_key(kit_root, create=expected is None)
    if expected and key_id(key) != expected:
        raise ConfigError(f"{path} is key id {key_id(key)}, but this ledger is signed with key id "
                          f"{expected}: set {KEY_ENV}=/path/to/the key that signed it")
    return key


def _points(value: float) -> str:
    return f"{round(float(value), 6):g}"


def grade_text(assignment: str, student: str, total: float, max_score: float,
               checks: Mapping[str, tuple[float, float]], submission: str, graders: str) -> bytes:
    """The one canonical text a grade's signature covers, whichever file it is read back from:
    the total and maximum, every check's points and maximum (check id -> (score, max)), and the
    key the grade was computed under."""
    parts = [GRADE_TEXT, assignment, student, _points(total), _points(max_score),
             *(f"{check}={_points(score)}/{_points(most)}" for check, (score, most)
               in sorted(checks.items())),
             submission, graders]
    return json.dumps(parts, ensure_ascii=False).encode("utf-8")


def check_points(checks: Iterable[tuple[str, float, float]]) -> dict[str, tuple[float, float]]:
    """check id -> (score, max), in the result's order; a repeated id is told apart by `#n`."""
    points: dict[str, tuple[float, float]] = {}
    for check, score, most in checks:
        name, n = check, 1
        while name in points:
            n += 1
            name = f"{check}#{n}"
        points[name] = (float(score), float(most))
    return points


def result_text(result: SubmissionResult, submission: str, graders: str) -> bytes:
    """`grade_text` of a result (what the batch and the service sign)."""
    checks = check_points((c.check_id, c.score, c.max_score) for t in result.tasks for c in t.checks)
    return grade_text(result.assignment, result.student, result.score, result.max_score, checks,
                      submission, graders)


def sign(key: bytes, text: bytes) -> str:
    return f"{SCHEME}:{hmac.new(key, text, hashlib.sha256).hexdigest()}"


def matches(key: bytes, text: bytes, signature: str) -> bool:
    return hmac.compare_digest(sign(key, text), signature or "")
