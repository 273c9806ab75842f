"""What a grade was computed from: the submission's digest, the graders' digest, the versions.

A grading's key is (student, submission sha256, grader digest). The submission digest covers the
collected files in name order (never the given files, which the kit supplies itself), what the
collection noted, and what else the score depends on (an exam's submission time). The grader
digest covers the assignment's graders, references and given files, its grading.toml table (and
the one it extends), the engine's own messages, the feedback language, and the versions of the
kit and of the libraries that compute and judge: a change to any of them makes a grade stale.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import tomllib
from pathlib import Path
from typing import Any

from autograder import __version__
from autograder.config import Assignment, Kit
from autograder.submissions.collect import Collected

LIBRARIES = ("torch", "numpy", "hypothesis")
SKIPPED_PARTS = ("__pycache__", ".pytest_cache", ".hypothesis")
ENGINE_MESSAGES = Path(__file__).resolve().parents[1] / "messages"
# How every random number of a grading is chosen (see sandbox/session.call_seed and hypothesis_setup).
SEEDS = {"probe_call": "crc32(task:probe:call number)", "hypothesis": "derandomized, seed from check"}


def _digest_files(digest: Any, root: Path, label: str) -> None:
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root)
        if any(part in SKIPPED_PARTS for part in rel.parts) or path.suffix == ".pyc":
            continue
        digest.update(f"{label}/{rel.as_posix()}\0{path.stat().st_size}\0".encode())
        digest.update(path.read_bytes())


def library_versions() -> dict[str, str]:
    versions = {"autograder": __version__}
    for name in LIBRARIES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "absent"
    return versions


def _assignment_table(kit: Kit, assignment: Assignment) -> Any:
    """The assignment's own grading.toml table, with the one it extends (parsed, order kept)."""
    with (kit.root / "grading.toml").open("rb") as handle:
        tables = tomllib.load(handle).get("assignments", {})
    chain: list[tuple[str, Any]] = []
    seen = assignment.id
    while seen and seen in tables and seen not in [c[0] for c in chain]:
        # `counts` picks which grade is current, it changes no grade: it leaves the digest alone
        chain.append((seen, {k: v for k, v in tables[seen].items() if k != "counts"}))
        seen = tables[seen].get("extends", "")
    return chain


def grader_digest(kit: Kit, assignment: Assignment, lang: str) -> str:
    """The digest of everything but the submission that a grade of `assignment` depends on."""
    digest = hashlib.sha256(b"autograder-graders-v1\0")
    digest.update(json.dumps(_assignment_table(kit, assignment), sort_keys=True, default=str).encode())
    digest.update(json.dumps({"lang": lang, **library_versions()}, sort_keys=True).encode())
    _digest_files(digest, ENGINE_MESSAGES, "engine-messages")
    for path in sorted(assignment.solutions.glob("*.py")):  # the references and the given files
        digest.update(f"solutions/{path.name}\0".encode())
        digest.update(path.read_bytes())
    _digest_files(digest, assignment.graders, "graders")
    return digest.hexdigest()


def submission_digest(collected: Collected, context: str = "") -> str:
    """sha256 of the collected files in name order, the collection's notes and `context`."""
    digest = hashlib.sha256(b"autograder-submission-v1\0")
    for name in sorted(collected.files):
        data = collected.files[name]
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)
    digest.update(json.dumps([list(collected.notes), collected.problem, context]).encode())
    return digest.hexdigest()


def provenance(submission: str, graders: str) -> dict[str, Any]:
    """What results.json and the gradebook record about where a grade came from."""
    return {"submission_sha256": submission, "grader_digest": graders, "versions": library_versions(),
            "seeds": SEEDS}
