"""Hidden challenges: per-check random inputs drawn in the grading process from the graders' secret."""

# A structural fact a probe reports (names, keys, shapes, counts, types, flags) can be forged by a
# submission that gets past the worker's integrity check: it follows from public facts. A check
# therefore also gives the student's code inputs nobody can know in advance (random weights loaded
# through the names it reports, random inputs) and compares what comes back with the reference, here.
# The inputs are a function of a secret: the instructor's key in graders/hidden/ (which no student
# has; without one, every file of the graders folder), so a student's own `autograder check` draws
# other inputs than the instructor's grading does; and a grading repeats exactly (same graders,
# same inputs), on any machine holding the same graders (a cluster node, Gradescope).

from __future__ import annotations

import dataclasses
import functools
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.checks import CHALLENGE_KEY

SKIPPED_PARTS = ("__pycache__",)
SKIPPED_SUFFIXES = (".pyc", ".pyo")
_DOMAIN = b"autograder-challenge-v1\0"  # never the grader digest that results.json shows
SEED_FIELD = re.compile(r"(^|_)seeds?$")  # `seed`, `init_seed`, `accuracy_seeds`: what params draw from


def graders_secret(folder: Path) -> bytes:
    """32 bytes from the graders' challenge key (graders/hidden/challenge.key), or, without one (a
    student's checks folder, an assignment that has none yet), from every file of the folder (names
    and contents; caches and dotfiles left out). The key keeps the hidden inputs as they are while
    the graders are edited (a message reworded must not redraw every input)."""
    digest = hashlib.sha256(_DOMAIN)
    root = folder.resolve()
    key = root / CHALLENGE_KEY
    if key.is_file():
        digest.update(b"key\0" + key.read_bytes().strip())
        return digest.digest()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root)
        if any(part in SKIPPED_PARTS or part.startswith(".") for part in rel.parts):
            continue
        if path.suffix in SKIPPED_SUFFIXES:
            continue
        data = path.read_bytes()
        digest.update(f"{rel.as_posix()}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.digest()


@dataclass(frozen=True)
class Challenge:
    """A check's source of hidden inputs: `challenge.rng("sizes", 3, 8, 2)` is a fresh NumPy generator
    fixed by the secret, the check and the labels (the same labels give the same draws, in any order)."""

    secret: bytes
    check: str  # "task.name"

    def seed(self, *labels: Any) -> int:
        text = "\0".join([self.check, *(repr(label) for label in labels)])
        return int.from_bytes(hashlib.sha256(self.secret + text.encode()).digest()[:16], "big")

    def rng(self, *labels: Any) -> Any:
        import numpy as np  # the grading process has it; the engine's basics need not import it

        return np.random.default_rng(self.seed(*labels))

    def shared(self, name: str) -> Challenge:
        """The same secret under `name` instead of the check's id: checks of a task that ask the
        same question (a structure and its run) draw the same inputs, so they can share one answer."""
        return Challenge(self.secret, name)

    def __repr__(self) -> str:  # hypothesis prints a check's arguments: never the secret
        return "challenge"


def _hidden_seed(secret: bytes, where: str) -> int:
    # Small enough that a check may still add offsets (seed + 100 + k) for every generator it uses.
    return int.from_bytes(hashlib.sha256(secret + b"seed\0" + where.encode()).digest()[:8], "big") % 2**31


@functools.lru_cache(maxsize=64)
def hide_seeds(params: Any, secret: bytes, public: tuple[str, ...] = ()) -> Any:
    """`params` (nested frozen dataclasses) with every seed field (`seed`, `*_seed`, `*_seeds`) drawn
    from the secret instead, except the dotted paths in `public` (a lesson's data, or a seed chosen for
    a property it has). The new seeds depend on the secret and the path only: hiding twice is hiding once."""
    def walk(obj: Any, path: str) -> Any:
        if not dataclasses.is_dataclass(obj) or isinstance(obj, type):
            return obj
        changes: dict[str, Any] = {}
        for spec in dataclasses.fields(obj):
            value, where = getattr(obj, spec.name), path + spec.name
            if where in public:
                continue
            if SEED_FIELD.search(spec.name) and type(value) is int:
                changes[spec.name] = _hidden_seed(secret, where)
            elif SEED_FIELD.search(spec.name) and type(value) is tuple and all(type(v) is int for v in value):
                changes[spec.name] = tuple(_hidden_seed(secret, f"{where}[{i}]") for i in range(len(value)))
            elif dataclasses.is_dataclass(value):
                hidden = walk(value, where + ".")
                if hidden is not value:
                    changes[spec.name] = hidden
        return dataclasses.replace(obj, **changes) if changes else obj

    return walk(params, "")

