"""What a grade was computed from: the submission's digest, the graders' digest, the versions.

A grading's key is (student, submission sha256, grader digest). The submission digest covers the
collected files in name order (never the given files, which the kit supplies itself), what the
collection noted, and what else the score depends on (an exam's submission time). The grader
digest covers the assignment's graders, references and given files, its grading.toml table (and
the one it extends), the engine's own messages, the engine's judging code (every module a verdict
depends on: `judging_modules`), the feedback language, and the versions of the kit and of the
libraries that compute and judge: a change to any of them makes a grade stale.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.metadata
import json
import tomllib
from pathlib import Path
from typing import Any

from autograder import __version__
from autograder.config import Assignment, Kit
from autograder.pysource import parse_python
from autograder.submissions.files import Collected

LIBRARIES = ("torch", "numpy", "hypothesis")
SKIPPED_PARTS = ("__pycache__", ".pytest_cache", ".hypothesis")
ENGINE = Path(__file__).resolve().parents[1]  # the autograder package
ENGINE_MESSAGES = ENGINE / "messages"
# Where verdicts are decided: grading one submission (the grader, judge, checks, the sandbox's host
# side and what it collects) and the worker, with everything it runs inside the sandbox (the probes'
# runtime, describers, spies). With what the graders import of the kit (compare's tolerances,
# probe_calls, references), their modules and every module those import are the judging code.
JUDGING_ROOTS = ("autograder.grading.grader", "autograder.sandbox.inside.server")
# How every random number of a grading is chosen (see sandbox/session.call_seed and hypothesis_setup).
SEEDS = {"probe_call": "crc32(task:probe:call number)", "hypothesis": "derandomized, seed from check"}


FILE_DIGEST_CHARS = 16  # of each part's sha256 in the per-file map: enough to tell a change


def _file_parts(root: Path, label: str, shown: str) -> list[tuple[str, list[bytes]]]:
    parts = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root)
        if any(part in SKIPPED_PARTS for part in rel.parts) or path.suffix == ".pyc":
            continue
        parts.append((f"{shown}/{rel.as_posix()}",
                      [f"{label}/{rel.as_posix()}\0{path.stat().st_size}\0".encode(), path.read_bytes()]))
    return parts


def _module_file(name: str, engine: Path) -> Path | None:
    """The file of engine module `name` (`autograder.x.y`), None when it names no module."""
    base = engine.joinpath(*name.split(".")[1:])
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _kit_imports(path: Path) -> set[str]:
    """Every `autograder...` name `path` imports, anywhere in it (lazy imports in functions too);
    `from autograder.a import b` names both `autograder.a` and `autograder.a.b` (b may be a module)."""
    names: set[str] = set()
    for node in ast.walk(parse_python(path.read_bytes(), str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names if a.name.split(".")[0] == "autograder")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and \
                node.module.split(".")[0] == "autograder":
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def judging_modules(sources: list[Path], engine: Path | None = None) -> list[Path]:
    """The engine's modules a verdict depends on: JUDGING_ROOTS, what `sources` (the graders' files)
    import of the kit, and all they import in turn (with their packages' __init__), in path order."""
    engine = engine or ENGINE
    wanted = set(JUDGING_ROOTS).union(*(_kit_imports(p) for p in sources))
    found: set[Path] = set()
    while wanted:
        name = wanted.pop()
        path = _module_file(name, engine)
        if path is None or path in found:
            continue
        found.add(path)
        wanted |= _kit_imports(path)
        wanted |= {".".join(name.split(".")[:i]) for i in range(2, name.count(".") + 1)}  # packages
    return sorted(found)


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


def _shown(path: Path, kit: Kit) -> str:
    """A graders' or solutions' file as the instructor finds it: relative to the kit when inside it."""
    return path.relative_to(kit.root).as_posix() if path.is_relative_to(kit.root) else str(path)


def grader_parts(kit: Kit, assignment: Assignment, lang: str) -> list[tuple[str, list[bytes]]]:
    """Everything but the submission that a grade of `assignment` depends on, part by part: (what the
    instructor calls it, the bytes the grader digest reads of it), in the digest's order."""
    parts: list[tuple[str, list[bytes]]] = [
        (f"grading.toml [assignments.{assignment.id}]",
         [json.dumps(_assignment_table(kit, assignment), sort_keys=True, default=str).encode()]),
        ("the feedback language and the versions of the kit, torch, numpy and hypothesis",
         [json.dumps({"lang": lang, **library_versions()}, sort_keys=True).encode()]),
    ]
    parts += _file_parts(ENGINE / "messages", "engine-messages", "autograder/messages")
    solutions = sorted(assignment.solutions.glob("*.py"))  # the references and the given files
    parts += [(_shown(p, kit), [f"solutions/{p.name}\0".encode(), p.read_bytes()]) for p in solutions]
    parts += _file_parts(assignment.graders, "graders", _shown(assignment.graders, kit))
    graders = [p for p in sorted(assignment.graders.rglob("*.py"))
               if not any(part in SKIPPED_PARTS for part in p.relative_to(assignment.graders).parts)]
    for path in judging_modules([*solutions, *graders]):
        rel = path.relative_to(ENGINE).as_posix()
        parts.append((f"autograder/{rel}", [f"engine/{rel}\0".encode(), path.read_bytes()]))
    return parts


def grader_digest(kit: Kit, assignment: Assignment, lang: str) -> str:
    """The digest of everything but the submission that a grade of `assignment` depends on."""
    return grader_key(kit, assignment, lang)[0]


def grader_key(kit: Kit, assignment: Assignment, lang: str) -> tuple[str, dict[str, str]]:
    """The grader digest, and the digest of each of its parts (what `changed_parts` compares)."""
    digest = hashlib.sha256(b"autograder-graders-v1\0")
    files = {}
    for name, chunks in grader_parts(kit, assignment, lang):
        part = hashlib.sha256()
        for chunk in chunks:
            digest.update(chunk)
            part.update(chunk)
        files[name] = part.hexdigest()[:FILE_DIGEST_CHARS]
    return digest.hexdigest(), files


def changed_parts(before: dict[str, str], now: dict[str, str]) -> list[str]:
    """The parts whose digest differs between two per-file maps (added and removed ones too)."""
    return sorted(name for name in before.keys() | now.keys() if before.get(name) != now.get(name))


def submission_digest(collected: Collected, context: str = "") -> str:
    """sha256 of the collected files in name order, the collection's notes and `context`."""
    digest = hashlib.sha256(b"autograder-submission-v1\0")
    for name in sorted(collected.files):
        data = collected.files[name]
        digest.update(f"{name}\0{len(data)}\0".encode())
        digest.update(data)
    digest.update(json.dumps([list(collected.notes), collected.problem, context]).encode())
    return digest.hexdigest()


GRADER_FILES = "grader_files"  # provenance's per-part digests: the gradebook keeps them, results.json not


def provenance(submission: str, graders: str, files: dict[str, str] | None = None) -> dict[str, Any]:
    """What results.json and the gradebook record about where a grade came from (`files`: the
    digest of each part of the graders, so a grade gone stale can name what changed)."""
    found = {"submission_sha256": submission, "grader_digest": graders, "versions": library_versions(),
             "seeds": SEEDS}
    return {**found, GRADER_FILES: files} if files else found
