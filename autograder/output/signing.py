"""Signed scores: an HMAC over what a grade says, with a key kept outside the repository.

Every results.json, grades.csv row and gradebook row carries the signature of its assignment,
student, total, maximum, per-task scores, submission digest and grader digest; `verify` recomputes
it, so a score edited by hand in any of the three places no longer matches.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from collections.abc import Mapping
from pathlib import Path

from autograder.errors import ConfigError

KEY_ENV = "AUTOGRADER_SIGNING_KEY"  # path of the key file
DEFAULT_KEY = Path("~/.config/torch-autograder/signing.key")
SCHEME = "hmac-sha256"


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
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_hex(32) + "\n")
    try:
        key = path.read_bytes().strip()
    except OSError as exc:
        raise ConfigError(f"cannot read the signing key {path}: {exc.strerror or exc}") from None
    if len(key) < 32:
        raise ConfigError(f"{path}: the signing key is shorter than 32 bytes; remove it to make a new one")
    return key


def _points(value: float) -> str:
    return f"{round(float(value), 6):g}"


def signed_text(assignment: str, student: str, total: float, max_score: float,
                tasks: Mapping[str, float], submission: str, graders: str) -> bytes:
    """The one canonical text a grade's signature covers, whichever file it is read back from."""
    parts = [SCHEME, assignment, student, _points(total), _points(max_score),
             *(f"{task}={_points(score)}" for task, score in sorted(tasks.items())), submission, graders]
    return "\0".join(parts).encode("utf-8")


def sign(key: bytes, text: bytes) -> str:
    return f"{SCHEME}:{hmac.new(key, text, hashlib.sha256).hexdigest()}"


def matches(key: bytes, text: bytes, signature: str) -> bool:
    return hmac.compare_digest(sign(key, text), signature or "")
